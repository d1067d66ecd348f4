// PingpongGpuTest.cpp: PINGPONG=1, two consumer warpgroups taking a persistent workgroup's tiles
// in turn (lowering/ptx/PtxPingpong.cpp), on a GPU, through the launcher sweeps and `kiln run`
// use (scheduler::runOnDevice: the persistent grid), against the reference. How a mistake shows:
// a consumer's K-slice count out of step with the producer's ring reads another tile's slices
// (wrong blocks of 64 rows, often every other tile of a workgroup) or waits on a phase that never
// comes (a trap after 2^24 polls: the launch fails); a turn that never comes (a named barrier
// whose arrivals and waits do not pair up) hangs until the watchdog or ends in the trap of the
// other consumer's wait; staging buffers shared by the consumers show as wrong blocks with
// EPILOGUE=1 only. Sizes: many tiles a workgroup (both consumers busy, a workgroup's count odd or
// even: one consumer one tile ahead), exactly three tiles a workgroup on a 132-multiprocessor
// H100, fewer tiles than twice the workgroups (consumer 1 idle in some), ragged M, N and K, K of
// one slice (the ring wraps within a few tiles) and of more slices than stages; plain, bias +
// tanh-GELU, bf16 transposed with beta * C; EPILOGUE 0 and 1. Skipped on GPUs other than sm_90a.
#include "GemmGpuCase.h"

namespace kiln::test {
namespace {

using PingpongCase = GemmGpuCase;

// 64 x MT_N tiles on one warpgroup each, two consumers, a producer warpgroup, persistent.
Schedule pingpong(std::int64_t epilogue, std::int64_t mtN = 256, std::int64_t stages = 4,
                  std::int64_t group = 0) {
    return {{"MMA", 1},        {"MT_M", 64},           {"MT_N", mtN},      {"MT_K", 64},
            {"WT_M", 16},      {"STAGES", stages},     {"TMA", 1},         {"WARP_SPECIALIZE", 1},
            {"PERSISTENT", 1}, {"EPILOGUE", epilogue}, {"GROUP_M", group}, {"PINGPONG", 1}};
}

class PingpongGpuTest : public runtime::test::GpuTest,
                        public ::testing::WithParamInterface<PingpongCase> {};

TEST_P(PingpongGpuTest, MatchesTheReference) {
    PingpongCase const& c = GetParam();
    std::string const target = device()->description().target;
    if (target != "sm_90a")
        GTEST_SKIP() << "ping-pong consumers need sm_90a (wgmma, TMA, setmaxnreg), not " << target;
    KernelGraph const graph = lowered(c.command, "gemm.pipeline.json", c.params, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = c.params});
    ASSERT_EQ(kernel.block[2], 12) << "two consumer warpgroups and the producer";
    auto const result = runGemmCase(device(), c, graph, kernel);
    ASSERT_TRUE(result);
    auto const& r = *result;
    EXPECT_EQ(r.grid[1], 1);
    EXPECT_EQ(r.grid[2], 1);
    std::printf("[ gpu      ] %s: %lld workgroups, max relative error %.3g against %s\n",
                c.name.c_str(), static_cast<long long>(r.grid[0]), r.maxRelativeError,
                r.reference.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, PingpongGpuTest,
    ::testing::Values(
        // 64 x 16 = 1024 tiles on 132 workgroups: 7 or 8 each, K of 30 slices round 4 stages.
        PingpongCase{"f16_many_tiles",
                     "gemm-f16.json",
                     pingpong(0),
                     {{"M", 4096}, {"N", 4096}, {"K", 1920}}},
        PingpongCase{"f16_many_tiles_staged",
                     "gemm-f16.json",
                     pingpong(1, 256, 4, 8),
                     {{"M", 4096}, {"N", 4096}, {"K", 1920}}},
        // 99 x 4 = 396 tiles: three a workgroup on 132 multiprocessors (consumer 0 takes two,
        // consumer 1 one), K of 4 slices, the stages.
        PingpongCase{"f16_three_tiles_a_workgroup",
                     "gemm-f16.json",
                     pingpong(1),
                     {{"M", 6336}, {"N", 1024}, {"K", 256}}},
        // Round: 8 x 2 = 16 tiles, fewer than the workgroups: consumer 1 has none.
        PingpongCase{
            "f16_512_cubed", "gemm-f16.json", pingpong(0), {{"M", 512}, {"N", 512}, {"K", 512}}},
        PingpongCase{"f16_512_cubed_staged",
                     "gemm-f16.json",
                     pingpong(1),
                     {{"M", 512}, {"N", 512}, {"K", 512}}},
        // Ragged, fewer tiles than twice the workgroups (16 x 2 = 32).
        PingpongCase{"f16_ragged_few_tiles",
                     "gemm-f16.json",
                     pingpong(1),
                     {{"M", 1000}, {"N", 336}, {"K", 200}}},
        // Ragged, 47 x 4 = 188 tiles: some workgroups one tile, some two; K of 6 slices.
        PingpongCase{"f16_ragged_one_or_two_tiles",
                     "gemm-f16.json",
                     pingpong(0),
                     {{"M", 3000}, {"N", 1000}, {"K", 328}}},
        PingpongCase{"f16_ragged_one_or_two_tiles_staged",
                     "gemm-f16.json",
                     pingpong(1),
                     {{"M", 3000}, {"N", 1000}, {"K", 328}}},
        // One K slice a tile, 64 x 8 = 512 tiles: the ring wraps every four tiles, each consumer
        // skipping one slice of the other's between its own.
        PingpongCase{
            "f16_one_slice", "gemm-f16.json", pingpong(1), {{"M", 4096}, {"N", 2048}, {"K", 64}}},
        PingpongCase{"f16_one_ragged_slice_2_stages",
                     "gemm-f16.json",
                     pingpong(1, 128, 2),
                     {{"M", 2000}, {"N", 1000}, {"K", 8}}},
        // The fused bias + tanh-GELU (issue 19's epilogue), stored from registers and staged.
        PingpongCase{"bias_gelu_many_tiles",
                     "gemm-bias-gelu-f16.json",
                     pingpong(0),
                     {{"M", 4096}, {"N", 4096}, {"K", 1024}}},
        PingpongCase{"bias_gelu_many_tiles_staged",
                     "gemm-bias-gelu-f16.json",
                     pingpong(1, 256, 4, 8),
                     {{"M", 4096}, {"N", 4096}, {"K", 1024}}},
        PingpongCase{"bias_gelu_ragged",
                     "gemm-bias-gelu-f16.json",
                     pingpong(0),
                     {{"M", 3000}, {"N", 1000}, {"K", 328}}},
        PingpongCase{"bias_gelu_ragged_staged",
                     "gemm-bias-gelu-f16.json",
                     pingpong(1),
                     {{"M", 3000}, {"N", 1000}, {"K", 328}}},
        PingpongCase{"bias_gelu_512_cubed_staged",
                     "gemm-bias-gelu-f16.json",
                     pingpong(1),
                     {{"M", 512}, {"N", 512}, {"K", 512}}},
        // bf16 stored transposed, alpha * AB + beta * C, 128 columns, 3 stages.
        PingpongCase{"bf16_transposed_beta_c",
                     "gemm-bf16.json",
                     pingpong(0, 128, 3, 16),
                     {{"M", 3000}, {"N", 2056}, {"K", 712}}},
        PingpongCase{"bf16_transposed_beta_c_staged",
                     "gemm-bf16.json",
                     pingpong(1, 128, 3),
                     {{"M", 3000}, {"N", 2056}, {"K", 712}}}),
    [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
