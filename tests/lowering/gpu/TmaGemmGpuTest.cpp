// TmaGemmGpuTest.cpp: the wgmma GEMM with its K slices loaded by the copy engine (TMA=1) on an
// sm_90a GPU, through the launcher sweeps and `kiln run` use (scheduler::runOnDevice, which
// encodes the tensor maps), against the reference (the CPU, or cuBLAS past 1e8 FLOPs): sizes
// that are and are not multiples of the tiles, tiny, tall and skinny, prefetch deeper than the K
// loop is long, both operand layouts (f16: A K-major, B N-major; bf16 stored transposed: A
// M-major, B K-major), with and without a producer warpgroup (WARP_SPECIALIZE=1). Rows whose
// stride is not a multiple of 16 bytes cannot be described by a tensor map: the launch is
// refused, naming it. Skipped on other GPUs.
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

Schedule tma(std::int64_t mtM, std::int64_t mtN, std::int64_t stages) {
    return {{"MMA", 1},   {"MT_M", mtM},      {"MT_N", mtN}, {"MT_K", 64},
            {"WT_M", 16}, {"STAGES", stages}, {"TMA", 1}};
}

Schedule specialized(Schedule schedule) {
    schedule["WARP_SPECIALIZE"] = 1;
    return schedule;
}

struct TmaCase {
    std::string name, command;
    Schedule params;
    std::map<std::string, double> problem;
};

class TmaGpuTest : public runtime::test::GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (!IsSkipped() && device()->description().target != "sm_90a")
            GTEST_SKIP() << "TMA with wgmma needs sm_90a, not " << device()->description().target;
    }

    runtime::Expected<scheduler::DeviceRunResult> run(TmaCase const& c) {
        KernelGraph const graph = lowered(c.command, "gemm.pipeline.json", c.params, "sm_90a");
        auto const kernel = lowering::emitKernel(graph, {.target = "sm_90a", .schedule = c.params});
        EXPECT_NE(kernel.code.find("cp.async.bulk.tensor.2d"), std::string::npos);
        Command const command = loadCommand(sourcePath("examples/" + c.command));
        auto problem = command.defaults;
        for (auto const& [name, value] : c.problem)
            problem[name] = value;
        return scheduler::runOnDevice(device(), command, problem, graph, kernel);
    }
};

class TmaGemmGpuTest : public TmaGpuTest, public ::testing::WithParamInterface<TmaCase> {};

TEST_P(TmaGemmGpuTest, MatchesTheReference) {
    TmaCase const& c = GetParam();
    auto const result = run(c);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
        << "in " << result.value().worstTensor;
    std::printf("[ gpu      ] %s: max relative error %.3g against %s, %d registers\n",
                c.name.c_str(), result.value().maxRelativeError, result.value().reference.c_str(),
                result.value().registers);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TmaGemmGpuTest,
    ::testing::Values(TmaCase{"f16_128x256_round",
                              "gemm-f16.json",
                              tma(128, 256, 4),
                              {{"M", 512}, {"N", 512}, {"K", 512}}},
                      TmaCase{"f16_128x256_ragged",
                              "gemm-f16.json",
                              tma(128, 256, 4),
                              {{"M", 300}, {"N", 520}, {"K", 200}}},
                      TmaCase{"f16_128x256_tiny",
                              "gemm-f16.json",
                              tma(128, 256, 4),
                              {{"M", 1}, {"N", 8}, {"K", 8}}},
                      TmaCase{"f16_128x256_tall_skinny",
                              "gemm-f16.json",
                              tma(128, 256, 4),
                              {{"M", 4099}, {"N", 24}, {"K", 40}}},
                      TmaCase{"f16_128x256_one_k_tile",
                              "gemm-f16.json",
                              tma(128, 256, 4),
                              {{"M", 130}, {"N", 264}, {"K", 64}}},
                      TmaCase{"f16_128x256_split_k_shape",
                              "gemm-f16.json",
                              tma(128, 256, 4),
                              {{"M", 129}, {"N", 4104}, {"K", 520}}},
                      TmaCase{"f16_128x128_3_stages",
                              "gemm-f16.json",
                              tma(128, 128, 3),
                              {{"M", 384}, {"N", 256}, {"K", 1024}}},
                      TmaCase{"f16_64x64_2_stages",
                              "gemm-f16.json",
                              tma(64, 64, 2),
                              {{"M", 130}, {"N", 72}, {"K", 136}}},
                      TmaCase{"bf16_transposed_128x128",
                              "gemm-bf16.json",
                              tma(128, 128, 3),
                              {{"M", 200}, {"N", 137}, {"K", 200}}},
                      TmaCase{"bf16_transposed_round",
                              "gemm-bf16.json",
                              tma(128, 128, 3),
                              {{"M", 512}, {"N", 512}, {"K", 512}}},
                      TmaCase{"bf16_transposed_tiny",
                              "gemm-bf16.json",
                              tma(64, 64, 2),
                              {{"M", 8}, {"N", 1}, {"K", 8}}},
                      TmaCase{"bf16_transposed_tall_skinny",
                              "gemm-bf16.json",
                              tma(64, 256, 2),
                              {{"M", 4104}, {"N", 3}, {"K", 72}}},
                      // A producer warpgroup issues the copies (WARP_SPECIALIZE=1).
                      TmaCase{"f16_128x256_specialized_round",
                              "gemm-f16.json",
                              specialized(tma(128, 256, 4)),
                              {{"M", 512}, {"N", 512}, {"K", 512}}},
                      TmaCase{"f16_128x256_specialized_ragged",
                              "gemm-f16.json",
                              specialized(tma(128, 256, 4)),
                              {{"M", 300}, {"N", 520}, {"K", 200}}},
                      TmaCase{"f16_128x256_specialized_tiny",
                              "gemm-f16.json",
                              specialized(tma(128, 256, 4)),
                              {{"M", 1}, {"N", 8}, {"K", 8}}},
                      TmaCase{"f16_128x256_specialized_long_k",
                              "gemm-f16.json",
                              specialized(tma(128, 256, 4)),
                              {{"M", 129}, {"N", 4104}, {"K", 1032}}},
                      TmaCase{"f16_64x64_specialized_2_stages",
                              "gemm-f16.json",
                              specialized(tma(64, 64, 2)),
                              {{"M", 130}, {"N", 72}, {"K", 1000}}},
                      TmaCase{"bf16_transposed_specialized",
                              "gemm-bf16.json",
                              specialized(tma(128, 128, 3)),
                              {{"M", 200}, {"N", 137}, {"K", 520}}},
                      TmaCase{"bf16_transposed_specialized_tall_skinny",
                              "gemm-bf16.json",
                              specialized(tma(64, 256, 2)),
                              {{"M", 4104}, {"N", 3}, {"K", 72}}},
                      // Four consumer warpgroups: 640 workitems, 96 registers each at entry.
                      TmaCase{"f16_256x128_specialized_ragged",
                              "gemm-f16.json",
                              specialized(tma(256, 128, 4)),
                              {{"M", 700}, {"N", 264}, {"K", 2056}}}),
    [](auto const& p) { return p.param.name; });

// K = 133 halves: A's rows are 266 bytes apart, which no tensor map describes; the launcher
// says so instead of launching.
TEST_F(TmaGpuTest, RowsNotSixteenBytesApartAreRefusedByName) {
    auto const result = run(
        {"f16_unaligned_k", "gemm-f16.json", tma(64, 64, 2), {{"M", 96}, {"N", 80}, {"K", 133}}});
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message().find("A_tma"), std::string::npos)
        << result.error().message();
    EXPECT_NE(result.error().message().find("not a multiple of 16"), std::string::npos)
        << result.error().message();
}

} // namespace
} // namespace kiln::test
