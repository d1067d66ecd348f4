// The analytical cost model: occupancy limits, infeasible blocks, and orderings any sensible
// model must get right, computed from arch-db's facts.
#include "kiln/scheduler/CostModel.h"

#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/scheduler/Compare.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <numeric>

using namespace kiln;
using namespace kiln::scheduler;

namespace {

Problem gemm(std::int64_t size) {
    Command const c = loadCommand(std::string(KILN_SOURCE_DIR) + "/examples/gemm-f16.json");
    return problemOf(c, {{"M", double(size)}, {"N", double(size)}, {"K", double(size)}});
}

CostEstimate cost(Problem const& p, std::string const& target,
                  std::map<std::string, std::int64_t> const& params) {
    return estimateCost(p, arch::ArchLibrary::get(target), params);
}

Problem layerNorm(std::int64_t size) {
    Command const c = loadCommand(std::string(KILN_SOURCE_DIR) + "/examples/layernorm-f16.json");
    return problemOf(c, {{"M", double(size)}, {"N", double(size)}});
}

} // namespace

TEST(Problem, AGemmCommandAtConcreteSizes) {
    Problem const p = gemm(4096);
    EXPECT_EQ(p.kind, ProblemKind::Gemm);
    EXPECT_EQ(p.m, 4096);
    EXPECT_EQ(p.n, 4096);
    EXPECT_EQ(p.k, 4096);
    EXPECT_EQ(p.summary(), "gemm 4096x4096x4096 f16->f16");
    EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4096 * 4096 * 4096);
    EXPECT_DOUBLE_EQ(p.uniqueBytes(), 3.0 * 4096 * 4096 * 2);
    EXPECT_EQ(p.canonical(), gemm(4096).canonical());
    EXPECT_NE(p.canonical(), gemm(1024).canonical());
    EXPECT_NE(p.canonical().find(R"("strides":[4096,1])"), std::string::npos);
}

TEST(CostModel, OccupancyFollowsSharedMemoryAndRegisters) {
    Problem const p = gemm(4096);
    // 128x128x32 f16, 2 stages: 32 KB of shared memory per block; 256 threads with 64
    // accumulators each (+32) = 96 registers -> 65536 / (96 * 256) = 2 blocks by registers.
    CostEstimate const e =
        cost(p, "sm_90a", {{"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"STAGES", 2}});
    EXPECT_TRUE(e.feasible);
    EXPECT_EQ(e.threads, 256);
    EXPECT_EQ(e.registers, 96);
    EXPECT_EQ(e.sharedBytes, 2 * (128 * 32 + 32 * 128) * 2);
    EXPECT_EQ(e.blocksPerMultiprocessor, 2);
    EXPECT_EQ(e.limitedBy, "registers");
    // Four stages of 64-wide K slices need 128 KB: one block per SM on sm_90a's 228 KB.
    CostEstimate const big =
        cost(p, "sm_90a", {{"MT_M", 128}, {"MT_N", 128}, {"MT_K", 64}, {"STAGES", 4}});
    EXPECT_EQ(big.blocksPerMultiprocessor, 1);
    EXPECT_EQ(big.limitedBy, "shared memory");
}

TEST(CostModel, ABlockThatDoesNotFitIsInfeasible) {
    CostEstimate const e =
        cost(gemm(4096), "sm_80", {{"MT_M", 256}, {"MT_N", 256}, {"MT_K", 64}, {"STAGES", 4}});
    EXPECT_FALSE(e.feasible);
    EXPECT_EQ(e.reason, "262144 bytes of shared memory per block; the target allows 166912");
    EXPECT_TRUE(std::isinf(e.microseconds));
}

TEST(CostModel, OrderingsThatMustHold) {
    Problem const p = gemm(4096);
    auto const us = [&](std::string const& t, std::int64_t m, std::int64_t n, std::int64_t k,
                        std::int64_t s) {
        return cost(p, t, {{"MT_M", m}, {"MT_N", n}, {"MT_K", k}, {"STAGES", s}}).microseconds;
    };
    // Tiny tiles re-read A and B from memory far more often than large ones.
    EXPECT_GT(us("sm_90a", 16, 16, 16, 1), 4 * us("sm_90a", 128, 128, 32, 2));
    // A second stage hides the loads behind the math of a lone block (128 x 256 tiles: 160
    // registers per workitem leave room for one block of 256).
    EXPECT_EQ(cost(p, "sm_90a", {{"MT_M", 128}, {"MT_N", 256}, {"MT_K", 64}, {"STAGES", 1}})
                  .blocksPerMultiprocessor,
              1);
    EXPECT_LT(us("sm_90a", 128, 256, 64, 2), us("sm_90a", 128, 256, 64, 1));
    // Two resident blocks fill each other's waits: the second stage matters less there.
    EXPECT_LE(us("sm_90a", 128, 128, 64, 2), us("sm_90a", 128, 128, 64, 1));
    // H100 beats A100 on the same schedule.
    EXPECT_LT(us("sm_90a", 128, 128, 32, 2), us("sm_80", 128, 128, 32, 2));
    // The best schedule is no faster than the matrix peak allows.
    double const floor = p.flops() / (989400e9) * 1e6;
    EXPECT_GT(us("sm_90a", 128, 128, 32, 2), floor);
    // A problem 64 times smaller takes less time.
    EXPECT_LT(cost(gemm(1024), "sm_90a", {{"MT_M", 128}, {"MT_N", 128}}).microseconds,
              us("sm_90a", 128, 128, 16, 1));
}

TEST(CostModel, RegisterTilesMeanFmaCodeSizedByTheTile) {
    Problem const p = gemm(4096);
    auto const simt = [&](std::int64_t tt, std::int64_t minBlocks, std::int64_t mt = 128) {
        return cost(p, "sm_90a",
                    {{"MT_M", mt},
                     {"MT_N", mt},
                     {"MT_K", 8},
                     {"TT_M", tt},
                     {"TT_N", tt},
                     {"MIN_BLOCKS", minBlocks}});
    };
    // 8x8 register tiles: 16x16 workitems; 64 accumulators + 16 operands + 32 = 112 registers.
    CostEstimate const e = simt(8, 1);
    EXPECT_EQ(e.threads, 256);
    EXPECT_EQ(e.registers, 112);
    // FMA code runs at the FP32 rate, not the tensor-core rate the same f16 problem would get.
    EXPECT_GT(e.computeUs, p.flops() / 66900e9 * 1e6);
    // Two resident blocks cap registers at 65536 / (2 * 256) = 128: no spill, and more
    // blocks than one.
    EXPECT_EQ(simt(8, 2).registers, 112);
    // Four cap them at 64: 48 spill, and the reloads cost more than the second pair of blocks.
    EXPECT_EQ(simt(8, 4).registers, 64);
    EXPECT_GT(simt(8, 4).microseconds, simt(8, 2).microseconds);
    // 2x2 tiles issue a shared load per two FMAs, 4x4 tiles one per eight.
    EXPECT_EQ(simt(2, 1, 64).threads, 1024);
    EXPECT_GT(simt(2, 1, 64).computeUs, 1.25 * simt(4, 1, 64).computeUs);
}

TEST(CostModel, WarpTilesMultiplyAtTheMmaSyncRate) {
    Problem const p = gemm(4096);
    CostEstimate const e =
        cost(p, "sm_90a",
             {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}});
    // Four warps of 32 x 128: 128 accumulators a lane.
    EXPECT_EQ(e.threads, 128);
    EXPECT_GE(e.registers, 128);
    // mma.sync on Hopper: 4096 flops per m16n8k16 over 8 issue cycles on each of 4 tensor
    // cores, 2048 flops per clock per multiprocessor; not the part's (wgmma) matrix peak.
    auto const& h100 = arch::ArchLibrary::get("sm_90a");
    double const mmaSync = 2048.0 * double(*h100.fact("multiprocessor_count")) *
                           double(*h100.fact("boost_clock_mhz")) * 1e6;
    EXPECT_GE(e.computeUs, p.flops() / mmaSync * 1e6 * 0.999);
    EXPECT_GT(e.computeUs,
              1.2 * p.flops() / (double(*h100.fact("peak_fp16_matrix_gflops")) * 1e9) * 1e6);
}

TEST(CostModel, WarpTilesThatReadFewerFragmentsRankFirst) {
    Problem const p = gemm(4096);
    auto mma = [&](std::int64_t m, std::int64_t n, std::int64_t wtm, std::int64_t wtn) {
        return cost(p, "sm_90a",
                    {{"MMA", 1},
                     {"MT_M", m},
                     {"MT_N", n},
                     {"MT_K", 64},
                     {"WT_M", wtm},
                     {"WT_N", wtn},
                     {"STAGES", 3}});
    };
    // A 2 x 4 grid of 64 x 64 warp tiles: eight warps, each reading 64 rows of A and 64
    // columns of B per K index.
    EXPECT_EQ(mma(128, 256, 64, 64).threads, 256);
    // As measured on the H100: 128 x 256 with 64 x 64 warp tiles before 32 x 32 warp tiles
    // (twice the fragment reads) and before 128 x 128 with a column of 32 x 128 warps (twice
    // the L2 traffic).
    EXPECT_LT(mma(128, 256, 64, 64).microseconds, mma(128, 256, 32, 32).microseconds);
    EXPECT_LT(mma(128, 256, 64, 64).microseconds, mma(128, 128, 32, 0).microseconds);
}

TEST(CostModel, WarpgroupsReachTheMatrixPeakWhereTheTargetHasWgmma) {
    Problem const p = gemm(4096);
    auto schedule = [](std::int64_t wtm, std::int64_t wtn) {
        return std::map<std::string, std::int64_t>{{"MMA", 1},   {"MT_M", 128}, {"MT_N", 256},
                                                   {"MT_K", 64}, {"WT_M", wtm}, {"WT_N", wtn},
                                                   {"STAGES", 4}};
    };
    // Warps of 16 rows over MT_N: two warpgroups of m64n256 on sm_90a, at the part's peak.
    CostEstimate const wgmma = cost(p, "sm_90a", schedule(16, 0));
    EXPECT_EQ(wgmma.threads, 256);
    auto const& h100 = arch::ArchLibrary::get("sm_90a");
    double const peakUs = p.flops() / (double(*h100.fact("peak_fp16_matrix_gflops")) * 1e9) * 1e6;
    EXPECT_LT(wgmma.computeUs, 1.1 * peakUs);
    // As measured (2026-11-24-h100-wgmma.md): 277 us, L2 bound, ahead of the best mma.sync grid
    // (392 us).
    EXPECT_GT(wgmma.microseconds, 240);
    EXPECT_LT(wgmma.microseconds, 320);
    EXPECT_LT(wgmma.microseconds, cost(p, "sm_90a", schedule(64, 64)).microseconds);
    // With a wgmma group in flight, three stages keep one tile of copies ahead, four keep two:
    // measured 418 us against 277.
    auto three = schedule(16, 0);
    three["STAGES"] = 3;
    EXPECT_GT(cost(p, "sm_90a", three).microseconds, 1.2 * wgmma.microseconds);
    // sm_80 has no wgmma: the same warps multiply at mma.sync's rate (three stages: four do not
    // fit its shared memory).
    auto ampere = schedule(16, 0);
    ampere["STAGES"] = 3;
    EXPECT_GT(cost(p, "sm_80", ampere).computeUs, 1.5 * wgmma.computeUs);
}

TEST(CostModel, PersistentTilesWithAProducerHideEachTilesFillBehindTheLastOnesEpilogue) {
    Problem const p = gemm(4096);
    auto schedule = [](std::int64_t persistent, std::int64_t specialized) {
        return std::map<std::string, std::int64_t>{{"MMA", 1},
                                                   {"MT_M", 128},
                                                   {"MT_N", 256},
                                                   {"MT_K", 64},
                                                   {"WT_M", 16},
                                                   {"STAGES", 4},
                                                   {"TMA", 1},
                                                   {"WARP_SPECIALIZE", specialized},
                                                   {"PERSISTENT", persistent}};
    };
    // One workgroup a multiprocessor, 4 tiles each: every tile's fill (a latency and one 48 KB
    // slice) and epilogue (64 KB of f16 stored) add to its time.
    CostEstimate const plain = cost(p, "sm_90a", schedule(0, 1));
    EXPECT_EQ(plain.blocksPerMultiprocessor, 1);
    EXPECT_GT(plain.tilesUs, 0);
    // Persistent with a producer: each tile waits for the longer of the two, not both.
    CostEstimate const persistent = cost(p, "sm_90a", schedule(1, 1));
    EXPECT_LT(persistent.tilesUs, plain.tilesUs);
    EXPECT_GT(persistent.tilesUs, plain.tilesUs / 2 - 1e-9);
    EXPECT_LT(persistent.microseconds, plain.microseconds);
    // Without a producer the next tile's loads wait for the epilogue: no difference to see.
    EXPECT_EQ(cost(p, "sm_90a", schedule(1, 0)).microseconds,
              cost(p, "sm_90a", schedule(0, 0)).microseconds);
    // The measured 128 x 256 kernel stays where it was measured (277 us, L2 bound).
    EXPECT_GT(plain.microseconds, 240);
    EXPECT_LT(plain.microseconds, 320);
}

TEST(CostModel, AStagedResultLeavesTheConsumersAtSharedMemorysRate) {
    Problem const p = gemm(4096);
    auto schedule = [](std::int64_t epilogue, std::int64_t persistent, std::int64_t mtM,
                       std::int64_t stages, std::int64_t mtN = 256) {
        return std::map<std::string, std::int64_t>{{"MMA", 1},
                                                   {"MT_M", mtM},
                                                   {"MT_N", mtN},
                                                   {"MT_K", 64},
                                                   {"WT_M", 16},
                                                   {"STAGES", stages},
                                                   {"TMA", 1},
                                                   {"WARP_SPECIALIZE", 1},
                                                   {"PERSISTENT", persistent},
                                                   {"EPILOGUE", epilogue}};
    };
    CostEstimate const direct = cost(p, "sm_90a", schedule(0, 1, 128, 4));
    CostEstimate const staged = cost(p, "sm_90a", schedule(1, 1, 128, 4));
    // Two buffers of 64 columns x 128 rows of f16 after the copies, 1024-byte aligned.
    EXPECT_EQ(staged.sharedBytes, direct.sharedBytes + 1024 + 2 * 128 * 64 * 2);
    EXPECT_EQ(staged.blocksPerMultiprocessor, 1);
    // The tile goes to shared memory (128 bytes a clock), not to L2 (23): each tile's
    // epilogue is shorter.
    EXPECT_LT(staged.tilesUs, direct.tilesUs);
    EXPECT_LT(staged.microseconds, direct.microseconds);
    // A workgroup that ends with its tile waits for its last block to be read.
    EXPECT_GT(cost(p, "sm_90a", schedule(1, 0, 128, 4)).tilesUs, staged.tilesUs);
    // 256 x 128 tiles at four stages leave no room for the buffers (64 KB of them).
    EXPECT_FALSE(cost(p, "sm_90a", schedule(1, 1, 256, 4, 128)).feasible);
    EXPECT_TRUE(cost(p, "sm_90a", schedule(0, 1, 256, 4, 128)).feasible);
    // An f32 result is stored from registers whatever EPILOGUE says (code generation refuses
    // it): the model counts no buffers.
    Command const f32 = loadCommand(std::string(KILN_SOURCE_DIR) +
                                    "/tests/lowering/commands/gemm-f16-f32-result.json");
    Problem const wide = problemOf(f32, {{"M", 4096.0}, {"N", 4096.0}, {"K", 4096.0}});
    EXPECT_EQ(cost(wide, "sm_90a", schedule(1, 1, 128, 4)).sharedBytes,
              cost(wide, "sm_90a", schedule(0, 1, 128, 4)).sharedBytes);
}

TEST(CostModel, PingpongConsumersHideEachTilesEpilogueBehindTheOthersMultiply) {
    Problem const p = gemm(4096);
    auto schedule = [](std::int64_t pingpong, std::int64_t epilogue) {
        return std::map<std::string, std::int64_t>{{"MMA", 1},
                                                   {"MT_M", 64},
                                                   {"MT_N", 256},
                                                   {"MT_K", 64},
                                                   {"WT_M", 16},
                                                   {"STAGES", 4},
                                                   {"TMA", 1},
                                                   {"WARP_SPECIALIZE", 1},
                                                   {"PERSISTENT", 1},
                                                   {"EPILOGUE", epilogue},
                                                   {"PINGPONG", pingpong}};
    };
    for (std::int64_t epilogue : {0, 1}) {
        CostEstimate const one = cost(p, "sm_90a", schedule(0, epilogue));
        CostEstimate const two = cost(p, "sm_90a", schedule(1, epilogue));
        // Two consumer warpgroups of 128 accumulators a workitem: one workgroup a multiprocessor.
        EXPECT_EQ(two.threads, 2 * one.threads);
        EXPECT_EQ(two.blocksPerMultiprocessor, 1);
        // 1024 tiles of 64 x 256, about 8 a multiprocessor: each tile's epilogue (and fill) runs
        // during the other consumer's K loop, which is longer; the workgroup's last shows.
        EXPECT_LT(two.tilesUs, one.tilesUs / 4);
        EXPECT_GT(two.tilesUs, 0);
        EXPECT_LT(two.microseconds, one.microseconds);
        // The same multiply: only the tiles' ends differ.
        EXPECT_DOUBLE_EQ(two.computeUs, one.computeUs);
    }
    // EPILOGUE=1: a set of staging buffers for each consumer.
    EXPECT_EQ(cost(p, "sm_90a", schedule(1, 1)).sharedBytes,
              cost(p, "sm_90a", schedule(0, 1)).sharedBytes + 2 * 64 * 64 * 2);
    // Where code generation would not write it (no producer warpgroup, two warpgroups' rows) the
    // model does not count it either.
    auto without = schedule(1, 0);
    without["WARP_SPECIALIZE"] = 0;
    auto plain = schedule(0, 0);
    plain["WARP_SPECIALIZE"] = 0;
    EXPECT_EQ(cost(p, "sm_90a", without).microseconds, cost(p, "sm_90a", plain).microseconds);
}

TEST(CostModel, StreamsAreBoundByBandwidth) {
    Command const c = loadCommand(std::string(KILN_SOURCE_DIR) + "/examples/axpy.json");
    Problem const p = problemOf(c, {{"N", double(1 << 26)}});
    EXPECT_EQ(p.kind, ProblemKind::Elementwise);
    CostEstimate const e = cost(p, "sm_90a", {{"WG_SIZE", 256}, {"VEC", 4}});
    EXPECT_DOUBLE_EQ(p.readBytes + p.writtenBytes, 3.0 * 4 * (1 << 26));
    double const atBandwidth = (p.readBytes + p.writtenBytes) / 3350e9 * 1e6;
    EXPECT_GE(e.microseconds, atBandwidth);
    EXPECT_LT(e.microseconds, 1.5 * atBandwidth);
    // 64 blocks of 1024 x 64 values leave half the SMs of an H100 idle.
    Problem const small = problemOf(c, {{"N", double(1 << 22)}});
    EXPECT_GT(cost(small, "sm_90a", {{"WG_SIZE", 1024}, {"VEC", 64}}).microseconds,
              1.5 * cost(small, "sm_90a", {{"WG_SIZE", 256}, {"VEC", 4}}).microseconds);
}

// Clusters (CLUSTER_M, CLUSTER_N) cost what their twins without cost: the multicast's L2 saving
// did not make the H100 faster (2026-11-26-h100-clusters-floors.md), and a model that counted it
// sent sweeps to cluster points only. The grid is whole clusters.
TEST(CostModel, AClusterCostsWhatItsTwinWithoutCosts) {
    auto schedule = [](std::int64_t clusterM, std::int64_t clusterN, std::int64_t tma = 1) {
        return std::map<std::string, std::int64_t>{{"MMA", 1},
                                                   {"MT_M", 128},
                                                   {"MT_N", 256},
                                                   {"MT_K", 64},
                                                   {"WT_M", 16},
                                                   {"STAGES", 4},
                                                   {"TMA", tma},
                                                   {"WARP_SPECIALIZE", tma},
                                                   {"PERSISTENT", tma},
                                                   {"GROUP_M", 8},
                                                   {"CLUSTER_M", clusterM},
                                                   {"CLUSTER_N", clusterN}};
    };
    Problem const p = gemm(4096);
    CostEstimate const none = cost(p, "sm_90a", schedule(1, 1)),
                       alongM = cost(p, "sm_90a", schedule(2, 1)),
                       alongN = cost(p, "sm_90a", schedule(1, 2));
    EXPECT_EQ(alongM.microseconds, none.microseconds);
    EXPECT_EQ(alongN.microseconds, none.microseconds);
    EXPECT_EQ(alongM.dramBytes, none.dramBytes);
    // An odd number of rows of tiles (4224 = 33 x 128) runs a workgroup past the edge in the last
    // cluster of each column: 34 rows of tiles' waves.
    Problem const odd =
        problemOf(loadCommand(std::string(KILN_SOURCE_DIR) + "/examples/gemm-f16.json"),
                  {{"M", 4224.0}, {"N", 4096.0}, {"K", 4096.0}});
    EXPECT_DOUBLE_EQ(cost(odd, "sm_90a", schedule(2, 1)).waves * 33,
                     cost(odd, "sm_90a", schedule(1, 1)).waves * 34);
    // Without the copy engine there is no cluster: the parameters change nothing.
    EXPECT_EQ(cost(p, "sm_90a", schedule(2, 1, 0)).microseconds,
              cost(p, "sm_90a", schedule(1, 1, 0)).microseconds);
}

TEST(CostModel, RowsHeldInAKernelMadeForItsSizesAreReadOnce) {
    // The layer norm of 8192 x 8192 f16 over 256 lanes of 8 elements: four chunks a row, written
    // out and held where the kernel is made for its sizes, so X is read once and each row's
    // four loads are in flight together.
    Problem const p = layerNorm(8192);
    auto const& h100 = arch::ArchLibrary::get("sm_90a");
    std::map<std::string, std::int64_t> const held = {{"COOP", 1}, {"ROWS", 1},   {"LANES", 256},
                                                      {"VEC", 8},  {"UNROLL", 1}, {"ONLINE", 1}};
    auto reread = held;
    reread["HOLD"] = 0;
    ResourceUsage const forItsSizes{.registers = 48, .madeForSizes = true};
    CostEstimate const once = estimateCost(p, h100, held, forItsSizes);
    CostEstimate const again = estimateCost(p, h100, reread, forItsSizes);
    CostEstimate const loop = estimateCost(p, h100, held, {.registers = 48});
    EXPECT_LT(once.microseconds, again.microseconds);
    EXPECT_LT(again.microseconds, loop.microseconds); // four loads in flight, not one
    EXPECT_GT(once.latencyHiding, loop.latencyHiding);
    // Over 32 lanes a row is 32 chunks: a loop whatever the kernel is made for.
    auto narrow = held;
    narrow["LANES"] = 32;
    EXPECT_EQ(estimateCost(p, h100, narrow, forItsSizes).microseconds,
              estimateCost(p, h100, narrow, {.registers = 48}).microseconds);
}

TEST(CostModel, OneExchangeAPrefetchAndNoSpillAreEachFaster) {
    Problem const p = layerNorm(8192);
    auto const& h100 = arch::ArchLibrary::get("sm_90a");
    std::map<std::string, std::int64_t> const base = {{"COOP", 1}, {"ROWS", 1},   {"LANES", 256},
                                                      {"VEC", 8},  {"UNROLL", 1}, {"ONLINE", 1}};
    ResourceUsage const used{.registers = 48, .madeForSizes = true};
    auto const us = [&](std::string const& name, std::int64_t value, ResourceUsage u) {
        auto params = base;
        params[name] = value;
        return estimateCost(p, h100, params, u).microseconds;
    };
    double const baseline = us("ONLINE", 1, used);
    EXPECT_LT(us("ONLINE", 2, used), baseline);     // one barrier pair a row, not two
    EXPECT_LT(us("PREFETCH", 330, used), baseline); // held rows found in L2
    ResourceUsage spilled = used;
    spilled.spillBytes = 112;
    EXPECT_GT(us("ONLINE", 1, spilled), baseline * 1.15);
}

TEST(CostModel, RanksTheLayerNormSchedulesAnH100Measured) {
    // A sample of the 5280 schedules of examples/normalization.space.json that `kiln tune
    // --specialize` measured for the layer norm of 8192 x 8192 f16 on an H100 (the 10 fastest
    // and every 20th after them; bench/results/2026-11-27-h100-twelfth-layernorm.md), each with
    // the registers, shared memory and spills ptxas reported. The model, given the same, must
    // order them much as the GPU did and pick a point close to the fastest.
    Problem const p = layerNorm(8192);
    auto const& h100 = arch::ArchLibrary::get("sm_90a");
    std::ifstream in(std::string(KILN_SOURCE_DIR) +
                     "/tests/scheduler/data/layernorm-h100-8192.jsonl");
    std::vector<double> measured, predicted;
    for (std::string line; std::getline(in, line);) {
        auto const r = nlohmann::json::parse(line);
        ResourceUsage const used{.registers = r["registers"].get<int>(),
                                 .sharedBytes = r["shared_bytes"].get<std::int64_t>(),
                                 .spillBytes = r["spill_bytes"].get<std::int64_t>(),
                                 .madeForSizes = true};
        measured.push_back(r["us"].get<double>());
        predicted.push_back(
            estimateCost(p, h100, r["point"].get<std::map<std::string, std::int64_t>>(), used)
                .microseconds);
    }
    ASSERT_EQ(measured.size(), 274U);
    auto const tau = kendallTau(predicted, measured);
    ASSERT_TRUE(tau);
    EXPECT_GT(*tau, 0.5);
    // A model-guided sweep measures the model's best few: of its 10 best here, the fastest is
    // within 1% of the fastest of all, and the model's estimates are of the measured size.
    std::vector<std::size_t> order(predicted.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return predicted[a] < predicted[b]; });
    double const fastest = *std::min_element(measured.begin(), measured.end());
    double bestOfTen = measured[order[0]];
    for (std::size_t i = 0; i < 10; ++i)
        bestOfTen = std::min(bestOfTen, measured[order[i]]);
    EXPECT_LT(bestOfTen, fastest * 1.01);
    EXPECT_NEAR(predicted[order[0]], fastest, fastest * 0.05);
}
