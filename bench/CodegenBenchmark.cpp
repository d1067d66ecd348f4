// CodegenBenchmark.cpp: kiln_codegen_bench, kernels emitted from the shipped pipelines on a GPU.
//
// Each kernel is lowered and emitted here, checked against the CPU reference on random inputs,
// then timed with device events (warm-up, the median of the repetitions). The baseline is
// measured in the same run: a device-to-device copy (cuMemcpyDtoDAsync) of a buffer far larger
// than L2, whose bytes read + written per second are what an element-wise kernel can at best
// reach. Figures: GB/s of the bytes each kernel must move, and their ratio to the copy.
// Google Benchmark with manual time: one iteration per benchmark, whose time is the median.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Event.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Stream.h"
#include "kiln/scheduler/DeviceRun.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <cstdio>

namespace {

using namespace kiln;

std::shared_ptr<runtime::Device> gDevice;
double gCopyGBps = 0;

constexpr int kRepetitions = 50;

// The copy baseline: 1 GiB copied on the device, bytes read + written.
void copyBaseline(benchmark::State& state) {
    std::size_t const bytes = std::size_t{1} << 30;
    auto src = runtime::DeviceMemory<std::uint32_t>::allocate(gDevice, bytes / 4);
    auto dst = runtime::DeviceMemory<std::uint32_t>::allocate(gDevice, bytes / 4);
    auto stream = runtime::Stream::create(gDevice);
    auto start = runtime::Event::create(gDevice), stop = runtime::Event::create(gDevice);
    if (!src || !dst || !stream || !start || !stop) {
        state.SkipWithError("cannot allocate the copy buffers");
        return;
    }
    stream.value().fill(src.value(), 0x3f800001u);
    for (int i = 0; i < 3; ++i)
        stream.value().copy(dst.value(), src.value());
    std::vector<double> times;
    for (int i = 0; i < kRepetitions; ++i) {
        stream.value().record(start.value()).copy(dst.value(), src.value()).record(stop.value());
        if (!stream.value().synchronize().ok()) {
            state.SkipWithError("copy failed");
            return;
        }
        times.push_back(stop.value().millisecondsSince(start.value()).value());
    }
    std::sort(times.begin(), times.end());
    double const ms = times[times.size() / 2];
    gCopyGBps = 2.0 * static_cast<double>(bytes) / ms / 1e6;
    for (auto _ : state)
        state.SetIterationTime(ms / 1e3);
    state.counters["GB/s"] = gCopyGBps;
}

void generated(benchmark::State& state, std::string const& commandFile,
               std::string const& pipelineFile, std::map<std::string, std::int64_t> params,
               std::map<std::string, double> sizes) {
    std::string const root = KILN_SOURCE_DIR;
    std::string const target = gDevice->description().target;
    Command const command = loadCommand(root + "/examples/" + commandFile);
    KernelGraph graph = translate(command);
    rules::Pipeline const pipeline = rules::loadPipeline(root + "/rules/" + pipelineFile);
    rules::lower(pipeline, graph, {.parameters = params, .arch = rules::archFacts(target)});
    auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = params});
    auto problem = command.defaults;
    for (auto const& [name, value] : sizes)
        problem[name] = value;
    auto result = scheduler::runOnDevice(gDevice, command, problem, graph, kernel,
                                         {.repetitions = kRepetitions});
    if (!result) {
        state.SkipWithError(result.error().message().c_str());
        return;
    }
    auto const& r = result.value();
    if (r.maxRelativeError > r.tolerance) {
        state.SkipWithError("wrong result");
        return;
    }
    for (auto _ : state)
        state.SetIterationTime(r.medianMs / 1e3);
    double const gbps = r.bytes / r.medianMs / 1e6;
    state.counters["GB/s"] = gbps;
    state.counters["ratio_to_copy"] = gCopyGBps > 0 ? gbps / gCopyGBps : 0;
    state.counters["max_rel_error"] = r.maxRelativeError;
    state.counters["registers"] = r.registers;
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    auto platform = runtime::loadPlatform("cuda");
    if (!platform) {
        std::fprintf(stderr, "kiln_codegen_bench: %s\n", platform.error().message().c_str());
        return 1;
    }
    auto device = platform.value()->device(0);
    if (!device) {
        std::fprintf(stderr, "kiln_codegen_bench: %s\n", device.error().message().c_str());
        return 1;
    }
    gDevice = device.value();
    auto reg = [](std::string const& name, auto fn) {
        benchmark::RegisterBenchmark(name.c_str(), fn)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
    };
    reg("copy/memcpy_dtod_1GiB", copyBaseline);
    double const n = 1 << 26; // 64 Mi elements: 768 MiB of traffic for axpy
    for (auto [vec, wg] : {std::pair{4, 256}, std::pair{8, 256}, std::pair{4, 512}})
        reg("axpy/f32/N=64Mi/VEC=" + std::to_string(vec) + "/WG=" + std::to_string(wg),
            [=](benchmark::State& s) {
                generated(s, "axpy.json", "elementwise.pipeline.json",
                          {{"VEC", vec}, {"WG_SIZE", wg}}, {{"N", n}});
            });
    reg("axpy/f32/N=64Mi+3/VEC=4/WG=256", [=](benchmark::State& s) {
        generated(s, "axpy.json", "elementwise.pipeline.json", {{"VEC", 4}, {"WG_SIZE", 256}},
                  {{"N", n + 3}});
    });
    reg("fused_bias_gelu/f16/8192x8192/VEC=8", [](benchmark::State& s) {
        generated(s, "fused-elementwise.json", "elementwise.pipeline.json", {{"VEC", 8}},
                  {{"M", 8192}, {"N", 8192}});
    });
    reg("row_sum/f32/M=1Mi/N=64", [](benchmark::State& s) {
        generated(s, "row-reduction.json", "reduction.pipeline.json", {},
                  {{"M", 1 << 20}, {"N", 64}});
    });
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
