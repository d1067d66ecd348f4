// StagedEpilogueGpuTest.cpp: EPILOGUE=1 on an sm_90a GPU, the wgmma GEMM's result staged in
// shared memory and written by TMA stores, through the launcher sweeps and `kiln run` use
// (scheduler::runOnDevice, which encodes D's tensor map beside the loads'), against the reference
// (the CPU, or cuBLAS past 1e8 FLOPs): sizes that are and are not multiples of the tile (the copy
// engine clips the edge tiles' stores), tiny, tall and skinny, long K; with and without a producer
// warpgroup and persistent tiles (the next tile's loads in flight while this one's blocks are
// stored); clusters of two; one block a tile (one staging buffer); fused epilogues (bias + GELU,
// residual + ReLU, alpha * AB + beta * C with bf16 operands stored transposed; bias + GELU in a
// kernel for its sizes, its bias loaded before the K loop). D's rows must be
// 16 bytes apart, as the loads' are: the launch is refused, naming D's map. Skipped on other
// GPUs.
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

Schedule staged(std::int64_t mtM, std::int64_t mtN, std::int64_t stages) {
    return {{"MMA", 1},   {"MT_M", mtM},      {"MT_N", mtN}, {"MT_K", 64},
            {"WT_M", 16}, {"STAGES", stages}, {"TMA", 1},    {"EPILOGUE", 1}};
}

Schedule with(Schedule schedule, std::string const& name, std::int64_t value) {
    schedule[name] = value;
    return schedule;
}

// The f16 winner at 4096^3 on an H100 (WARP_SPECIALIZE=1, PERSISTENT=1, GROUP_M=8), staged.
Schedule winner() {
    return with(with(with(staged(128, 256, 4), "WARP_SPECIALIZE", 1), "PERSISTENT", 1), "GROUP_M",
                8);
}

struct StagedCase {
    std::string name, command;
    Schedule params;
    std::map<std::string, double> problem;
    bool forItsSizes = false; ///< a kernel for the problem's sizes (kiln run --specialize)
};

class StagedGpuTest : public runtime::test::GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (!IsSkipped() && device()->description().target != "sm_90a")
            GTEST_SKIP() << "TMA stores with wgmma need sm_90a, not "
                         << device()->description().target;
    }

    runtime::Expected<scheduler::DeviceRunResult> run(StagedCase const& c) {
        KernelGraph const graph = lowered(c.command, "gemm.pipeline.json", c.params, "sm_90a");
        lowering::CodegenOptions options{.target = "sm_90a", .schedule = c.params};
        if (c.forItsSizes)
            for (auto const& [name, value] : c.problem)
                options.sizes[name] = static_cast<std::int64_t>(value);
        auto const kernel = lowering::emitKernel(graph, options);
        // A bias every element of which is inside the tensor is loaded before the K loop.
        if (c.forItsSizes && c.command == "gemm-bias-gelu-f16.json") {
            EXPECT_NE(kernel.code.find("// Bias loaded before the loop"), std::string::npos);
        }
        EXPECT_NE(kernel.code.find("cp.async.bulk.tensor.2d.global.shared::cta"),
                  std::string::npos);
        Command const command = loadCommand(sourcePath("examples/" + c.command));
        auto problem = command.defaults;
        for (auto const& [name, value] : c.problem)
            problem[name] = value;
        return scheduler::runOnDevice(device(), command, problem, graph, kernel);
    }
};

class StagedEpilogueGpuTest : public StagedGpuTest,
                              public ::testing::WithParamInterface<StagedCase> {};

TEST_P(StagedEpilogueGpuTest, MatchesTheReference) {
    StagedCase const& c = GetParam();
    auto const result = run(c);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
        << "in " << result.value().worstTensor;
    std::printf("[ gpu      ] %s: max relative error %.3g against %s, %d registers\n",
                c.name.c_str(), result.value().maxRelativeError, result.value().reference.c_str(),
                result.value().registers);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, StagedEpilogueGpuTest,
    ::testing::Values(
        // The winner's schedule: a producer warpgroup, persistent tiles, grouped order.
        StagedCase{
            "f16_winner_round", "gemm-f16.json", winner(), {{"M", 512}, {"N", 512}, {"K", 512}}},
        StagedCase{
            "f16_winner_ragged", "gemm-f16.json", winner(), {{"M", 300}, {"N", 520}, {"K", 200}}},
        StagedCase{"f16_winner_tiny", "gemm-f16.json", winner(), {{"M", 1}, {"N", 8}, {"K", 8}}},
        StagedCase{"f16_winner_tall_skinny",
                   "gemm-f16.json",
                   winner(),
                   {{"M", 4099}, {"N", 24}, {"K", 40}}},
        StagedCase{
            "f16_winner_long_k", "gemm-f16.json", winner(), {{"M", 129}, {"N", 4104}, {"K", 1032}}},
        // More tiles than workgroups: each takes several, its stores of one still in flight
        // while the next is multiplied.
        StagedCase{"f16_winner_many_tiles",
                   "gemm-f16.json",
                   winner(),
                   {{"M", 2056}, {"N", 2056}, {"K", 264}}},
        // Without a producer, without persistence, and each alone.
        StagedCase{"f16_128x256_plain_ragged",
                   "gemm-f16.json",
                   staged(128, 256, 3),
                   {{"M", 300}, {"N", 520}, {"K", 200}}},
        StagedCase{"f16_128x256_persistent_many_tiles",
                   "gemm-f16.json",
                   with(staged(128, 256, 3), "PERSISTENT", 1),
                   {{"M", 1030}, {"N", 1032}, {"K", 136}}},
        StagedCase{"f16_128x256_specialized_ragged",
                   "gemm-f16.json",
                   with(staged(128, 256, 4), "WARP_SPECIALIZE", 1),
                   {{"M", 300}, {"N", 520}, {"K", 200}}},
        // One block a tile: one staging buffer, waited for before each tile writes it.
        StagedCase{"f16_64x64_persistent_one_block",
                   "gemm-f16.json",
                   with(staged(64, 64, 2), "PERSISTENT", 1),
                   {{"M", 1030}, {"N", 1032}, {"K", 136}}},
        // Four consumer warpgroups: boxes of 256 rows.
        StagedCase{"f16_256x128_specialized_persistent",
                   "gemm-f16.json",
                   with(with(staged(256, 128, 2), "WARP_SPECIALIZE", 1), "PERSISTENT", 1),
                   {{"M", 700}, {"N", 264}, {"K", 2056}}},
        // bf16 stored transposed, alpha * AB + beta * C: C read in place, the result staged.
        StagedCase{"bf16_transposed_beta_c",
                   "gemm-bf16.json",
                   staged(128, 128, 3),
                   {{"M", 200}, {"N", 136}, {"K", 200}}},
        StagedCase{"bf16_transposed_beta_c_winner",
                   "gemm-bf16.json",
                   winner(),
                   {{"M", 520}, {"N", 264}, {"K", 520}}},
        StagedCase{"bf16_transposed_tall_skinny",
                   "gemm-bf16.json",
                   with(staged(64, 256, 2), "PERSISTENT", 1),
                   {{"M", 4104}, {"N", 8}, {"K", 72}}},
        // Fused epilogues, computed in registers and then staged.
        StagedCase{"bias_gelu_winner_ragged",
                   "gemm-bias-gelu-f16.json",
                   winner(),
                   {{"M", 300}, {"N", 520}, {"K", 200}}},
        // For its sizes: the bias loaded before the K loop (PtxPreload.cpp), on one tile a
        // workgroup and on several.
        StagedCase{"bias_gelu_winner_for_its_sizes",
                   "gemm-bias-gelu-f16.json",
                   winner(),
                   {{"M", 512}, {"N", 512}, {"K", 512}},
                   true},
        StagedCase{"bias_gelu_winner_for_its_sizes_many_tiles",
                   "gemm-bias-gelu-f16.json",
                   winner(),
                   {{"M", 2048}, {"N", 4096}, {"K", 256}},
                   true},
        StagedCase{"residual_relu_winner_ragged",
                   "gemm-residual-relu-epilogue-f16.json",
                   winner(),
                   {{"M", 300}, {"N", 520}, {"K", 200}}},
        // Clusters of two: each workgroup stages and stores its own tile.
        StagedCase{"f16_128x256_cluster_m_2_ragged",
                   "gemm-f16.json",
                   with(staged(128, 256, 4), "CLUSTER_M", 2),
                   {{"M", 300}, {"N", 520}, {"K", 200}}},
        StagedCase{"f16_128x256_specialized_cluster_n_2_ragged",
                   "gemm-f16.json",
                   with(with(staged(128, 256, 4), "WARP_SPECIALIZE", 1), "CLUSTER_N", 2),
                   {{"M", 300}, {"N", 520}, {"K", 200}}}),
    [](auto const& p) { return p.param.name; });

// N = 137 bf16: D's rows are 274 bytes apart, which no tensor map describes (A and B, stored
// transposed, have rows of M and K); the launcher says so instead of launching.
TEST_F(StagedGpuTest, DsRowsNotSixteenBytesApartAreRefusedByName) {
    auto const result = run({"bf16_unaligned_n",
                             "gemm-bf16.json",
                             staged(128, 128, 3),
                             {{"M", 200}, {"N", 137}, {"K", 200}}});
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message().find("D_tma"), std::string::npos)
        << result.error().message();
    EXPECT_NE(result.error().message().find("not a multiple of 16"), std::string::npos)
        << result.error().message();
}

} // namespace
} // namespace kiln::test
