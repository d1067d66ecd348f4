// TileOrderGpuTest.cpp: GROUP_M, the grouped order of a GEMM's output tiles, on a GPU, through
// the launcher sweeps and `kiln run` use (scheduler::runOnDevice), against the reference: every
// GEMM path (SIMT, mma.sync; on sm_90a wgmma, the copy engine's loads and a producer warpgroup)
// at sizes whose rows of tiles are not a multiple of GROUP_M (a shorter last group), a group
// taller than the grid and one row of tiles. A tile taken twice or never shows as a wrong or
// missing block of the result. The wgmma paths are skipped on GPUs other than sm_90a.
#include "GemmGpuCase.h"

namespace kiln::test {
namespace {

using GroupedCase = GemmGpuCase;

Schedule simt(std::int64_t group) {
    return {{"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}, {"GROUP_M", group}};
}

Schedule mmaSync(std::int64_t group) {
    return {{"MMA", 1},   {"MT_M", 64},  {"MT_N", 64},      {"MT_K", 32},
            {"WT_M", 32}, {"STAGES", 3}, {"GROUP_M", group}};
}

Schedule tma(std::int64_t mtM, std::int64_t mtN, std::int64_t stages, std::int64_t group,
             bool specialized) {
    return {{"MMA", 1},        {"MT_M", mtM},      {"MT_N", mtN}, {"MT_K", 64},
            {"WT_M", 16},      {"STAGES", stages}, {"TMA", 1},    {"WARP_SPECIALIZE", specialized},
            {"GROUP_M", group}};
}

class TileOrderGpuTest : public runtime::test::GpuTest,
                         public ::testing::WithParamInterface<GroupedCase> {};

TEST_P(TileOrderGpuTest, MatchesTheReference) {
    GroupedCase const& c = GetParam();
    std::string const target = device()->description().target;
    if (c.needsSm90a && target != "sm_90a")
        GTEST_SKIP() << "wgmma needs sm_90a, not " << target;
    KernelGraph const graph = lowered(c.command, "gemm.pipeline.json", c.params, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = c.params});
    EXPECT_NE(kernel.code.find("min.s32"), std::string::npos) << "no grouped order written";
    auto const result = runGemmCase(device(), c, graph, kernel);
    ASSERT_TRUE(result);
    std::printf("[ gpu      ] %s: max relative error %.3g against %s\n", c.name.c_str(),
                result->maxRelativeError, result->reference.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Paths, TileOrderGpuTest,
    ::testing::Values(
        // 16 x 6 tiles of 64 x 64 in groups of 3 rows: the last group holds one.
        GroupedCase{"simt_f32_ragged", "gemm.json", simt(3), {{"M", 1000}, {"N", 333}, {"K", 77}}},
        // 11 x 9 tiles in groups of 8: a last group of 3 rows.
        GroupedCase{"mma_sync_f16_ragged",
                    "gemm-f16.json",
                    mmaSync(8),
                    {{"M", 700}, {"N", 520}, {"K", 136}}},
        // 3 x 40 tiles: one group, taller than the grid.
        GroupedCase{"mma_sync_f16_group_taller_than_grid",
                    "gemm-f16.json",
                    mmaSync(16),
                    {{"M", 129}, {"N", 2560}, {"K", 72}}},
        // One row of tiles: nothing to reorder.
        GroupedCase{"simt_f32_one_row", "gemm.json", simt(8), {{"M", 40}, {"N", 700}, {"K", 33}}},
        // 128 x 256 tiles, 9 x 6 of them in groups of 8, a producer warpgroup. (A tensor map's
        // rows are a multiple of 16 bytes apart: N and K multiples of 8 halves.)
        GroupedCase{"tma_specialized_f16_ragged",
                    "gemm-f16.json",
                    tma(128, 256, 4, 8, true),
                    {{"M", 1100}, {"N", 1304}, {"K", 200}},
                    true},
        GroupedCase{"tma_f16_ragged",
                    "gemm-f16.json",
                    tma(128, 128, 3, 16, false),
                    {{"M", 2200}, {"N", 704}, {"K", 136}},
                    true},
        // 18 x 6 tiles of 128 x 128 in groups of 16 without a producer warpgroup, and bf16 stored
        // transposed, 13 x 4 tiles in groups of 8.
        GroupedCase{"tma_specialized_bf16_transposed",
                    "gemm-bf16.json",
                    tma(128, 128, 3, 8, true),
                    {{"M", 1608}, {"N", 500}, {"K", 264}},
                    true}),
    [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
