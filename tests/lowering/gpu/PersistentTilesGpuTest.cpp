// PersistentTilesGpuTest.cpp: PERSISTENT=1, a GEMM whose workgroups loop over the output tiles,
// on a GPU, through the launcher sweeps and `kiln run` use (scheduler::runOnDevice: the persistent
// grid of min(tiles, multiprocessors x workgroups per multiprocessor)), against the reference.
// The copy engine's pipeline with and without a producer warpgroup carries its mbarrier phases
// from tile to tile: a phase out of step shows as a wrong block of the result (or a trap after
// 2^24 polls), a tile taken twice or never as a wrong or missing block. Sizes with more tiles than
// workgroups (each workgroup takes several, so the K slices of one tile follow those of another
// round the ring), fewer tiles than multiprocessors, ragged M, N and K, one tile, tall and skinny,
// and K slices fewer and more than the stages. The wgmma paths are skipped on GPUs other than
// sm_90a; the SIMT and mma.sync paths (each tile's own pipeline inside the loop) run everywhere.
#include "GemmGpuCase.h"
#include "kiln/lowering/Occupancy.h"

namespace kiln::test {
namespace {

using PersistentCase = GemmGpuCase;

Schedule tma(std::int64_t mtM, std::int64_t mtN, std::int64_t stages, bool specialized,
             std::int64_t group = 0) {
    return {{"MMA", 1},       {"MT_M", mtM},      {"MT_N", mtN},
            {"MT_K", 64},     {"WT_M", 16},       {"STAGES", stages},
            {"TMA", 1},       {"GROUP_M", group}, {"WARP_SPECIALIZE", specialized},
            {"PERSISTENT", 1}};
}

Schedule mmaSync() {
    return {{"MMA", 1},   {"MT_M", 64},  {"MT_N", 64},      {"MT_K", 32},
            {"WT_M", 32}, {"STAGES", 3}, {"PERSISTENT", 1}, {"GROUP_M", 8}};
}

Schedule simt() {
    return {{"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}, {"PERSISTENT", 1}};
}

class PersistentTilesGpuTest : public runtime::test::GpuTest,
                               public ::testing::WithParamInterface<PersistentCase> {};

TEST_P(PersistentTilesGpuTest, MatchesTheReference) {
    PersistentCase const& c = GetParam();
    std::string const target = device()->description().target;
    if (c.needsSm90a && target != "sm_90a")
        GTEST_SKIP() << "wgmma needs sm_90a, not " << target;
    KernelGraph const graph = lowered(c.command, "gemm.pipeline.json", c.params, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = c.params});
    ASSERT_GT(kernel.workgroupsPerMultiprocessor, 0) << "the manifest declares no persistent grid";
    auto const result = runGemmCase(device(), c, graph, kernel);
    ASSERT_TRUE(result);
    auto const& r = *result;
    // The launch is the persistent grid: one axis, as many workgroups as the multiprocessors
    // hold at once with the registers ptxas gave (the figure emitted before ptxas is the fewest;
    // DeviceRun launches the one refined from ptxas's count).
    EXPECT_EQ(r.grid[1], 1);
    EXPECT_EQ(r.grid[2], 1);
    std::int64_t const resident = lowering::workgroupsPerMultiprocessor(kernel, r.registers) *
                                  device()->description().multiprocessorCount;
    EXPECT_LE(r.grid[0], resident);
    std::printf("[ gpu      ] %s: %lld workgroups, max relative error %.3g against %s\n",
                c.name.c_str(), static_cast<long long>(r.grid[0]), r.maxRelativeError,
                r.reference.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Paths, PersistentTilesGpuTest,
    ::testing::Values(
        // 128 x 256 tiles, a producer warpgroup, one workgroup a multiprocessor: 32 x 16 = 512
        // tiles on 132 workgroups (about 4 each), K of 30 slices round 4 stages.
        PersistentCase{"tma_specialized_f16_more_tiles_than_workgroups",
                       "gemm-f16.json",
                       tma(128, 256, 4, true, 8),
                       {{"M", 4096}, {"N", 4096}, {"K", 1920}},
                       true},
        // Ragged everywhere: 17 x 11 tiles, K of 5 slices (not a multiple of the 4 stages), so
        // that each tile starts its ring at another copy and phase.
        PersistentCase{"tma_specialized_f16_ragged",
                       "gemm-f16.json",
                       tma(128, 256, 4, true, 8),
                       {{"M", 2100}, {"N", 2728}, {"K", 264}},
                       true},
        // Fewer tiles than multiprocessors (3 x 2): the grid is the tiles.
        PersistentCase{"tma_specialized_f16_fewer_tiles_than_multiprocessors",
                       "gemm-f16.json",
                       tma(128, 256, 4, true),
                       {{"M", 300}, {"N", 312}, {"K", 136}},
                       true},
        // One tile, one K slice.
        PersistentCase{"tma_specialized_f16_one_tile",
                       "gemm-f16.json",
                       tma(128, 256, 4, true),
                       {{"M", 40}, {"N", 24}, {"K", 8}},
                       true},
        // Tall and skinny: 79 x 1 tiles.
        PersistentCase{"tma_specialized_f16_tall_and_skinny",
                       "gemm-f16.json",
                       tma(128, 256, 4, true, 8),
                       {{"M", 10000}, {"N", 48}, {"K", 520}},
                       true},
        // bf16 stored transposed, 128 x 128 tiles, 3 stages, a producer warpgroup.
        PersistentCase{"tma_specialized_bf16_transposed",
                       "gemm-bf16.json",
                       tma(128, 128, 3, true, 16),
                       {{"M", 3000}, {"N", 2056}, {"K", 712}},
                       true},
        // Without a producer warpgroup: each tile's prologue into the copies after the last
        // tile's, 3 and 2 stages.
        PersistentCase{"tma_f16_ragged_3_stages",
                       "gemm-f16.json",
                       tma(128, 128, 3, false, 8),
                       {{"M", 2200}, {"N", 2000}, {"K", 200}},
                       true},
        PersistentCase{"tma_f16_ragged_2_stages",
                       "gemm-f16.json",
                       tma(64, 64, 2, false),
                       {{"M", 1500}, {"N", 1048}, {"K", 72}},
                       true},
        // The loop around the other paths' own pipelines.
        PersistentCase{"mma_sync_f16_ragged",
                       "gemm-f16.json",
                       mmaSync(),
                       {{"M", 1700}, {"N", 1520}, {"K", 136}}},
        PersistentCase{
            "simt_f32_ragged", "gemm.json", simt(), {{"M", 1000}, {"N", 1333}, {"K", 77}}}),
    [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
