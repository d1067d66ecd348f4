// GemmEpilogueTest.cpp: GEMMs with a fused epilogue on every GEMM path (issue 19).
//
// examples/gemm-bias-gelu-f16.json (a bias broadcast over the rows by a stride of 0, then
// tanh-GELU), examples/gemm-residual-relu-epilogue-f16.json (a scaled product plus a residual
// C, then ReLU) and tests/lowering/commands/gemm-bias-silu-residual-bf16.json (SiLU, its inputs
// loaded before the Multiply, transposed bf16 operands), lowered by rules/gemm.pipeline.json for
// SIMT, mma.sync (warps and a grid of warps), wgmma and MFMA: the reference interpreter agrees
// with the Command after every rule application at sizes no tile divides; the values of the
// chain are distributed as the accumulators are, so code generation holds them in the same
// registers' places; the PTX assembles without spills, and the chain runs chunk by chunk (a
// chunk of the bias loaded, computed and stored before the next). Golden files: the lowered
// graph and the PTX of a small mma.sync case.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R GemmEpilogueGolden   (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

struct EpiloguePath {
    std::string name;
    std::map<std::string, std::int64_t> params;
    std::string target;
    std::string multiply; ///< the instruction the product runs on ("" for SIMT fmas)
};

std::vector<EpiloguePath> const kPaths = {
    {"simt", {{"MMA", 0}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}}, "sm_80", ""},
    {"mma_sync",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
     "sm_80",
     "mma.sync.aligned.m16n8k16"},
    {"mma_sync_warp_grid",
     {{"MMA", 1},
      {"MT_M", 128},
      {"MT_N", 128},
      {"MT_K", 32},
      {"WT_M", 64},
      {"WT_N", 64},
      {"STAGES", 3}},
     "sm_80",
     "mma.sync.aligned.m16n8k16"},
    // The sweep's best known point on the H100 (issue 15), the one scripts/gpu-epilogue.sh times.
    {"wgmma",
     {{"MMA", 1},
      {"MT_M", 128},
      {"MT_N", 256},
      {"MT_K", 64},
      {"WT_M", 16},
      {"WT_N", 0},
      {"STAGES", 4}},
     "sm_90a",
     "wgmma.mma_async"},
    {"mfma",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"WT_N", 32}},
     "gfx90a",
     "v_mfma_f32_16x16x16"},
    {"mfma",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"WT_N", 32}},
     "gfx942",
     "v_mfma_f32_16x16x16"},
    {"simt", {{"MMA", 0}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}}, "gfx942", ""},
};

// The shipped examples, and a test Command that loads the bias and the residual before the
// Multiply, of transposed bf16 operands, with SiLU between a scaled sum and a residual add.
std::vector<std::string> const kEpilogues = {
    "examples/gemm-bias-gelu-f16.json", "examples/gemm-residual-relu-epilogue-f16.json",
    "tests/lowering/commands/gemm-bias-silu-residual-bf16.json"};

using Param = std::tuple<std::string, EpiloguePath>;

class GemmEpilogue : public ::testing::TestWithParam<Param> {};

TEST_P(GemmEpilogue, KeepsTheMeaningAfterEveryRuleAndRunsOnTheAccumulators) {
    auto const& [example, path] = GetParam();
    Command const command = loadCommand(sourcePath(example));
    // Odd sizes: no macro tile, warp tile or K slice divides them.
    auto problem = command.defaults;
    problem["M"] = 70;
    problem["N"] = 74;
    problem["K"] = 40;
    SemanticCheck const semantics(command, problem, 19);
    KernelGraph graph = translate(command);
    std::vector<std::string> applied;
    rules::lower(rules::loadPipeline(sourcePath("rules/gemm.pipeline.json")), graph,
                 {.parameters = path.params,
                  .arch = rules::archFacts(path.target),
                  .observe = [&](rules::Application const& a, KernelGraph const& after) {
                      applied.push_back(a.rule);
                      semantics.check(after, a.ruleset + "/" + a.rule);
                  }});
    // The value between the product and the stored result is distributed with the product.
    EXPECT_NE(std::find(applied.begin(), applied.end(), "distribute-epilogue"), applied.end());
    // Code generation holds every value of the chain where the accumulators are: a value it
    // could not hold would stop it ("no workitem can hold it").
    auto const kernel =
        lowering::emitKernel(graph, {.target = path.target, .schedule = path.params});
    if (!path.multiply.empty()) {
        EXPECT_NE(kernel.code.find(path.multiply), std::string::npos) << path.multiply;
    }
    if (!path.target.starts_with("sm_"))
        return; // AMDGCN: assembled and disassembled in tests/amdgcn/GraphKernelTest.cpp
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const assembled = runtime::assemblePtx(kernel.code, path.target);
    ASSERT_TRUE(assembled.ok()) << assembled.error().message();
    EXPECT_EQ(assembled.value().spillStores, 0);
    EXPECT_EQ(assembled.value().spillLoads, 0);
}

INSTANTIATE_TEST_SUITE_P(Paths, GemmEpilogue,
                         ::testing::Combine(::testing::ValuesIn(kEpilogues),
                                            ::testing::ValuesIn(kPaths)),
                         [](auto const& p) {
                             std::string name = std::get<0>(p.param);
                             name = name.substr(name.rfind('/') + 1);
                             name = name.substr(0, name.find('.'));
                             for (char& c : name)
                                 if (c == '-')
                                     c = '_';
                             return name + "_" + std::get<1>(p.param).name + "_" +
                                    std::get<1>(p.param).target;
                         });

TEST(GemmEpilogueChunks, EachChunkIsLoadedComputedAndStoredBeforeTheNext) {
    // 128 accumulators a workitem on warpgroups: held whole, the bias was read element by
    // element beside them, 255 registers and 1,172 bytes of spills on sm_90a.
    EpiloguePath const& wgmma = kPaths[3];
    auto const kernel = lowering::emitKernel(
        lowered("gemm-bias-gelu-f16.json", "gemm.pipeline.json", wgmma.params, wgmma.target),
        {.target = wgmma.target, .schedule = wgmma.params});
    auto const epilogue = kernel.code.substr(kernel.code.rfind("$pipelined"));
    // Each workitem stores its 128 results in pairs of f16 (one 32-bit word each), and loads
    // the bias it needs at the same columns in pairs too, one chunk of 8 at a time, once for
    // the two rows (r and r + 8) of each column it holds.
    EXPECT_EQ(occurrences(epilogue, "st.global.b32"), 128u / 2);
    EXPECT_EQ(occurrences(epilogue, "ld.global.b32"), 128u / 4);
    std::size_t const firstStore = epilogue.find("st.global");
    std::size_t const lastLoad = epilogue.rfind("ld.global");
    ASSERT_NE(firstStore, std::string::npos);
    ASSERT_NE(lastLoad, std::string::npos);
    EXPECT_LT(firstStore, lastLoad) << "the results are stored only after every bias is loaded";
    // Before the first result, only the first chunk's bias (four pairs) is loaded.
    std::size_t const firstResult = epilogue.find("cvt.rn.f16.f32");
    ASSERT_NE(firstResult, std::string::npos);
    EXPECT_EQ(occurrences(epilogue.substr(0, firstResult), "ld.global.b32"), 4u);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const assembled = runtime::assemblePtx(kernel.code, wgmma.target);
    ASSERT_TRUE(assembled.ok()) << assembled.error().message();
    EXPECT_EQ(assembled.value().spillStores, 0);
    EXPECT_LE(assembled.value().registers, 255);
}

TEST(GemmEpilogueChunks, TheTuneWinnersGeluLoadsEachBiasOnceRoundsOnceAndFoldsItsLiterals) {
    // The fused Command's tune winner on the H100 (issue 19: 1.103x the plain GEMM there): a
    // producer warpgroup, persistent tiles, the result staged. Per workitem, 128 accumulators of
    // 64 columns (rows r and r + 8 of each); before, the epilogue loaded the bias again for
    // each row (64 pairs), rounded each result to f16 and back to f32 before the store rounded
    // it again (256 cvt.rn.f16.f32, 128 cvt.f32.f16 more), and multiplied nine times an element
    // (0.5, 2, -2, 0.7978845608 and log2 e each on its own): ~21 SASS instructions an element
    // past the plain GEMM's, ~11 now (ex2, rcp, three multiplies, an fma, two adds, a bias
    // conversion for two elements).
    std::map<std::string, std::int64_t> schedule = kPaths[3].params;
    schedule.insert(
        {{"TMA", 1}, {"WARP_SPECIALIZE", 1}, {"PERSISTENT", 1}, {"GROUP_M", 0}, {"EPILOGUE", 1}});
    auto const kernel = lowering::emitKernel(
        lowered("gemm-bias-gelu-f16.json", "gemm.pipeline.json", schedule, "sm_90a"),
        {.target = "sm_90a", .schedule = schedule});
    auto const epilogue = kernel.code.substr(kernel.code.rfind("wgmma.wait_group.sync.aligned 0"));
    std::size_t const elements = 128;
    EXPECT_EQ(occurrences(epilogue, "ld.global.b32"), elements / 4); // a pair, two rows
    EXPECT_EQ(occurrences(epilogue, "ld.global.b16"), elements / 2); // the masked path's
    EXPECT_EQ(occurrences(epilogue, "cvt.f32.f16"), elements / 2 + elements / 2); // the bias
    EXPECT_EQ(occurrences(epilogue, "cvt.rn.f16.f32"), elements); // by the store alone
    EXPECT_EQ(occurrences(epilogue, "st.shared.b32"), elements / 2);
    EXPECT_EQ(occurrences(epilogue, "ex2.approx.ftz.f32"), elements);
    EXPECT_EQ(occurrences(epilogue, "rcp.approx.ftz.f32"), elements);
    // The exponent h (k1 + k2 h h) (factorPolynomials; log2 e in k1 and k2): h h, k2 * that,
    // h * the sum (whose add ptxas fuses into an fma); then h * the reciprocal.
    EXPECT_EQ(occurrences(epilogue, "mul.f32"), 4 * elements);
    EXPECT_EQ(occurrences(epilogue, "div."), 0u);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const assembled = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(assembled.ok()) << assembled.error().message();
    EXPECT_EQ(assembled.value().spillStores, 0);
    EXPECT_EQ(assembled.value().spillLoads, 0);
}

TEST(GemmEpilogueChunks, TheChainsRegistersAreGivenBackChunkByChunk) {
    // Waves of 32 x 128 on gfx942: 64 accumulators a lane. Held whole, the residual, the scaled
    // sum and the result took every VGPR ("out of VGPRs on gfx942 ... 255 of the 256 are in
    // use"); given back after each chunk's store, the kernel needs what the plain GEMM needs.
    std::map<std::string, std::int64_t> const schedule = {
        {"MMA", 1}, {"MT_M", 256}, {"MT_N", 128}, {"MT_K", 64}, {"WT_M", 32}, {"STAGES", 1}};
    auto vgprs = [&](std::string const& example) {
        auto const code =
            lowering::emitKernel(lowered(example, "gemm.pipeline.json", schedule, "gfx942"),
                                 {.target = "gfx942", .schedule = schedule})
                .code;
        std::string const key = ".amdhsa_next_free_vgpr ";
        auto const at = code.find(key);
        EXPECT_NE(at, std::string::npos);
        return std::stoi(code.substr(at + key.size()));
    };
    EXPECT_LE(vgprs("gemm-residual-relu-epilogue-f16.json"), vgprs("gemm-f16.json"));
}

TEST(GemmEpilogueChunks, AChainOfOneChunkIsWrittenAsBefore) {
    // Four elements a workitem (axpy): one chunk, each operation whole in turn, as without
    // chunks: both loads before the first multiply.
    auto const kernel = lowering::emitKernel(lowered("axpy.json", "elementwise.pipeline.json"),
                                             {.target = "sm_90a"});
    std::size_t const compute = kernel.code.find("mul.f32");
    ASSERT_NE(compute, std::string::npos);
    EXPECT_EQ(occurrences(kernel.code.substr(0, compute), "ld.global.v4.f32"), 2u);
}

// A small mma.sync case (one warp of 16 x 32 accumulators: two chunks of 8 a lane) on sm_90.
std::map<std::string, std::int64_t> const kSmall = {{"MMA", 1},   {"MT_M", 16}, {"MT_N", 32},
                                                    {"MT_K", 16}, {"WT_M", 16}, {"STAGES", 2}};

TEST(GemmEpilogueGolden, LoweredGraph) {
    expectGoldenFile(
        "tests/golden/lowered/gemm_bias_gelu_f16_mma.txt",
        toText(lowered("gemm-bias-gelu-f16.json", "gemm.pipeline.json", kSmall, "sm_90")));
}

TEST(GemmEpilogueGolden, Ptx) {
    auto const kernel = lowering::emitKernel(
        lowered("gemm-bias-gelu-f16.json", "gemm.pipeline.json", kSmall, "sm_90"),
        {.target = "sm_90", .schedule = kSmall});
    expectGoldenFile("tests/golden/ptx/gemm_bias_gelu_f16_mma.sm_90.ptx", kernel.code);
}

} // namespace
} // namespace kiln::test
