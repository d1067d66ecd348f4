// GemmBenchmark.cpp: kiln_gemm_bench, Kiln's generated GEMM against cuBLAS in the same run.
//
// cuBLAS (loaded at run time, runtime/include/kiln/runtime/cuda/Blas.h) is the baseline: sgemm
// at 4096 cubed and f16 GemmEx (f32 accumulation, f16 result) at 1024, 4096 and 8192 cubed, on
// the problems of examples/gemm.json (D = 1.5 * A x B^T - 0.5 * D) and examples/gemm-f16.json
// (D = A x B). Kiln's kernels are lowered with rules/gemm.pipeline.json at its defaults,
// emitted, checked against cuBLAS on random inputs (DeviceRun.h) and timed the same way:
// warm-up, then repetitions timed with device events, each after a write of twice the L2 so
// that no repetition finds its operands in L2; the median counts. Figures: TFLOP/s (2 m n k per
// GEMM) and Kiln's ratio to cuBLAS. A kernel the code generator cannot emit yet is reported as
// an errored benchmark with the generator's message. Google Benchmark with manual time: one
// iteration per benchmark, whose time is the median.
//
// A second baseline for the tensor-core kernels: mma.sync's own ceiling on this GPU, a
// hand-written PTX kernel (tests/runtime/ptx/mma_peak.ptx, assembled by ptxas in the tests) that
// issues nothing but independent mma.sync.m16n8k16 (f16 in, f32 accumulation) from registers on
// every multiprocessor (`mma_sync_peak`). Kiln's f16 kernels
// report their share of it next to their ratio to cuBLAS, whose Hopper kernels use wgmma.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Event.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Stream.h"
#include "kiln/runtime/TypedKernel.h"
#include "kiln/runtime/cuda/Blas.h"
#include "kiln/scheduler/DeviceRun.h"
#include "kiln/test/RuntimePtx.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <random>
#include <set>

namespace {

using namespace kiln;
using runtime::cuda::GemmShape;

std::shared_ptr<runtime::Device> gDevice;
std::shared_ptr<runtime::cuda::Blas> gBlas;
std::map<std::string, double> gCublasTflops; // "f16/4096" -> TFLOP/s of cuBLAS in this run
double gMmaPeakTflops = 0;                   // mma_sync_peak in this run

constexpr int kWarmup = 3;
constexpr int kRepetitions = 20;

// `count` elements of T from uniform random values in [-1, 1) (a block of 2^20 repeated).
template <class T>
std::vector<T> randomMatrix(std::size_t count, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<T> block(std::min<std::size_t>(count, 1 << 20));
    for (T& x : block) {
        if constexpr (std::is_same_v<T, float>)
            x = uniform(random);
        else
            x = T::fromFloat(uniform(random));
    }
    std::vector<T> values(count);
    for (std::size_t i = 0; i < count; ++i)
        values[i] = block[i % block.size()];
    return values;
}

template <class T>
runtime::Expected<runtime::DeviceMemory<T>> upload(std::vector<T> const& host) {
    auto memory = runtime::DeviceMemory<T>::allocate(gDevice, host.size());
    if (!memory)
        return memory.error();
    if (auto s = memory.value().write(host); !s.ok())
        return s.error();
    return memory;
}

// cuBLAS on one problem: the median of kRepetitions, each after a write of 2 x L2.
void cublasGemm(benchmark::State& state, bool half, std::int64_t n) {
    if (!gBlas) {
        state.SkipWithError("cuBLAS not loaded");
        return;
    }
    std::size_t const elements = static_cast<std::size_t>(n * n);
    GemmShape const shape{.m = n, .n = n, .k = n, .transB = !half};
    auto stream = runtime::Stream::create(gDevice);
    auto start = runtime::Event::create(gDevice), stop = runtime::Event::create(gDevice);
    auto flush = runtime::DeviceMemory<std::uint32_t>::allocate(
        gDevice, static_cast<std::size_t>(gDevice->description().l2Bytes / 2));
    if (!stream || !start || !stop || !flush) {
        state.SkipWithError("cannot create the stream, events or L2 flush buffer");
        return;
    }
    std::function<runtime::Status()> gemm;
    std::vector<runtime::DeviceMemory<float>> f32;
    std::vector<runtime::DeviceMemory<runtime::Half>> f16;
    for (std::uint32_t seed : {1u, 2u, 3u}) {
        if (half) {
            auto memory = upload(randomMatrix<runtime::Half>(elements, seed));
            if (!memory) {
                state.SkipWithError(memory.error().message().c_str());
                return;
            }
            f16.push_back(std::move(memory).value());
        } else {
            auto memory = upload(randomMatrix<float>(elements, seed));
            if (!memory) {
                state.SkipWithError(memory.error().message().c_str());
                return;
            }
            f32.push_back(std::move(memory).value());
        }
    }
    runtime::Stream& s = stream.value();
    if (half)
        gemm = [&] {
            return gBlas->gemmEx(s, shape, runtime::ScalarType::F16, runtime::ScalarType::F16, 1.0f,
                                 f16[0].pointer().address(), f16[1].pointer().address(), 0.0f,
                                 f16[2].pointer().address());
        };
    else
        gemm = [&] { return gBlas->gemm(s, shape, 1.5f, f32[0], f32[1], -0.5f, f32[2]); };
    for (int i = 0; i < kWarmup; ++i)
        if (auto status = gemm(); !status.ok()) {
            state.SkipWithError(status.message().c_str());
            return;
        }
    std::vector<double> times;
    for (int i = 0; i < kRepetitions; ++i) {
        s.fill(flush.value(), static_cast<std::uint32_t>(i + 1)).record(start.value());
        runtime::Status const status = gemm();
        s.record(stop.value());
        if (auto synced = s.synchronize(); !status.ok() || !synced.ok()) {
            state.SkipWithError((status.ok() ? synced : status).message().c_str());
            return;
        }
        times.push_back(stop.value().millisecondsSince(start.value()).value());
    }
    std::sort(times.begin(), times.end());
    double const ms = times[times.size() / 2];
    double const tflops = shape.flops() / ms / 1e9;
    gCublasTflops[std::string(half ? "f16/" : "f32/") + std::to_string(n)] = tflops;
    for (auto _ : state)
        state.SetIterationTime(ms / 1e3);
    state.counters["TFLOP/s"] = tflops;
    state.counters["min_ms"] = times.front();
}

// mma.sync's ceiling with `blocksPerSm` workgroups of 8 warps on each multiprocessor (2 warps
// per scheduler each), 8 x 4096 mma per warp, timed like cublasGemm (median of kRepetitions).
// The fullest one is the baseline; the others say what fewer warps can issue.
void mmaSyncPeak(benchmark::State& state, std::uint32_t blocksPerSm) {
    using Peak = runtime::TypedKernel<runtime::DevicePointer<float>, std::uint32_t>;
    auto kernel =
        Peak::load(gDevice, runtime::KernelLoaderSpec::ptxInMemory(
                                std::string(runtime::test::ptx::mma_peak), "kiln_mma_peak"));
    std::uint32_t const blocks = blocksPerSm * gDevice->description().multiprocessorCount,
                        threads = 256, iterations = 4096;
    auto out = runtime::DeviceMemory<float>::allocate(gDevice, std::size_t{blocks} * threads);
    auto stream = runtime::Stream::create(gDevice);
    auto start = runtime::Event::create(gDevice), stop = runtime::Event::create(gDevice);
    if (!kernel || !out || !stream || !start || !stop) {
        state.SkipWithError(kernel ? "cannot allocate the output, stream or events"
                                   : kernel.error().message().c_str());
        return;
    }
    runtime::Stream& s = stream.value();
    std::vector<double> times;
    for (int i = 0; i < kWarmup + kRepetitions; ++i) {
        s.record(start.value())
            .launch(kernel.value(), {blocks}, {threads}, 0, out.value().pointer(), iterations)
            .record(stop.value());
        if (auto synced = s.synchronize(); !synced.ok()) {
            state.SkipWithError(synced.message().c_str());
            return;
        }
        if (i >= kWarmup)
            times.push_back(stop.value().millisecondsSince(start.value()).value());
    }
    std::sort(times.begin(), times.end());
    double const ms = times[times.size() / 2];
    double const flops = 2.0 * 16 * 8 * 16 * 8.0 * iterations * (double(blocks) * threads / 32);
    double const tflops = flops / ms / 1e9;
    gMmaPeakTflops = std::max(gMmaPeakTflops, tflops);
    for (auto _ : state)
        state.SetIterationTime(ms / 1e3);
    state.counters["TFLOP/s"] = tflops;
}

/// Runs an emitted GEMM kernel of `command` (lowered as `lowered`) at `problem`, checked against
/// cuBLAS and timed like cublasGemm, into `state`; `key` names the cuBLAS figure to compare with.
void kilnGemm(benchmark::State& state, Command const& command, KernelGraph const& lowered,
              lowering::EmittedKernel const& kernel, std::map<std::string, double> const& problem,
              std::string const& key, double flops) {
    auto result = scheduler::runOnDevice(gDevice, command, problem, lowered, kernel,
                                         {.warmup = kWarmup, .repetitions = kRepetitions});
    if (!result) {
        state.SkipWithError(result.error().message().c_str());
        return;
    }
    auto const& r = result.value();
    if (!(r.maxRelativeError <= r.tolerance)) {
        state.SkipWithError(("wrong result against " + r.reference + ": max relative error " +
                             std::to_string(r.maxRelativeError) + " in " + r.worstTensor +
                             " (tolerance " + std::to_string(r.tolerance) + ")")
                                .c_str());
        return;
    }
    for (auto _ : state)
        state.SetIterationTime(r.medianMs / 1e3);
    double const tflops = flops / r.medianMs / 1e9;
    state.counters["TFLOP/s"] = tflops;
    state.counters["ratio_to_cublas"] =
        gCublasTflops.contains(key) ? tflops / gCublasTflops[key] : 0;
    if (key.starts_with("f16/") && gMmaPeakTflops > 0)
        state.counters["ratio_to_mma_peak"] = tflops / gMmaPeakTflops;
    state.counters["max_rel_error"] = r.maxRelativeError;
    state.counters["registers"] = r.registers;
}

// Lowers and emits `commandFile` with the GEMM pipeline, then kilnGemm; a kernel that cannot be
// emitted yet is an errored benchmark with the reason.
void generated(benchmark::State& state, std::string const& commandFile, bool half, std::int64_t n,
               std::map<std::string, std::int64_t> const& schedule) {
    std::string const root = KILN_SOURCE_DIR;
    std::string const target = gDevice->description().target;
    try {
        Command const command = loadCommand(root + "/examples/" + commandFile);
        KernelGraph graph = translate(command);
        rules::Pipeline const pipeline = rules::loadPipeline(root + "/rules/gemm.pipeline.json");
        auto parameters = pipeline.defaults;
        for (auto const& [name, value] : schedule)
            parameters[name] = value;
        rules::lower(pipeline, graph, {.parameters = parameters, .arch = rules::archFacts(target)});
        auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = parameters});
        auto problem = command.defaults;
        double const size = static_cast<double>(n);
        problem["M"] = problem["N"] = problem["K"] = size;
        double const flops = 2.0 * size * size * size;
        kilnGemm(state, command, graph, kernel, problem,
                 std::string(half ? "f16/" : "f32/") + std::to_string(n), flops);
    } catch (std::exception const& e) {
        state.SkipWithError(e.what());
    }
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    auto platform = runtime::loadPlatform("cuda");
    if (!platform) {
        std::fprintf(stderr, "kiln_gemm_bench: %s\n", platform.error().message().c_str());
        return 1;
    }
    auto device = platform.value()->device(0);
    if (!device) {
        std::fprintf(stderr, "kiln_gemm_bench: %s\n", device.error().message().c_str());
        return 1;
    }
    gDevice = device.value();
    if (auto blas = runtime::cuda::Blas::create(gDevice, runtime::cuda::BlasMode::Fastest);
        blas.ok()) {
        gBlas = blas.value();
        std::printf("cuBLAS %d from %s on %s\n", gBlas->version(), gBlas->library().c_str(),
                    gDevice->description().summary().c_str());
    } else {
        std::fprintf(stderr, "kiln_gemm_bench: %s\n", blas.error().message().c_str());
    }
    auto reg = [](std::string const& name, auto fn) {
        benchmark::RegisterBenchmark(name.c_str(), fn)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
    };
    // Schedules of the GEMM pipeline: the defaults, and 128 x 128 macro tiles of 8 x 8 register
    // tiles with two workgroups per multiprocessor (ptxas then keeps to 128 registers).
    std::map<std::string, std::map<std::string, std::int64_t>> const schedules = {
        {"default", {}},
        {"MT128x128x8_TT8x8_B2",
         {{"MT_M", 128}, {"MT_N", 128}, {"MT_K", 8}, {"TT_M", 8}, {"TT_N", 8}, {"MIN_BLOCKS", 2}}},
    };
    // sgemm at the sizes scripts/gpu-tune-gemm.sh tunes, for ratios measured in the same run.
    for (std::int64_t n : {1024, 2048, 4096})
        reg("cublas/sgemm/" + std::to_string(n),
            [n](benchmark::State& s) { cublasGemm(s, false, n); });
    for (auto const& [name, schedule] : schedules)
        reg("kiln/gemm_f32/4096/" + name,
            [schedule](benchmark::State& s) { generated(s, "gemm.json", false, 4096, schedule); });
    // f16 on the tensor cores (MMA=1): warps of WT_M x MT_N, mma.sync.m16n8k16, STAGES copies
    // of the staged tiles in flight (cp.async).
    auto f16Schedules = schedules;
    auto mma = [](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t wtm,
                  std::int64_t stages) {
        return std::map<std::string, std::int64_t>{{"MMA", 1},  {"MT_M", m},   {"MT_N", n},
                                                   {"MT_K", k}, {"WT_M", wtm}, {"STAGES", stages}};
    };
    f16Schedules["MMA_MT128x128x32_WT32_S3"] = mma(128, 128, 32, 32, 3);
    f16Schedules["MMA_MT128x128x64_WT32_S3"] = mma(128, 128, 64, 32, 3);
    f16Schedules["MMA_MT128x64x32_WT16_S4"] = mma(128, 64, 32, 16, 4);
    // Grids of warps (WT_N > 0): fewer operand fragments read from shared memory per mma, and
    // macro tiles large enough that L2 keeps up (2026-11-24-h100-warp-grid.md).
    auto grid = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t wtm,
                    std::int64_t wtn, std::int64_t stages) {
        auto s = mma(m, n, k, wtm, stages);
        s["WT_N"] = wtn;
        return s;
    };
    f16Schedules["MMA_MT128x128x32_WT64x64_S3"] = grid(128, 128, 32, 64, 64, 3);
    f16Schedules["MMA_MT128x256x64_WT64x64_S3"] = grid(128, 256, 64, 64, 64, 3);
    f16Schedules["MMA_MT128x256x64_WT64x64_S4"] = grid(128, 256, 64, 64, 64, 4);
    f16Schedules["MMA_MT256x128x64_WT64x64_S3"] = grid(256, 128, 64, 64, 64, 3);
    // Warps of 16 rows over K slices of 64: on sm_90a, four such warps are a warpgroup and
    // multiply with wgmma.mma_async (PtxWarpgroups.cpp).
    f16Schedules["WGMMA_MT128x128x64_WT16_S4"] = mma(128, 128, 64, 16, 4);
    f16Schedules["WGMMA_MT128x256x64_WT16_S3"] = mma(128, 256, 64, 16, 3);
    f16Schedules["WGMMA_MT128x256x64_WT16_S4"] = mma(128, 256, 64, 16, 4);
    f16Schedules["WGMMA_MT256x128x64_WT16_S3"] = mma(256, 128, 64, 16, 3);
    f16Schedules["WGMMA_MT256x128x64_WT16_S4"] = mma(256, 128, 64, 16, 4);
    // The same with the K slices loaded by the copy engine (TMA=1; 2026-11-26-h100-tma.md).
    auto tma = [&](std::int64_t m, std::int64_t n, std::int64_t stages) {
        auto s = mma(m, n, 64, 16, stages);
        s["TMA"] = 1;
        return s;
    };
    f16Schedules["WGMMA_TMA_MT128x128x64_WT16_S4"] = tma(128, 128, 4);
    f16Schedules["WGMMA_TMA_MT128x256x64_WT16_S3"] = tma(128, 256, 3);
    f16Schedules["WGMMA_TMA_MT128x256x64_WT16_S4"] = tma(128, 256, 4);
    for (std::uint32_t blocksPerSm : {4u, 2u, 1u})
        reg("mma_sync_peak/warps_per_scheduler:" + std::to_string(2 * blocksPerSm),
            [blocksPerSm](benchmark::State& s) { mmaSyncPeak(s, blocksPerSm); });
    // Every schedule at 4096^3 (the size); at 1024^3 and 8192^3 those that win there.
    // Each pipelined kernel takes the driver seconds to compile, and scripts/gpu-check.sh runs
    // all of this in one call of at most 10 minutes.
    std::map<std::int64_t, std::set<std::string>> const atSize = {
        {1024,
         {"MMA_MT128x64x32_WT16_S4", "MMA_MT128x256x64_WT64x64_S4", "WGMMA_MT128x128x64_WT16_S4",
          "WGMMA_MT128x256x64_WT16_S4", "WGMMA_TMA_MT128x128x64_WT16_S4",
          "WGMMA_TMA_MT128x256x64_WT16_S4"}},
        {8192,
         {"MMA_MT128x256x64_WT64x64_S4", "WGMMA_MT128x256x64_WT16_S3", "WGMMA_MT128x256x64_WT16_S4",
          "WGMMA_MT256x128x64_WT16_S3", "WGMMA_TMA_MT128x256x64_WT16_S4"}}};
    for (std::int64_t n : {1024, 4096, 8192}) {
        std::string const size = std::to_string(n);
        reg("cublas/gemm_f16/" + size, [n](benchmark::State& s) { cublasGemm(s, true, n); });
        for (auto const& [name, schedule] : f16Schedules) {
            if (atSize.contains(n) && !atSize.at(n).contains(name))
                continue;
            reg("kiln/gemm_f16/" + size + "/" + name, [n, schedule](benchmark::State& s) {
                generated(s, "gemm-f16.json", true, n, schedule);
            });
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
