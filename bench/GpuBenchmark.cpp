// GpuBenchmark.cpp: kiln_gpu_bench, the runtime's figures on a real GPU.
//
// 1. Copy bandwidth: cuMemcpyDtoDAsync of a buffer far larger than L2 is the baseline; the
//    hand-written PTX copy kernel (tests/runtime/ptx/copy.ptx) at several grid sizes is reported
//    as a ratio against it. Bytes read + written, device events around each repetition, warm-up
//    first, the median of many repetitions; the copy is checked element for element afterwards.
// 2. Launch overhead: host time per launch of an empty kernel and of a 4-argument kernel with no
//    work, through a raw cuLaunchKernel loop and through Kiln's typed and run-time launches:
//    the enqueue loop alone (1000 launches) and a loop with its synchronize (10000), in rounds
//    that interleave the variants, median over the rounds.
// A separate program from kiln_bench so that the CPU benchmarks need no GPU. Writes JSON with
// --json PATH and prints a table last.
#include "kiln/runtime/Event.h"
#include "kiln/runtime/Module.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Stream.h"
#include "kiln/runtime/TypedKernel.h"
#include "kiln/runtime/cuda/CudaDriver.h"
#include "kiln/test/RuntimePtx.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using namespace kiln::runtime;
using nlohmann::json;

[[noreturn]] void fail(std::string const& what) {
    std::fprintf(stderr, "kiln_gpu_bench: %s\n", what.c_str());
    std::exit(1);
}

template <class T>
T orFail(Expected<T> expected, char const* what) {
    if (!expected.ok())
        fail(std::string(what) + ": " + expected.error().message());
    return std::move(expected).value();
}

void orFail(Status const& status, char const* what) {
    if (!status.ok())
        fail(std::string(what) + ": " + status.message());
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    std::size_t const n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Timing {
    double medianMs = 0;
    double minMs = 0;
    double maxMs = 0;
};

/// Runs `enqueue` warmup + reps times on the stream, timing each repetition with events.
template <class F>
Timing timeOnDevice(Stream& stream, Event& start, Event& stop, int warmup, int reps, F&& enqueue) {
    for (int i = 0; i < warmup; ++i)
        enqueue();
    orFail(stream.synchronize(), "warm-up");
    std::vector<double> times;
    for (int i = 0; i < reps; ++i) {
        stream.record(start);
        enqueue();
        stream.record(stop);
        orFail(stream.synchronize(), "timed repetition");
        orFail(stop.synchronize(), "event");
        times.push_back(orFail(stop.millisecondsSince(start), "elapsed time"));
    }
    auto const [low, high] = std::minmax_element(times.begin(), times.end());
    return {median(times), *low, *high};
}

/// One way of launching, measured in rounds interleaved with the others so that drift in the
/// machine's state falls on all of them alike.
struct LaunchVariant {
    std::string name;
    std::function<void()> launch;
    bool withoutContext = false;      ///< run with no context current on the thread
    std::vector<double> enqueueUs;    ///< host time per launch of the enqueue loop alone
    std::vector<double> throughputUs; ///< host time per launch of a loop and its synchronize
};

/// Host microseconds per launch for `launches` launches; with `includeSync`, the stream's
/// synchronize is inside the timed region, otherwise after it.
template <class F>
double timeLaunches(Stream& stream, int launches, bool includeSync, F const& launchOnce) {
    auto const begin = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
        launchOnce();
    if (includeSync)
        orFail(stream.synchronize(), "launch loop");
    std::chrono::duration<double, std::micro> const spent =
        std::chrono::steady_clock::now() - begin;
    if (!includeSync)
        orFail(stream.synchronize(), "launch loop");
    return spent.count() / launches;
}

/// Fast reproducible words (splitmix64): 512 MB of them in well under a second.
std::vector<std::uint32_t> randomWords(std::size_t count) {
    std::vector<std::uint32_t> words(count);
    std::uint64_t state = 0x9e3779b97f4a7c15u;
    for (std::size_t i = 0; i < count; i += 2) {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        z ^= z >> 31;
        words[i] = static_cast<std::uint32_t>(z);
        if (i + 1 < count)
            words[i + 1] = static_cast<std::uint32_t>(z >> 32);
    }
    return words;
}

} // namespace

int main(int argc, char** argv) {
    std::string jsonPath;
    std::size_t megabytes = 1024;
    int reps = 50;
    for (int i = 1; i < argc; ++i) {
        std::string const arg = argv[i];
        if (arg == "--json" && i + 1 < argc) {
            jsonPath = argv[++i];
        } else if (arg == "--megabytes" && i + 1 < argc) {
            megabytes = std::stoul(argv[++i]);
        } else if (arg == "--reps" && i + 1 < argc) {
            reps = std::stoi(argv[++i]);
        } else {
            fail("usage: kiln_gpu_bench [--json PATH] [--megabytes N] [--reps N]");
        }
    }

    auto platform = orFail(loadPlatform("cuda"), "CUDA platform");
    auto device = orFail(platform->device(0), "device 0");
    DeviceDescription const& d = device->description();
    auto driver = orFail(cuda::CudaDriver::load(), "CUDA driver");
    cuda::CudaFunctions const& api = driver->api();
    Stream stream = orFail(Stream::create(device), "stream");
    Event start = orFail(Event::create(device), "event");
    Event stop = orFail(Event::create(device), "event");
    CUstream rawStream = static_cast<CUstream>(stream.backend().native());

    json report;
    report["device"] = {{"name", d.name},
                        {"target", d.target},
                        {"multiprocessors", d.multiprocessorCount},
                        {"l2_bytes", d.l2Bytes},
                        {"memory_bytes", d.totalMemoryBytes},
                        {"peak_memory_gbps", d.peakMemoryBandwidthGBps()},
                        {"driver", platform->version()}};

    // 1. Copy bandwidth.
    std::size_t const bytes = megabytes << 20;
    std::size_t const words = bytes / 4;
    std::uint64_t const vectors = bytes / 16;
    std::vector<std::uint32_t> const host = randomWords(words);
    auto src = orFail(DeviceMemory<std::uint32_t>::allocate(device, words), "source buffer");
    auto dst = orFail(DeviceMemory<std::uint32_t>::allocate(device, words), "destination buffer");
    stream.copy(src, host);
    orFail(stream.synchronize(), "upload");
    double const movedGB = 2.0 * static_cast<double>(bytes) / 1e9; // read + written
    int const warmup = 5;

    Timing const baseline = timeOnDevice(stream, start, stop, warmup, reps, [&] {
        orFail(driver->check(api.cuMemcpyDtoDAsync(dst.pointer().address(), src.pointer().address(),
                                                   bytes, rawStream),
                             "cuMemcpyDtoDAsync"),
               "baseline copy");
    });
    double const baselineGBps = movedGB / (baseline.medianMs * 1e-3);

    using Copy = TypedKernel<DevicePointer<std::uint32_t const>, DevicePointer<std::uint32_t>,
                             std::uint64_t>;
    Copy const copy =
        orFail(Copy::load(device, KernelLoaderSpec::ptxInMemory(
                                      std::string(kiln::runtime::test::ptx::copy), "kiln_copy")),
               "copy kernel");
    std::uint32_t const block = 256;
    std::vector<std::pair<std::string, std::uint32_t>> grids;
    for (std::uint32_t perSm : {2u, 4u, 8u, 16u, 32u}) {
        grids.emplace_back(std::to_string(perSm) + " blocks/SM", perSm * d.multiprocessorCount);
    }
    grids.emplace_back("1 vector/thread",
                       static_cast<std::uint32_t>((vectors + block - 1) / block));
    json kernels = json::array();
    double bestGBps = 0;
    std::string bestName;
    for (auto const& [label, grid] : grids) {
        stream.fill(dst, 0xdeadbeefu);
        Timing const timing = timeOnDevice(stream, start, stop, warmup, reps, [&] {
            stream.launch(copy, {grid}, {block}, 0, src, dst, vectors);
        });
        std::vector<std::uint32_t> back(words);
        stream.copy(back, dst);
        orFail(stream.synchronize(), "download");
        if (std::memcmp(back.data(), host.data(), bytes) != 0)
            fail("the copy kernel is wrong");
        double const gbps = movedGB / (timing.medianMs * 1e-3);
        kernels.push_back({{"config", label},
                           {"grid", grid},
                           {"block", block},
                           {"median_ms", timing.medianMs},
                           {"min_ms", timing.minMs},
                           {"max_ms", timing.maxMs},
                           {"gbps", gbps},
                           {"ratio_to_memcpy", gbps / baselineGBps}});
        if (gbps > bestGBps) {
            bestGBps = gbps;
            bestName = label;
        }
    }
    report["copy"] = {{"bytes", bytes},
                      {"moved_bytes_per_rep", 2 * bytes},
                      {"reps", reps},
                      {"warmup", warmup},
                      {"baseline",
                       {{"what", "cuMemcpyDtoDAsync"},
                        {"median_ms", baseline.medianMs},
                        {"min_ms", baseline.minMs},
                        {"max_ms", baseline.maxMs},
                        {"gbps", baselineGBps}}},
                      {"kernel", kernels},
                      {"best", bestName},
                      {"best_ratio_to_memcpy", bestGBps / baselineGBps}};

    // 2. Launch overhead.
    using Empty = TypedKernel<>;
    Empty const empty =
        orFail(Empty::load(device, KernelLoaderSpec::ptxInMemory(
                                       std::string(kiln::runtime::test::ptx::empty), "kiln_empty")),
               "empty kernel");
    using Saxpy =
        TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::uint32_t>;
    Saxpy const saxpy =
        orFail(Saxpy::load(device, KernelLoaderSpec::ptxInMemory(
                                       std::string(kiln::runtime::test::ptx::saxpy), "kiln_saxpy")),
               "saxpy kernel");
    auto x = orFail(DeviceMemory<float>::allocate(device, 256), "x");
    auto y = orFail(DeviceMemory<float>::allocate(device, 256), "y");
    CUfunction const emptyFunction = static_cast<CUfunction>(empty.kernel().backend().native());
    CUfunction const saxpyFunction = static_cast<CUfunction>(saxpy.kernel().backend().native());

    // Kiln makes the device's primary context current around each call when the thread has
    // another (or none) current (push and pop); a raw driver user must make it current once.
    // The raw loops and all but one Kiln variant run with it current; one Kiln variant runs
    // without, to show what the push and pop cost.
    CUdevice cuDevice = 0;
    CUcontext primary = nullptr;
    orFail(driver->check(api.cuDeviceGet(&cuDevice, 0), "cuDeviceGet"), "device");
    orFail(
        driver->check(api.cuDevicePrimaryCtxRetain(&primary, cuDevice), "cuDevicePrimaryCtxRetain"),
        "context");
    std::uint64_t xAddress = x.pointer().address();
    std::uint64_t yAddress = y.pointer().address();
    float alpha = 2.0f;
    std::uint32_t n = 0; // no work: the launch is what is measured
    void* rawArguments[] = {&xAddress, &yAddress, &alpha, &n};
    KernelArguments runtimeArguments;
    runtimeArguments.add(DevicePointer<float const>(x)).add(y).add(alpha).add(n);
    auto rawLaunch = [&](CUfunction function, void** arguments) {
        if (api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, rawStream, arguments, nullptr) !=
            CUDA_SUCCESS) {
            fail("raw cuLaunchKernel failed");
        }
    };
    std::vector<LaunchVariant> variants;
    variants.push_back({"empty, raw cuLaunchKernel", [&] { rawLaunch(emptyFunction, nullptr); }});
    variants.push_back({"empty, Kiln TypedKernel<>", [&] { stream.launch(empty, {1}, {32}, 0); }});
    variants.push_back(
        {"empty, Kiln, no current context", [&] { stream.launch(empty, {1}, {32}, 0); }, true});
    variants.push_back(
        {"saxpy (4 args), raw cuLaunchKernel", [&] { rawLaunch(saxpyFunction, rawArguments); }});
    variants.push_back(
        {"saxpy, Kiln TypedKernel", [&] { stream.launch(saxpy, {1}, {32}, 0, x, y, alpha, n); }});
    variants.push_back({"saxpy, Kiln KernelArguments", [&] {
                            stream.launch(saxpy.kernel(), {{1}, {32}, 0}, runtimeArguments);
                        }});

    int const enqueueLaunches = 1000; // few enough that the driver's queue does not fill
    int const throughputLaunches = 10000;
    int const rounds = 15;
    for (int round = -1; round < rounds; ++round) { // round -1 warms up
        for (LaunchVariant& variant : variants) {
            if (!variant.withoutContext) {
                orFail(driver->check(api.cuCtxPushCurrent(primary), "cuCtxPushCurrent"), "push");
            }
            double const enqueue = timeLaunches(stream, enqueueLaunches, false, variant.launch);
            double const throughput =
                timeLaunches(stream, throughputLaunches, true, variant.launch);
            if (!variant.withoutContext) {
                CUcontext popped = nullptr;
                orFail(driver->check(api.cuCtxPopCurrent(&popped), "cuCtxPopCurrent"), "pop");
            }
            if (round >= 0) {
                variant.enqueueUs.push_back(enqueue);
                variant.throughputUs.push_back(throughput);
            }
        }
    }
    orFail(stream.status(), "launches");
    api.cuDevicePrimaryCtxRelease(cuDevice);
    json launchReport = {{"enqueue_launches", enqueueLaunches},
                         {"throughput_launches", throughputLaunches},
                         {"rounds", rounds},
                         {"variants", json::array()}};
    for (LaunchVariant const& variant : variants) {
        launchReport["variants"].push_back({{"name", variant.name},
                                            {"enqueue_us", median(variant.enqueueUs)},
                                            {"throughput_us", median(variant.throughputUs)}});
    }
    report["launch"] = launchReport;

    if (!jsonPath.empty()) {
        std::ofstream out(jsonPath);
        out << report.dump(2) << "\n";
        if (!out)
            fail("cannot write " + jsonPath);
    }

    std::printf("\n%s, %d SMs, %s\n", d.summary().c_str(), d.multiprocessorCount,
                platform->version().c_str());
    std::printf("copy of %zu MB (bytes read + written), median of %d after %d warm-up:\n",
                megabytes, reps, warmup);
    std::printf("  %-40s %9.3f ms %8.1f GB/s  1.000 (baseline)\n", "cuMemcpyDtoDAsync",
                baseline.medianMs, baselineGBps);
    for (json const& k : kernels) {
        std::string const label = "kiln_copy PTX, " + k["config"].get<std::string>() + " (" +
                                  std::to_string(k["grid"].get<std::uint32_t>()) + ")";
        std::printf("  %-40s %9.3f ms %8.1f GB/s  %.3f\n", label.c_str(),
                    k["median_ms"].get<double>(), k["gbps"].get<double>(),
                    k["ratio_to_memcpy"].get<double>());
    }
    std::printf("launch overhead, host us per launch (median of %d interleaved rounds):\n", rounds);
    std::printf("  %-36s %9s %7s %11s %7s\n", "", "enqueue", "ratio", "+ sync", "ratio");
    for (std::size_t i = 0; i < variants.size(); ++i) {
        LaunchVariant const& v = variants[i];
        LaunchVariant const& raw = variants[i < 3 ? 0 : 3];
        double const enqueue = median(v.enqueueUs);
        double const throughput = median(v.throughputUs);
        std::printf("  %-36s %7.3f us %7.3f %9.3f us %7.3f\n", v.name.c_str(), enqueue,
                    enqueue / median(raw.enqueueUs), throughput,
                    throughput / median(raw.throughputUs));
    }
    return 0;
}
