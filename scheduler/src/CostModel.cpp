#include "kiln/scheduler/CostModel.h"

#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/StagedEpilogue.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <vector>

namespace kiln::scheduler {

namespace {

/// Fixed cost of a kernel launch seen from the GPU (a few microseconds on every recent part).
constexpr double kLaunchMicroseconds = 3.0;
/// Bytes of a DRAM sector: the least a scattered access moves.
constexpr double kSectorBytes = 32;
/// L2-to-multiprocessor bandwidth in bytes per clock per multiprocessor, as the tiles' loads
/// see it (arch-db has no such fact). Measured on the H100 at the boost clock the model uses:
/// Kiln's wgmma GEMMs at 4096^3 moved 2.15 GB from L2 in 358 us (128 x 128 tiles) and 1.61 GB
/// in 277 us (128 x 256), 23 and 22 B/clk/SM (2026-11-24-h100-wgmma.md), well below the 40 to
/// 70 that microbenchmarks of a single stream report.
constexpr double kL2BytesPerClockPerMultiprocessor = 23;
/// What a K step of a warp-tile (mma.sync) loop costs beyond its multiply: the barrier and the
/// wait for its first fragments (measured on the H100, 2026-11-24-h100-warp-grid.md).
constexpr double kMmaStepCycles = 400;
/// K slices between the first and the last tile of a wave of concurrent tiles: they start
/// together and go through K at one pace, so L2 needs to hold what they share over that many
/// slices, not over the whole K, for each shared row and column to come from DRAM once.
constexpr double kWaveSkewSlices = 16;
/// A streaming reduction's load waits several times the unloaded latency arch-db gives while
/// DRAM is busy: on the H100 the row sums reached 0.94x the copy with 32 KB in flight a
/// multiprocessor (65536 x 1024 row-major, 16 workgroups of 128 workitems x 4 floats) and 0.75x
/// with 16 KB (8192^2 column-major, 2 floats a workitem), where the unloaded figure asks 8 KB
/// (2026-11-26-h100-floors.md).
constexpr double kLoadedLatencyFactor = 4;
/// The contiguous run of a warp's load that DRAM streams at full rate, and the share of it
/// lost per halving of the run below: on the H100 the column-major row sums whose warps read
/// 128-byte runs of a column moved 0.89x the copy where the row-major ones (1 KB runs) moved
/// 0.94x, those with 32-byte runs 0.73-0.75x (2026-11-26-h100-reduction.md, -floors.md).
constexpr double kFullRateRunBytes = 1024;
constexpr double kLossPerHalving = 0.035;
/// What a pass over rows that an earlier pass of the same kernel read costs, as a share of a
/// read from DRAM (L2 still holds most of them): on the H100, softmax of 8192 x 8192 f16 took
/// 141 us in three passes and 106 us in two (ONLINE=1), 35 us for 128 MB more, about half of
/// the 46 us that reading them from DRAM takes (2026-11-26-h100-floors.md).
constexpr double kRepassShare = 0.5;
/// What each exchange of a cooperative Reduce's partial results between the warps of a row (a
/// barrier pair around shared memory) costs a wave of resident rows, in microseconds: while a
/// row exchanges and then writes, its workgroup has no load in flight. And what asking L2 for
/// the rows of a later workgroup (PREFETCH) saves a wave of held rows, whose first loads then
/// find them there. Fitted with kSpillBytesDoubling to the 5280 layer norm schedules of 8192 x
/// 8192 f16 a sweep measured on the H100 (2026-11-27-h100-twelfth-layernorm.md), with the
/// written-out and held rows below: Kendall's tau 0.415 -> 0.547, the model's pick 1.1% slower
/// than the fastest (was 64.5%), the fastest among its 32 best.
constexpr double kExchangeMicroseconds = 0.1;
constexpr double kPrefetchMicroseconds = 0.02;
/// Bytes of a workitem's spilled registers that double a streaming kernel's time: each spilled
/// value is stored to and loaded from local memory beside the stream (the layer norm above at
/// MIN_BLOCKS=6: 112 bytes spilled, 109.5 us against 88.8 without).
constexpr double kSpillBytesDoubling = 600;

double factOr(arch::Arch const& a, std::string_view name, double fallback) {
    auto v = a.fact(name);
    return v ? double(*v) : fallback;
}

std::int64_t param(std::map<std::string, std::int64_t> const& params, std::string const& name,
                   std::int64_t fallback) {
    auto it = params.find(name);
    return it == params.end() ? fallback : it->second;
}

double ceilDiv(double a, double b) {
    return std::ceil(a / b);
}

// The global-load latency in cycles from the instruction table.
double loadLatency(arch::Arch const& a) {
    for (char const* name : {"ld.global.v4.f32", "global_load_dwordx4", "global_load_b128"})
        if (auto const* i = a.findInstruction(name))
            return i->latency;
    return 500;
}

// Warps a scheduler needs to issue an FMA every slot when each waits on the one before: the
// FMA's latency over its issue cycles (arch-db), 4 on NVIDIA targets.
double fmaWarpsPerScheduler(arch::Arch const& a) {
    for (char const* name : {"fma.rn.f32", "v_fma_f32"})
        if (auto const* i = a.findInstruction(name))
            return std::max(1.0, double(i->latency) / std::max(1.0, double(i->issueCycles)));
    return 1.0;
}

// Blocks of `threads` threads using `registers` each and `shared` bytes that fit on one
// multiprocessor at once, and which resource stops there. 0 when one block does not fit.
struct Occupancy {
    int blocks = 0;
    std::string limitedBy;
    std::string reason;
};

Occupancy occupancy(arch::Arch const& a, int threads, int registers, std::int64_t shared) {
    Occupancy o;
    double const wave = factOr(a, "wave_size", 32);
    if (threads > factOr(a, "max_threads_per_block", 1024)) {
        o.reason = fmt::format("{} threads per block; the target allows {}", threads,
                               factOr(a, "max_threads_per_block", 1024));
        return o;
    }
    if (shared > factOr(a, "shared_bytes", 49152)) {
        o.reason = fmt::format("{} bytes of shared memory per block; the target allows {}", shared,
                               factOr(a, "shared_bytes", 49152));
        return o;
    }
    double const warps = ceilDiv(threads, wave);
    struct Limit {
        double blocks;
        char const* name;
    };
    std::vector<Limit> limits;
    if (a.fact("registers_per_multiprocessor")) {
        double const maxPerThread = factOr(a, "max_registers_per_thread", 255);
        if (registers > maxPerThread) {
            o.reason = fmt::format("{} registers per thread; the target allows {}", registers,
                                   maxPerThread);
            return o;
        }
        // Registers are allocated per warp in units of 256 (8 per thread).
        double const perWarp = ceilDiv(registers, 8) * 8 * wave;
        limits.push_back(
            {std::floor(factOr(a, "registers_per_multiprocessor", 65536) / (perWarp * warps)),
             "registers"});
        limits.push_back(
            {std::floor(factOr(a, "max_warps_per_multiprocessor", 64) / warps), "warps"});
        limits.push_back({factOr(a, "max_blocks_per_multiprocessor", 32), "blocks"});
    } else {
        // AMD: waves are spread over the SIMDs; each SIMD's VGPR file holds vgprs_per_wave
        // registers per lane, allocated in granules.
        double const granule = factOr(a, "vgpr_alloc_granule", 8);
        double const vgprs = ceilDiv(registers, granule) * granule;
        double const file = factOr(a, "vgprs_per_wave", 512);
        if (vgprs > file) {
            o.reason = fmt::format("{} registers per lane; the target allows {}", registers, file);
            return o;
        }
        double const simds = factOr(a, "simds_per_multiprocessor", 4);
        double const perSimd =
            std::min(factOr(a, "max_waves_per_simd", 8), std::floor(file / vgprs));
        limits.push_back({std::floor(perSimd * simds / warps), "registers"});
        limits.push_back({std::floor(factOr(a, "max_waves_per_simd", 8) * simds / warps), "waves"});
    }
    if (shared > 0)
        limits.push_back(
            {std::floor(factOr(a, "shared_bytes_per_multiprocessor", 65536) / double(shared)),
             "shared memory"});
    auto const least =
        std::min_element(limits.begin(), limits.end(),
                         [](Limit const& x, Limit const& y) { return x.blocks < y.blocks; });
    o.blocks = static_cast<int>(std::max(0.0, least->blocks));
    o.limitedBy = least->name;
    if (o.blocks == 0)
        o.reason = fmt::format("one block of {} threads does not fit ({})", threads, least->name);
    return o;
}

bool hasMatrixUnit(arch::Arch const& a) {
    for (char const* c : {"HasMmaSync", "HasMFMA", "HasWMMA"})
        if (a.has(std::string_view(c)))
            return true;
    return false;
}

struct Machine {
    double sms, clockHz, bandwidth, l2, latencyCycles, wave, subPartitions;
    double bytesInFlightNeeded; ///< per multiprocessor, to keep DRAM busy (Little's law)
};

Machine machineOf(arch::Arch const& a) {
    Machine m{};
    m.sms = factOr(a, "multiprocessor_count", 1);
    m.clockHz = factOr(a, "boost_clock_mhz", 1000) * 1e6;
    m.bandwidth = factOr(a, "memory_bandwidth_gbps", 1000) * 1e9;
    m.l2 = factOr(a, "l2_bytes", 4 << 20);
    m.latencyCycles = loadLatency(a);
    m.wave = factOr(a, "wave_size", 32);
    // Four warp schedulers per SM (NVIDIA), one per SIMD (AMD): fewer warps leave issue slots idle.
    m.subPartitions = factOr(a, "simds_per_multiprocessor", 4);
    m.bytesInFlightNeeded = m.bandwidth / m.sms * m.latencyCycles / m.clockHz;
    return m;
}

// Shared-memory wavefronts (bank-conflict passes) of one warp-wide read in which `lanes`
// distinct addresses `bytes` apart each read `bytes` consecutive bytes, in loads of at most 16
// bytes: per load, the most distinct words any one bank serves (lanes reading the same address
// share it). A register tile's row of TT_N floats is such a read.
double wavefronts(double lanes, double bytes, arch::Arch const& a) {
    int const banks = static_cast<int>(factOr(a, "shared_banks", 32));
    int const bankBytes = static_cast<int>(factOr(a, "shared_bank_bytes", 4));
    int const n = static_cast<int>(lanes), perLane = static_cast<int>(bytes);
    int const load = std::min(perLane, 16);
    double total = 0;
    for (int at = 0; at < perLane; at += load) {
        std::vector<int> hits(static_cast<std::size_t>(banks), 0);
        for (int lane = 0; lane < n; ++lane)
            for (int word = 0; word < std::max(load / bankBytes, 1); ++word)
                ++hits[static_cast<std::size_t>(((lane * perLane + at) / bankBytes + word) %
                                                banks)];
        total += *std::max_element(hits.begin(), hits.end());
    }
    return total;
}

CostEstimate infeasible(CostEstimate e, std::string reason) {
    e.feasible = false;
    e.reason = std::move(reason);
    e.microseconds = std::numeric_limits<double>::infinity();
    return e;
}

CostEstimate gemm(Problem const& p, arch::Arch const& a,
                  std::map<std::string, std::int64_t> const& params, ResourceUsage const& used) {
    Machine const mc = machineOf(a);
    double const mtM = double(param(params, "MT_M", 64)), mtN = double(param(params, "MT_N", 64));
    double const mtK = double(param(params, "MT_K", 16));
    double const stages = double(std::max<std::int64_t>(param(params, "STAGES", 1), 0));
    double const inBytes = sizeInBytes(p.inputType);
    // MMA = 1: warps of WT_M x WT_N accumulators (WT_N = 0: the whole MT_N) on the tensor
    // cores (gemm-warp-tiles). Else a TT_M x TT_N register tile per workitem (Kiln's SIMT GEMM)
    // fixes the workgroup size and means FMA code: no matrix instructions.
    bool const warpTiles = param(params, "MMA", 0) == 1;
    double const wtM = double(std::max<std::int64_t>(param(params, "WT_M", 32), 1));
    double const wtN = param(params, "WT_N", 0) > 0 ? double(param(params, "WT_N", 0)) : mtN;
    // Warps of 16 rows over the whole MT_N, four to a warpgroup, over K slices of 64: on a target
    // with wgmma the code generator runs them on warpgroups (PtxWarpgroups.cpp), which read
    // their operands from shared memory themselves and reach the part's matrix peak.
    bool const warpgroups = warpTiles && a.has(std::string_view("HasWGMMA")) && wtM == 16 &&
                            wtN == mtN && std::fmod(mtM, 64) == 0 && std::fmod(mtK, 64) == 0 &&
                            std::fmod(mtN, 64) == 0 && mtN <= 256;
    double const ttM = double(param(params, "TT_M", 0)), ttN = double(param(params, "TT_N", 0));
    bool const registerTiles = !warpTiles && ttM > 0 && ttN > 0;
    // EPILOGUE=1 (StagedEpilogue.h): the result staged in shared memory and stored by the copy
    // engine, where the code generator does it (TMA=1 on warpgroups, a 16-bit result).
    bool const stagedResult = warpgroups && param(params, "EPILOGUE", 0) == 1 &&
                              param(params, "TMA", 0) == 1 &&
                              (p.outputType == DataType::F16 || p.outputType == DataType::BF16) &&
                              std::fmod(mtN, double(lowering::kStagedBlockColumns)) == 0;
    // PINGPONG=1 (lowering/ptx/PtxPingpong.cpp): two consumer warpgroups, each a whole tile of its
    // own, where code generation writes them (a producer warpgroup feeding persistent tiles).
    bool const pingpong = warpgroups && param(params, "PINGPONG", 0) == 1 &&
                          param(params, "TMA", 0) == 1 &&
                          param(params, "WARP_SPECIALIZE", 0) == 1 &&
                          param(params, "PERSISTENT", 0) == 1 && mtM == 64;
    CostEstimate e;
    e.threads = static_cast<int>(
        warpTiles ? ceilDiv(mtM, wtM) * ceilDiv(mtN, wtN) * mc.wave
        : registerTiles
            ? ceilDiv(mtM, ttM) * ceilDiv(mtN, ttN)
            : param(params, "WG_SIZE", std::int64_t(std::clamp(mtM * mtN / 32, mc.wave, 256.0))));
    double const accumulators = std::ceil(mtM * mtN / e.threads);
    if (pingpong)
        e.threads *= 2; // the second consumer's warps, each with a tile's accumulators
    // Accumulators, the A and B values of one K step, and about 32 for addresses and indices.
    double const wanted = accumulators + (registerTiles ? ttM + ttN : 0) + 32;
    // MIN_BLOCKS (.minnctapersm) caps the registers so that that many blocks fit; the rest spill.
    double const minBlocks = double(std::max<std::int64_t>(param(params, "MIN_BLOCKS", 0), 0));
    double const cap = minBlocks > 0
                           ? std::floor(factOr(a, "registers_per_multiprocessor", 65536) /
                                        (minBlocks * ceilDiv(e.threads, mc.wave) * mc.wave) / 8) *
                                 8
                           : std::numeric_limits<double>::infinity();
    double const spilled = used.registers ? 0 : std::max(0.0, wanted - cap);
    e.registers = used.registers.value_or(static_cast<int>(std::min(wanted, cap)));
    // The staging buffers after the pipeline's copies and mbarriers, 1024-byte aligned. On AMD
    // targets EPILOGUE=1 stages the whole tile over the main loop's LDS (StagingLayout.h): the
    // larger of the two, rows padded by 16 bytes.
    double const mainLoop = std::max(stages, 0.0) * (mtM * mtK + mtK * mtN) * inBytes;
    double const wholeTile = a.vendor() == arch::Vendor::Amd && param(params, "EPILOGUE", 0) == 1
                                 ? mtM * (mtN * sizeInBytes(p.outputType) + 16)
                                 : 0;
    e.sharedBytes = used.sharedBytes.value_or(
        static_cast<std::int64_t>(std::max(mainLoop, wholeTile)) +
        (stagedResult ? 1024 + (pingpong ? 2 : 1) *
                                   lowering::stagingBytes(std::int64_t(mtM), std::int64_t(mtN))
                      : 0));
    Occupancy const occ = occupancy(a, e.threads, e.registers, e.sharedBytes);
    e.blocksPerMultiprocessor = occ.blocks;
    e.limitedBy = occ.limitedBy;
    if (occ.blocks == 0)
        return infeasible(e, occ.reason);

    // Thread-block clusters (CLUSTER_M x CLUSTER_N, lowering/Clusters.h), where code generation
    // writes them (TMA=1 on warpgroups): the grid is whole clusters, a workgroup past the edge
    // running a tile of its own like any other.
    bool const clusters = warpgroups && param(params, "TMA", 0) == 1;
    double const clusterM = clusters
                                ? double(std::max<std::int64_t>(param(params, "CLUSTER_M", 1), 1))
                                : 1,
                 clusterN = clusters
                                ? double(std::max<std::int64_t>(param(params, "CLUSTER_N", 1), 1))
                                : 1;
    double const tilesM = ceilDiv(ceilDiv(double(p.m), mtM), clusterM) * clusterM,
                 tilesN = ceilDiv(ceilDiv(double(p.n), mtN), clusterN) * clusterN;
    double const tiles = tilesM * tilesN, kPadded = ceilDiv(double(p.k), mtK) * mtK;
    double const concurrent = mc.sms * occ.blocks;
    e.waves = tiles / concurrent;

    // Compute: padded tiles at the matrix (or FP32) rate, per multiprocessor, with enough warps.
    // Warp tiles multiply with mma.sync: at its rate from the instruction table (flops per
    // instruction over issue cycles, on every tensor core), not the part's matrix peak, which
    // on Hopper only wgmma reaches.
    bool const matrix = (p.inputType == DataType::F16 || p.inputType == DataType::BF16) &&
                        hasMatrixUnit(a) && !registerTiles;
    double peak = matrix ? factOr(a,
                                  p.inputType == DataType::BF16 ? "peak_bf16_matrix_gflops"
                                                                : "peak_fp16_matrix_gflops",
                                  1000) *
                               1e9
                         : factOr(a, "peak_fp32_gflops", 1000) * 1e9;
    if (matrix && warpTiles && !warpgroups) {
        auto const* mma = a.findInstruction(
            p.inputType == DataType::BF16 ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                                          : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
        if (mma && mma->matrix && mma->issueCycles > 0)
            peak = std::min(
                peak, 2.0 * mma->matrix->m * mma->matrix->n * mma->matrix->k / mma->issueCycles *
                          factOr(a, "tensor_cores_per_multiprocessor", 4) * mc.sms * mc.clockHz);
    }
    double const tilesPerSm = ceilDiv(tiles, mc.sms);
    double const activeWarps =
        std::min<double>(occ.blocks, tilesPerSm) * ceilDiv(e.threads, mc.wave);
    // Each scheduler needs warps to issue from: for FMA code, as many as an FMA's latency in
    // issue slots (no instruction-level parallelism credited; on the H100 sweep, 8-warp
    // configurations ran 1.5x slower than 16-warp ones).
    double const perScheduler = matrix ? 1.0 : fmaWarpsPerScheduler(a);
    double const issue = std::min(1.0, activeWarps / (mc.subPartitions * perScheduler));
    double const tileFlops = 2 * mtM * mtN * kPadded;
    // FMA code issues more than FMAs: per K step a workitem also reads its A and B values from
    // shared memory (16 bytes per load), and reloads and stores what spilled.
    double const fmaShare = registerTiles ? ttM * ttN /
                                                (ttM * ttN + ceilDiv(ttM * inBytes, 16) +
                                                 ceilDiv(ttN * inBytes, 16) + 2 * spilled)
                                          : 1.0;
    e.computeUs = tilesPerSm * tileFlops / (peak / mc.sms * issue * fmaShare) * 1e6;

    // Shared memory: each warp of a warpsM x warpsN grid reads its rows of A and columns of B
    // (warp tiles stacked along M, WT_N = 0: every warp reads all of B).
    double const warps = ceilDiv(e.threads, mc.wave);
    double const warpsM = warpgroups  ? mtM / 64
                          : warpTiles ? ceilDiv(mtM, wtM)
                                      : std::max(1.0, std::floor(std::sqrt(warps * mtM / mtN)));
    double const warpsN = warpTiles ? ceilDiv(mtN, wtN) : std::max(1.0, std::floor(warps / warpsM));
    double const sharedPerClock = factOr(a, "shared_banks", 32) * factOr(a, "shared_bank_bytes", 4);
    // With register tiles, a warp's lanes run along N (x fastest): per K index it reads
    // TT_N-element rows of B for each of its columns and TT_M-element columns of A for each
    // of its rows, from K-major tiles, one wavefront per pass a bank conflict forces.
    double const lanesN = std::min(mc.wave, ceilDiv(mtN, std::max(ttN, 1.0)));
    double const lanesM = std::min(ceilDiv(mtM, std::max(ttM, 1.0)), ceilDiv(mc.wave, lanesN));
    double const sharedUs =
        stages <= 0 ? 0
        : registerTiles
            ? tilesPerSm * warps * kPadded *
                  (wavefronts(lanesN, ttN * inBytes, a) + wavefronts(lanesM, ttM * inBytes, a)) /
                  mc.clockHz * 1e6
            : tilesPerSm * kPadded * (mtM * warpsN + mtN * warpsM) * inBytes /
                  (sharedPerClock * mc.clockHz) * 1e6;

    // DRAM: what a wave of concurrent tiles reads, reused through L2 when its footprint over
    // the K slices its tiles are apart fits (kWaveSkewSlices). Asking L2 to hold the wave's
    // whole K extent sent every load of an 8192^3 GEMM to DRAM: 3.9 ms predicted for the 1.55
    // ms the H100 measured, so sweeps at that size never measured a wgmma point.
    double const loads = tiles * (mtM + mtN) * kPadded * inBytes;
    double const waveRows = std::min(tilesM, ceilDiv(std::min(concurrent, tiles), tilesN));
    double const waveCols = std::min(tilesN, std::min(concurrent, tiles));
    double const waveBytes = (waveRows * mtM + waveCols * mtN) * kPadded * inBytes;
    double const skewBytes =
        (waveRows * mtM + waveCols * mtN) * inBytes * std::min(kPadded, kWaveSkewSlices * mtK);
    double const outBytes = double(p.m) * double(p.n) * sizeInBytes(p.outputType);
    e.dramBytes = skewBytes <= mc.l2
                      ? std::max(p.uniqueBytes(), ceilDiv(tiles, concurrent) * waveBytes + outBytes)
                      : loads + outBytes;
    // L2 to the multiprocessors. In a cluster the shared operand's slices leave L2 once for
    // both workgroups (TMA multicast), but the H100 did not run faster for it: at 4096^3 the
    // staged 128 x 256 kernels took 180.8 us without clusters and 181.8-187.1 us with them, at
    // 8192^3 1.521 ms and 1.496-1.676 ms (bench/results/2026-11-26-h100-clusters-floors.md).
    // Halving the shared operand's share here ranked every cluster point first, and sweeps
    // spent 40 of 43 candidates on them; clusters are counted as their twins without.
    double const l2Loads = tiles * (mtM + mtN) * kPadded * inBytes;
    double const l2Us = l2Loads / (mc.sms * kL2BytesPerClockPerMultiprocessor * mc.clockHz) * 1e6;
    double const inFlight = std::min<double>(occ.blocks, tilesPerSm) * std::max(stages, 1.0) *
                            (mtM + mtN) * mtK * inBytes;
    e.latencyHiding = std::min(1.0, inFlight / mc.bytesInFlightNeeded);
    e.memoryUs = e.dramBytes / (mc.bandwidth * e.latencyHiding) * 1e6;

    // One stage serialises a block's loads and its math: each K step waits a memory latency
    // before it computes, and only the other blocks on the multiprocessor fill that wait. The
    // multiprocessor is busy for the share of time some resident block computes.
    // Warp tiles read their fragments (ldmatrix) from the warps that issue the mma.sync, and the
    // two overlap only in part: on the H100, the 4096^3 winner kept the tensor pipe 55% busy with
    // shared memory 41% busy. Half the shared-memory time adds to the multiply's, so that of
    // two tiles equal in everything else, the one that reads fewer fragments per mma ranks first
    // (2026-11-24-h100-warp-grid.md: 64 x 64 warp tiles ran 12% faster than 32 x 128).
    // Each K step also waits at its barrier and for its first fragments: measured 128 x 256
    // tiles ran 54 us slower at 4096^3 with MT_K = 32 than with 64, about 400 cycles a step.
    double const steps = tilesPerSm * kPadded / mtK;
    // Warpgroups read their operands asynchronously and leave a group in flight across the
    // barrier: neither adds to the multiply's time.
    double const busiest = warpTiles && !warpgroups ? e.computeUs + sharedUs / 2 +
                                                          steps * kMmaStepCycles / mc.clockHz * 1e6
                                                    : e.computeUs;
    // A pipelined loop on warpgroups issues each tile's copies `lead` K steps before it reads
    // them (STAGES - 2 with a wgmma group in flight, PtxPipeline.cpp); they arrive a latency
    // plus the tile's bytes at the L2's rate later. On the H100, 128 x 256 tiles ran 1.5x slower
    // with 3 stages (lead 1) than with 4 (2026-11-24-h100-wgmma.md).
    double arrivalUs = 0;
    if (warpgroups && stages >= 2) {
        double const lead = stages >= 3 ? stages - 2 : 1;
        double const tileBytes =
            std::min<double>(occ.blocks, tilesPerSm) * (mtM + mtN) * mtK * inBytes;
        arrivalUs = steps * (mc.latencyCycles + tileBytes / kL2BytesPerClockPerMultiprocessor) /
                    lead / mc.clockHz * 1e6;
    }
    // Each tile's pipeline fills before its first multiply (a load latency and one K slice at
    // the L2's rate) and ends in its epilogue (the tile's result stored, at that rate too). Where
    // the model counts the pipeline's arrival (warpgroups), these add to each tile's time, shared
    // among the workgroups resident on a multiprocessor (another's multiply fills the gap).
    // PERSISTENT=1 with a producer warpgroup (WARP_SPECIALIZE=1) loads the next tile's slices
    // during this tile's epilogue (PtxPersistent.cpp): a tile waits for the longer of the two,
    // not for both. Without a producer the next tile's loads are issued after the epilogue and a
    // barrier, as a new workgroup's would be: no difference the model can see (what persistence
    // saves there, the start of a workgroup and its mbarriers' set-up, is not in arch-db).
    // A staged result (EPILOGUE=1) leaves the consumers at shared memory's rate instead: the
    // copy engine stores it while the next tile runs, and only a workgroup that ends with the
    // tile waits until its last block's buffer has been read, a block at the L2's rate. Either
    // way the result's bytes pass through L2, which l2Us (fitted to the loads) counts for
    // neither; the barriers between blocks are not counted (not measured yet).
    if (warpgroups && stages >= 2) {
        double const resident = std::min<double>(occ.blocks, tilesPerSm);
        double const l2PerUs = kL2BytesPerClockPerMultiprocessor * mc.clockHz / 1e6;
        double const fillUs =
            mc.latencyCycles / mc.clockHz * 1e6 + (mtM + mtN) * mtK * inBytes / l2PerUs;
        double const tileOut = mtM * mtN * sizeInBytes(p.outputType);
        double const epilogueUs = !stagedResult
                                      ? tileOut / l2PerUs
                                      : tileOut / (sharedPerClock * mc.clockHz / 1e6) +
                                            (param(params, "PERSISTENT", 0) == 1
                                                 ? 0
                                                 : mtM * double(lowering::kStagedBlockColumns) *
                                                       sizeInBytes(p.outputType) / l2PerUs);
        bool const overlapped = param(params, "PERSISTENT", 0) == 1 &&
                                param(params, "WARP_SPECIALIZE", 0) == 1 &&
                                param(params, "TMA", 0) == 1;
        e.tilesUs = tilesPerSm / resident *
                    (overlapped ? std::max(fillUs, epilogueUs) : fillUs + epilogueUs);
        // PINGPONG=1: a tile's fill and epilogue run while the other consumer multiplies (its
        // tile's K loop, at the pace the slowest resource below sets); what shows is what
        // exceeds that K loop, and the workgroup's last epilogue, which nothing follows.
        if (pingpong) {
            double const mainLoopUs =
                std::max({busiest, e.memoryUs, sharedUs, l2Us, arrivalUs}) / tilesPerSm;
            e.tilesUs =
                tilesPerSm / resident * std::max(0.0, std::max(fillUs, epilogueUs) - mainLoopUs) +
                epilogueUs;
        }
    }
    double const slowest = std::max({busiest, e.memoryUs, sharedUs, l2Us, arrivalUs});
    double const stepUs = slowest / steps, latencyUs = mc.latencyCycles / mc.clockHz * 1e6;
    double const busy = stages >= 2 ? 1.0
                                    : std::min(1.0, std::min<double>(occ.blocks, tilesPerSm) *
                                                        stepUs / (latencyUs + stepUs));
    e.microseconds = slowest / busy + e.tilesUs + kLaunchMicroseconds;
    return e;
}

// Whether a reduction's rows are contiguous in memory (row-major: the reduced axis, the last,
// has stride 1): read off its largest tensor, the one reduced.
bool reducedAxisContiguous(Problem const& p) {
    ProblemTensor const* largest = nullptr;
    double most = -1;
    for (auto const& t : p.tensors) {
        double n = 1;
        for (auto x : t.shape)
            n *= double(x);
        if (n > most)
            most = n, largest = &t;
    }
    return !largest || largest->strides.empty() || largest->strides.back() == 1;
}

// Element-wise and row reductions: memory-bound streams.
CostEstimate stream(Problem const& p, arch::Arch const& a,
                    std::map<std::string, std::int64_t> const& params, ResourceUsage const& used) {
    Machine const mc = machineOf(a);
    CostEstimate e;
    bool const reduction = p.kind == ProblemKind::Reduction;
    // COOP=1 (rows-to-workgroups): LANES workitems share each row, ROWS rows per workgroup,
    // UNROLL reads of VEC consecutive elements a step, each row split over SPLIT workgroups;
    // otherwise one row per workitem.
    bool const cooperative = reduction && param(params, "COOP", 0) == 1;
    double const split =
        cooperative ? double(std::max<std::int64_t>(param(params, "SPLIT", 1), 1)) : 1;
    // ROW_VEC rows a workitem: as many values in flight, a workitem for ROW_VEC rows.
    double const rowVec =
        cooperative ? double(std::max<std::int64_t>(param(params, "ROW_VEC", 1), 1)) : 1;
    double const lanes =
        cooperative ? double(std::max<std::int64_t>(param(params, "LANES", 256), 1)) : 1;
    double const vec =
        (reduction && !cooperative ? 1
                                   : double(std::max<std::int64_t>(param(params, "VEC", 4), 1))) *
        (cooperative ? double(std::max<std::int64_t>(param(params, "UNROLL", 1), 1)) : 1);
    e.threads = static_cast<int>(reduction ? param(params, "ROWS", 64) * std::int64_t(lanes)
                                           : param(params, "WG_SIZE", 256));
    e.registers = used.registers.value_or(static_cast<int>(16 + 4 * vec * rowVec));
    e.sharedBytes = used.sharedBytes.value_or(0);
    Occupancy const occ = occupancy(a, e.threads, e.registers, e.sharedBytes);
    e.blocksPerMultiprocessor = occ.blocks;
    e.limitedBy = occ.limitedBy;
    if (occ.blocks == 0)
        return infeasible(e, occ.reason);

    double const items =
        reduction ? ceilDiv(double(p.m), rowVec) * lanes * split : ceilDiv(double(p.n), vec);
    double const blocks = ceilDiv(items, e.threads);
    e.waves = blocks / (mc.sms * occ.blocks);
    double const blocksPerSm = std::min<double>(occ.blocks, ceilDiv(blocks, mc.sms));
    double const bytesPerValue =
        p.readBytes / std::max(1.0, reduction ? double(p.m * p.n) : double(p.n));
    // One row per workitem: the lanes of a warp read addresses a row apart, so every load moves
    // a whole sector for one value. Workitems that share a row read consecutive elements.
    double const accessBytes =
        reduction && !cooperative ? std::max(kSectorBytes, bytesPerValue) : bytesPerValue;
    e.dramBytes = (reduction ? double(p.m * p.n) * accessBytes : p.readBytes) + p.writtenBytes;
    // A normalization goes over its rows once per Reduce, and once more to write a result of
    // the input's shape: softmax 3 (2 with ONLINE=1 or 2, which fuse its max and its sum), layer
    // norm 3 (2 with ONLINE=1 or 2, which fuse its mean and variance), RMS norm 2, a row sum 1.
    double passes = 1, reduces = 0;
    if (reduction) {
        reduces =
            double(std::count_if(p.operations.begin(), p.operations.end(),
                                 [](std::string const& op) { return op.starts_with("Reduce "); }));
        bool const writesRows =
            p.writtenBytes >= double(p.m * p.n) * sizeInBytes(p.outputType) && p.n > 1;
        passes = std::max(1.0, reduces + (writesRows ? 1 : 0));
        if (param(params, "ONLINE", 0) >= 1 && passes >= 3)
            passes -= 1;
    }
    // A row (a part of one, split) shorter than a step of its workitems (LANES x VEC elements)
    // leaves some of them without an element to read.
    double const step = lanes * vec;
    double const part = ceilDiv(double(p.n), split);
    double const chunks = ceilDiv(part, step);
    double const filled = cooperative ? double(p.n) / (split * chunks * step) : 1.0;
    // In a kernel made for its sizes, a row of at most kMaxWrittenOutChunks chunks is written
    // out, each chunk's loads issued before the arithmetic of the one before (all in flight at
    // once), and held in registers for the later passes unless HOLD=0: X read once.
    bool const writtenOut =
        cooperative && used.madeForSizes && chunks <= double(lowering::kMaxWrittenOutChunks);
    bool const held = writtenOut && param(params, "HOLD", 1) != 0;
    double const repassBytes =
        held ? 0 : (passes - 1) * double(p.m * p.n) * bytesPerValue * kRepassShare;
    double const inFlight =
        blocksPerSm * e.threads * vec * rowVec * accessBytes * filled * (writtenOut ? chunks : 1);
    e.latencyHiding = std::min(
        1.0, inFlight / (mc.bytesInFlightNeeded * (cooperative ? kLoadedLatencyFactor : 1)));
    // Only the multiprocessors that have a block stream.
    double const busy = std::min(1.0, blocks / mc.sms);
    // The contiguous run of a warp's load: along a row where the reduced axis is contiguous
    // (row-major: LANES consecutive workitems, VEC elements each), along a column otherwise
    // (consecutive workitems own consecutive rows, ROW_VEC each).
    double runs = 1;
    if (cooperative) {
        double const warp = mc.wave;
        double const rows = double(std::max<std::int64_t>(param(params, "ROWS", 1), 1));
        double const vecOnly = double(std::max<std::int64_t>(param(params, "VEC", 4), 1));
        double const run = reducedAxisContiguous(p)
                               ? std::min(lanes, warp) * vecOnly * bytesPerValue
                               : std::min(rows, warp) * rowVec * bytesPerValue;
        runs =
            std::max(0.5, 1 - kLossPerHalving * std::max(0.0, std::log2(kFullRateRunBytes / run)));
    }
    e.memoryUs = (e.dramBytes + repassBytes) / (mc.bandwidth * e.latencyHiding * busy * runs) * 1e6;
    // Rows shared by more workitems than a warp exchange their partial results through shared
    // memory once per Reduce (once in all with ONLINE=2, which merges a pair of statistics), a
    // wait each wave of resident rows that the other workgroups hide only in part.
    if (cooperative && lanes > mc.wave) {
        double const rowsResident =
            std::max(1.0, mc.sms * blocksPerSm *
                              double(std::max<std::int64_t>(param(params, "ROWS", 1), 1)));
        double const rowWaves = double(p.m) * split / rowVec / rowsResident;
        double const exchanges = param(params, "ONLINE", 0) == 2 ? 1 : reduces;
        e.memoryUs += kExchangeMicroseconds * exchanges * rowWaves;
        if (held && param(params, "PREFETCH", 0) > 0)
            e.memoryUs -= kPrefetchMicroseconds * rowWaves;
    }
    e.memoryUs *= 1 + double(used.spillBytes.value_or(0)) / kSpillBytesDoubling;
    e.computeUs = p.flops() / (factOr(a, "peak_fp32_gflops", 1000) * 1e9 * busy) * 1e6;
    e.microseconds = std::max(e.memoryUs, e.computeUs) + kLaunchMicroseconds;
    return e;
}

} // namespace

CostEstimate estimateCost(Problem const& problem, arch::Arch const& arch,
                          std::map<std::string, std::int64_t> const& params,
                          ResourceUsage const& measured) {
    if (problem.kind == ProblemKind::Gemm)
        return gemm(problem, arch, params, measured);
    return stream(problem, arch, params, measured);
}

} // namespace kiln::scheduler
