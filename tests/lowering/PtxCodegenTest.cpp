// PtxCodegenTest.cpp: every shipped example that code generation covers is emitted for each
// NVIDIA target and assembled by ptxas; small kernels are compared with golden PTX.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R PtxGolden    (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kiln::test {
namespace {

struct Case {
    std::string name, command, pipeline;
    std::map<std::string, std::int64_t> params;
    int maxRegisters = 128; ///< what ptxas may use without the test calling it many
};

std::vector<Case> const kCases = {
    {"axpy", "axpy.json", "elementwise.pipeline.json", {}},
    {"axpy_vec1", "axpy.json", "elementwise.pipeline.json", {{"VEC", 1}, {"WG_SIZE", 128}}},
    {"axpy_vec8", "axpy.json", "elementwise.pipeline.json", {{"VEC", 8}}},
    {"row_sum", "row-reduction.json", "reduction.pipeline.json", {}},
    {"fused_f16", "fused-elementwise.json", "elementwise.pipeline.json", {{"VEC", 8}}},
    {"fused_f16_vec2", "fused-elementwise.json", "elementwise.pipeline.json", {{"VEC", 2}}},
    {"gemm", "gemm.json", "gemm.pipeline.json", {}},
    {"gemm_f16", "gemm-f16.json", "gemm.pipeline.json", {}},
    {"gemm_unstaged", "gemm.json", "gemm.pipeline.json", {{"STAGES", 0}}},
    {"gemm_128x64_tt8x4",
     "gemm.json",
     "gemm.pipeline.json",
     {{"MT_M", 128}, {"MT_N", 64}, {"MT_K", 8}, {"TT_M", 8}, {"TT_N", 4}},
     255},
    {"gemm_prefetch", "gemm.json", "gemm.pipeline.json", {{"STAGES", 2}}},
    {"gemm_f16_mma",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 16}, {"MT_N", 16}, {"MT_K", 16}, {"WT_M", 16}, {"STAGES", 2}}},
    {"gemm_f16_mma_128x128",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
     255},
    {"gemm_f16_mma_warp_grid",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1},
      {"MT_M", 128},
      {"MT_N", 256},
      {"MT_K", 32},
      {"WT_M", 64},
      {"WT_N", 64},
      {"STAGES", 3}},
     255},
    // Three stages: four (208896 bytes) are more shared memory than sm_80 has (see
    // AScheduleNeedingMoreSharedMemoryThanTheTargetHasIsRefused).
    {"gemm_f16_wgmma",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 256}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}},
     255},
    {"gemm_bf16_wgmma",
     "gemm-bf16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}},
     255},
    {"gemm_bf16_mma",
     "gemm-bf16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 32}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 2}},
     255},
    // The K loop unrolled (gemm-k-unroll); with STAGES >= 2 the loop is then not pipelined.
    {"gemm_unroll2", "gemm.json", "gemm.pipeline.json", {{"UNROLL", 2}}},
    {"gemm_f16_mma_unroll4",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1},
      {"MT_M", 64},
      {"MT_N", 64},
      {"MT_K", 16},
      {"WT_M", 32},
      {"STAGES", 3},
      {"UNROLL", 4}},
     255},
};

class PtxasTest : public ::testing::TestWithParam<std::tuple<Case, std::string>> {};

TEST_P(PtxasTest, EmittedKernelAssembles) {
    auto const& [c, target] = GetParam();
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const kernel = lowering::emitKernel(lowered(c.command, c.pipeline, c.params, target),
                                             {.target = target, .schedule = c.params});
    auto const result = runtime::assemblePtx(kernel.code, target);
    ASSERT_TRUE(result.ok()) << result.error().message() << "\n" << kernel.code;
    EXPECT_GT(result.value().registers, 0);
    EXPECT_EQ(result.value().spillStores, 0);
    EXPECT_LE(result.value().registers, c.maxRegisters) << c.name << " uses many registers";
}

INSTANTIATE_TEST_SUITE_P(Examples, PtxasTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values("sm_80", "sm_90a")),
                         [](auto const& p) {
                             return std::get<0>(p.param).name + "_" + std::get<1>(p.param);
                         });

TEST(PtxCodegen, VectorAccessesWhereElementsAreConsecutiveAndAligned) {
    auto const four = lowering::emitKernel(lowered("axpy.json", "elementwise.pipeline.json"), {});
    EXPECT_NE(four.code.find("ld.global.v4.f32"), std::string::npos);
    EXPECT_NE(four.code.find("st.global.v4.f32"), std::string::npos);
    auto const one =
        lowering::emitKernel(lowered("axpy.json", "elementwise.pipeline.json", {{"VEC", 1}}), {});
    EXPECT_EQ(one.code.find(".v4"), std::string::npos);
    EXPECT_EQ(one.code.find(".v2"), std::string::npos);
    // Eight floats are two 16-byte accesses, never one 32-byte one.
    auto const eight =
        lowering::emitKernel(lowered("axpy.json", "elementwise.pipeline.json", {{"VEC", 8}}), {});
    EXPECT_EQ(std::count(eight.code.begin(), eight.code.end(), '\n') > 0, true);
    std::size_t vectors = 0;
    for (std::size_t at = 0; (at = eight.code.find("ld.global.v4.f32", at)) != std::string::npos;
         ++at)
        ++vectors;
    EXPECT_EQ(vectors, 4u); // two per tensor, X and Y
}

TEST(PtxCodegen, UnrolledKLoopWritesItsBodyOncePerCopy) {
    auto const one = lowering::emitKernel(lowered("gemm.json", "gemm.pipeline.json"), {});
    std::map<std::string, std::int64_t> const params{{"UNROLL", 3}};
    auto const three = lowering::emitKernel(lowered("gemm.json", "gemm.pipeline.json", params),
                                            {.schedule = params});
    // Three copies of the body: its fmas, its stores to shared memory, its barriers (two that
    // meet the staged tiles and one that ends the copy before the next overwrites them).
    EXPECT_EQ(occurrences(three.code, "fma.rn.f32"), 3 * occurrences(one.code, "fma.rn.f32"));
    EXPECT_EQ(occurrences(three.code, "st.shared.f32"), 3 * occurrences(one.code, "st.shared.f32"));
    EXPECT_EQ(occurrences(three.code, "bar.sync"), 3u * 3);
    // One loop remains, with one back edge; each copy is guarded by ko * 3 + u < K tiles (the
    // counter a constant in each), three branches to the end of the copies and its label.
    EXPECT_EQ(occurrences(one.code, "bra.uni $loop"), 1u);
    EXPECT_EQ(occurrences(three.code, "bra.uni $loop"), 1u);
    EXPECT_EQ(occurrences(three.code, "unrolled"), 3u + 1);
}

TEST(PtxCodegen, UnrolledKLoopIsNotPipelined) {
    std::map<std::string, std::int64_t> const params{{"STAGES", 2}, {"UNROLL", 2}};
    auto const kernel = lowering::emitKernel(lowered("gemm.json", "gemm.pipeline.json", params),
                                             {.target = "sm_80", .schedule = params});
    // The copies stage as a loop without prefetch does: no cp.async groups in flight, one
    // copy of the tiles in shared memory.
    EXPECT_EQ(occurrences(kernel.code, "cp.async.commit_group"), 0u);
    EXPECT_EQ(kernel.sharedBytes, 2u * 64 * 16 * 4);
    EXPECT_EQ(occurrences(kernel.code, "fma.rn.f32"), 2u * 16 * 4 * 4);
}

TEST(PtxCodegen, GemmStagesThroughSharedMemoryAndAccumulatesInRegisters) {
    // 64 x 64 macro tiles, K in steps of 16, 4 x 4 register tiles: 16 x 16 workitems.
    auto const kernel = lowering::emitKernel(lowered("gemm.json", "gemm.pipeline.json"), {});
    EXPECT_EQ(kernel.block[0], 16);
    EXPECT_EQ(kernel.block[1], 16);
    EXPECT_EQ(kernel.sharedBytes, 2u * 64 * 16 * 4); // one K slice of A and one of B
    // Every product goes straight into the accumulator: MT_K x TT_M x TT_N fmas, no adds.
    EXPECT_EQ(occurrences(kernel.code, "fma.rn.f32"), 16u * 4 * 4);
    // Four rows (or columns) at one K are one 16-byte read of the K-major shared tile.
    EXPECT_EQ(occurrences(kernel.code, "ld.shared.v4.f32"), 16u * 2);
    // A and B are each stored cooperatively (four elements per workitem) and met at a barrier;
    // one more barrier ends the iteration before the next one overwrites the tiles.
    EXPECT_EQ(occurrences(kernel.code, "st.shared.f32"), 2u * 4);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), 3u);
    EXPECT_NE(kernel.code.find("ld.global.v4.f32"), std::string::npos);
}

// MMA = 1 for an f16 GEMM of 64 x 64 x 32 tiles: two warps of 32 x 64, each 2 x 8 fragments.
lowering::EmittedKernel tensorCoreGemm(std::string const& command,
                                       std::map<std::string, std::int64_t> params = {}) {
    std::map<std::string, std::int64_t> schedule = {
        {"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}};
    for (auto const& [name, value] : params)
        schedule[name] = value;
    return lowering::emitKernel(lowered(command, "gemm.pipeline.json", schedule),
                                {.target = "sm_90a", .schedule = schedule});
}

TEST(PtxCodegen, TensorCoreGemmReadsFragmentsWithLdmatrixAndMultipliesWithMmaSync) {
    auto const kernel = tensorCoreGemm("gemm-f16.json");
    EXPECT_EQ(kernel.block[0], 4); // a lane's column pair
    EXPECT_EQ(kernel.block[1], 8); // its row
    EXPECT_EQ(kernel.block[2], 2); // the warp
    // Per warp and K step of 16: 2 x 8 fragments, two steps per K slice of 32.
    EXPECT_EQ(occurrences(kernel.code, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
              2u * 8 * 2);
    // A is K-contiguous (row-major): plain ldmatrix; B is N-contiguous: .trans, two 8-column
    // slabs per ldmatrix.x4.
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 2u * 2);
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 4u * 2);
    // The 16-byte runs of both slices go by cp.async: 64 x 32 and 32 x 64 halves over 64 lanes.
    EXPECT_EQ(occurrences(kernel.code, "cp.async.cg.shared.global"), 4u + 4);
    EXPECT_EQ(occurrences(kernel.code, "fma.rn.f32"), 0u);
    // Rows padded by 16 bytes: A 64 x (32 + 8), B 32 x (64 + 8) halves.
    EXPECT_EQ(kernel.sharedBytes, 64u * 40 * 2 + 32 * 72 * 2);
}

TEST(PtxCodegen, AGridOfWarpsReadsEachWarpsOwnRowsAndColumns) {
    // WT_N = 32: 64 x 64 tiles over a 2 x 2 grid of warps of 32 x 32, each 2 x 4 fragments.
    auto const kernel = tensorCoreGemm("gemm-f16.json", {{"WT_N", 32}});
    EXPECT_EQ(kernel.block[2], 4);
    EXPECT_EQ(occurrences(kernel.code, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
              2u * 4 * 2);
    // Per warp and K step: A's 32 rows in 2 ldmatrix.x4, B's 32 columns in 2 (.trans): a warp
    // no longer reads all 64 columns of B.
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 2u * 2);
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 2u * 2);
    // The same slices staged, over 128 lanes now.
    EXPECT_EQ(occurrences(kernel.code, "cp.async.cg.shared.global"), 2u + 2);
}

TEST(PtxCodegen, AnEpilogueReadsCAsItComputesEachResult) {
    // alpha * AB + beta * C with 128 accumulators a lane (bf16, 128 x 128, warps of 32 x 128).
    // Held whole, C was live next to the accumulators: 304 bytes of spills on sm_90a.
    std::map<std::string, std::int64_t> const schedule = {
        {"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}};
    auto const kernel =
        lowering::emitKernel(lowered("gemm-bf16.json", "gemm.pipeline.json", schedule),
                             {.target = "sm_90a", .schedule = schedule});
    // C is loaded one chunk of 8 registers at a time (in pairs, one 32-bit word each), right
    // before the results it feeds are computed and stored (KernelWalker::elementwiseChunks).
    auto const epilogue = kernel.code.substr(kernel.code.rfind("$pipelined"));
    std::size_t const firstResult = epilogue.find("add.f32");
    ASSERT_NE(firstResult, std::string::npos);
    EXPECT_EQ(occurrences(epilogue.substr(0, firstResult), "ld.global.b32"), 4u);
    EXPECT_LT(epilogue.find("st.global"), epilogue.rfind("ld.global"));
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().spillStores, 0);
}

TEST(PtxCodegen, TransposedOperandsAreReadWithTheOtherLdmatrix) {
    // bf16, A stored K x M (contiguous along M: .trans) and B stored N x K (along K: plain).
    auto const kernel = tensorCoreGemm("gemm-bf16.json");
    EXPECT_EQ(occurrences(kernel.code, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
              2u * 8 * 2);
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 2u * 2);
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 4u * 2);
}

TEST(PtxCodegen, WarpgroupsMultiplyWithWgmmaFromSwizzledTiles) {
    // Warps of 16 rows over K slices of 64: the four warps of a 64 x 64 tile are one warpgroup,
    // and each K step of 16 is one wgmma.m64n64k16 reading A (K-major) and B (N-major: the
    // last immediate) from shared memory, without ldmatrix.
    std::map<std::string, std::int64_t> const warpgroup = {
        {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 1}};
    auto const kernel = tensorCoreGemm("gemm-f16.json", warpgroup);
    EXPECT_EQ(kernel.block[2], 4);
    EXPECT_EQ(occurrences(kernel.code, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), 4u);
    EXPECT_EQ(occurrences(kernel.code, ", 1, 1, 1, 0, 1;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "wgmma.wait_group.sync.aligned 0"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "ldmatrix"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "mma.sync"), 0u);
    // Swizzled instead of padded: 64 x 64 halves each, 1024-byte aligned; what the workgroup
    // stored reaches wgmma's async proxy before each barrier.
    EXPECT_EQ(kernel.sharedBytes, 2u * 64 * 64 * 2);
    EXPECT_NE(kernel.code.find(".extern .shared .align 1024 .b8 kiln_shared[]"), std::string::npos);
    EXPECT_EQ(occurrences(kernel.code, "fence.proxy.async.shared::cta;\n    bar.sync 0"),
              occurrences(kernel.code, "bar.sync 0"));
    // bf16 stored transposed: A M-major, B K-major.
    auto const transposed = tensorCoreGemm("gemm-bf16.json", warpgroup);
    EXPECT_EQ(occurrences(transposed.code, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"),
              4u);
    EXPECT_EQ(occurrences(transposed.code, ", 1, 1, 1, 1, 0;"), 4u);
    // sm_80 has no wgmma: the same graph on mma.sync, rows padded.
    auto schedule = warpgroup;
    schedule.insert({{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}});
    auto const ampere =
        lowering::emitKernel(lowered("gemm-f16.json", "gemm.pipeline.json", schedule),
                             {.target = "sm_80", .schedule = schedule});
    EXPECT_EQ(occurrences(ampere.code, "wgmma"), 0u);
    EXPECT_EQ(occurrences(ampere.code, "mma.sync.aligned.m16n8k16"), 4u * 8);
    EXPECT_EQ(ampere.sharedBytes, 2u * 64 * 72 * 2);
}

TEST(PtxCodegen, WithoutSixteenBitOperandsTheWarpLayoutMultipliesWithFma) {
    // The warps' layout is a layout like any other: f32 operands take the SIMT path on it.
    auto const kernel = tensorCoreGemm("gemm.json");
    EXPECT_EQ(occurrences(kernel.code, "mma.sync"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "fma.rn.f32"), 2u * 8 * 4 * 32);
}

TEST(PtxCodegen, PrefetchKeepsStagesMinusOneSlicesInFlight) {
    auto const one = tensorCoreGemm("gemm-f16.json");
    auto const three = tensorCoreGemm("gemm-f16.json", {{"STAGES", 3}});
    EXPECT_EQ(occurrences(one.code, "cp.async.commit_group"), 0u);
    EXPECT_EQ(occurrences(one.code, "cp.async.wait_all"), 2u); // at each slice's barrier
    // Two versions of the loop: without branches where K and N are multiples of 8 (every run
    // aligned), and with them. The fast one produces two slices before the loop, the plain one
    // loops twice over one producer; each produces one slice per iteration and waits for all but
    // one before each iteration's single barrier.
    EXPECT_EQ(occurrences(three.code, "cp.async.commit_group"), 3u + 2);
    EXPECT_EQ(occurrences(three.code, "cp.async.wait_group 1"), 2u);
    EXPECT_EQ(occurrences(three.code, "bar.sync 0"), 2u);
    EXPECT_EQ(three.sharedBytes, 3 * ((one.sharedBytes + 127) / 128 * 128));
    // The fast producer runs at the loop counter + 0 and + 1 before the loop, + 2 inside it.
    EXPECT_EQ(occurrences(three.code, "cp.async.cg.shared.global"), (3u + 2) * 8);
    // The fast loop is one basic block from its barrier to its back edge: its copies zero-fill
    // what lies outside the tensor (a byte count, not a branch), after the multiply.
    auto const top = three.code.find("bar.sync 0"), end = three.code.find("bra.uni $loop", top);
    std::string const fast = three.code.substr(top, end - top);
    EXPECT_EQ(occurrences(fast, "bra"), 0u);
    EXPECT_EQ(occurrences(fast, "cp.async.cg.shared.global"), 8u);
    EXPECT_LT(fast.rfind("mma.sync"), fast.find("cp.async.cg.shared.global"));
    EXPECT_NE(three.code.find("bra $unaligned"), std::string::npos);
}

// A kernel for one problem (a sweep's candidate, `kiln run`) holds only the version of the
// pipelined loop that runs at its sizes: the fast one where K and N are multiples of 8, the plain
// one otherwise. It traps at any other sizes, which its manifest says it assumes, and so needs no
// check of the alignment its sizes prove.
TEST(PtxCodegen, AKernelForKnownSizesHoldsOnlyTheVersionThatRunsThere) {
    std::map<std::string, std::int64_t> const schedule{{"MMA", 1},   {"MT_M", 64}, {"MT_N", 64},
                                                       {"MT_K", 16}, {"WT_M", 32}, {"STAGES", 3}};
    KernelGraph const graph = lowered("gemm-f16.json", "gemm.pipeline.json", schedule);
    auto const every = lowering::emitKernel(graph, {.target = "sm_80", .schedule = schedule});
    auto const aligned = lowering::emitKernel(
        graph,
        {.target = "sm_80", .schedule = schedule, .sizes = {{"M", 100}, {"N", 64}, {"K", 72}}});
    auto const ragged = lowering::emitKernel(
        graph,
        {.target = "sm_80", .schedule = schedule, .sizes = {{"M", 100}, {"N", 64}, {"K", 77}}});
    // The fast version's prologue is unrolled (STAGES - 1 = 2 producers, then the loop's); the
    // plain one's is a loop of one producer.
    EXPECT_EQ(occurrences(every.code, "cp.async.commit_group"), 3u + 2);
    EXPECT_EQ(occurrences(aligned.code, "cp.async.commit_group"), 3u);
    EXPECT_EQ(occurrences(ragged.code, "cp.async.commit_group"), 2u);
    EXPECT_EQ(occurrences(ragged.code, "$prologue_"), 2u); // its label and the branch back
    EXPECT_EQ(occurrences(aligned.code, "trap;"), 1u);
    EXPECT_EQ(aligned.code.find("$unaligned"), std::string::npos);
    EXPECT_EQ(occurrences(ragged.code, "trap;"), 1u);
    EXPECT_TRUE(every.assumptions.empty());
    EXPECT_EQ(aligned.assumptions, (std::vector<std::string>{"K == 72", "M == 100", "N == 64"}));
    EXPECT_EQ(ragged.assumptions, (std::vector<std::string>{"K == 77", "M == 100", "N == 64"}));
    EXPECT_NE(aligned.manifestJson().find(
                  "\"assumes\": [\n    \"K == 72\",\n    \"M == 100\",\n    \"N == 64\"\n  ]"),
              std::string::npos)
        << aligned.manifestJson();
    EXPECT_LT(aligned.code.size(), every.code.size() * 3 / 4);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    for (auto const* kernel : {&aligned, &ragged}) {
        auto const result = runtime::assemblePtx(kernel->code, "sm_80");
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_EQ(result.value().spillStores, 0);
    }
}

// The H100's winning schedule needs 204 KB of shared memory: sm_90a has 227 KB, sm_80 163 KB.
// Code generation says so instead of writing PTX the driver would refuse to launch.
TEST(PtxCodegen, AScheduleNeedingMoreSharedMemoryThanTheTargetHasIsRefused) {
    std::map<std::string, std::int64_t> const schedule{{"MMA", 1},   {"MT_M", 128}, {"MT_N", 256},
                                                       {"MT_K", 64}, {"WT_M", 16},  {"STAGES", 4}};
    auto const hopper =
        lowering::emitKernel(lowered("gemm-f16.json", "gemm.pipeline.json", schedule, "sm_90a"),
                             {.target = "sm_90a", .schedule = schedule});
    EXPECT_EQ(hopper.sharedBytes, 196608u);
    try {
        lowering::emitKernel(lowered("gemm-f16.json", "gemm.pipeline.json", schedule, "sm_80"),
                             {.target = "sm_80", .schedule = schedule});
        ADD_FAILURE() << "emitted for sm_80";
    } catch (UserError const& e) {
        std::string const expected = "error: operation #56 (ForLoop): the workgroup needs 208896 "
                                     "bytes of shared memory; sm_80 has at most 166912 "
                                     "(shared_bytes)";
        EXPECT_EQ(std::string(e.what()).substr(0, expected.size()), expected);
    }
}

// What code generation says of an example lowered by a pipeline at schedule `p` for `target`:
// "emitted", or its error.
std::string emitMessage(std::string const& target, std::map<std::string, std::int64_t> const& p,
                        std::string const& command = "gemm.json",
                        std::string const& pipeline = "gemm.pipeline.json") {
    KernelGraph const graph = lowered(command, pipeline, p, target);
    try {
        lowering::emitKernel(graph, {.target = target, .schedule = p});
    } catch (UserError const& e) {
        return e.what();
    }
    return "emitted";
}

// Refused before any code is written: a tile staged element by element, or copies for every
// stage, took minutes for a huge MT_K or STAGES, and STAGES x bytes could pass int64.
TEST(PtxCodegen, AHugeStagedTileIsRefusedBeforeItsCodeIsWritten) {
    auto const message = [](std::map<std::string, std::int64_t> const& p) {
        std::string const m = emitMessage("sm_90a", p);
        return m.substr(0, m.find(" (shared_bytes)"));
    };
    EXPECT_EQ(message({{"MT_K", 65536}}), "error: the workgroup needs 33554432 bytes of shared "
                                          "memory; sm_90a has at most 232448");
    // Tiles whose bytes pass 2^63 do not wrap around to a layout that looks small.
    EXPECT_EQ(message({{"MMA", 0}, {"MT_K", 28563565967311023}}),
              "error: the staged tiles need more than 2^63 bytes of shared memory (Shared #133 "
              "holds 1828068221907905472 elements)");
    EXPECT_EQ(message({{"STAGES", 9006917779764281343}}),
              "error: operation #78 (ForLoop): the workgroup needs 9006917779764281343 x 8192 "
              "bytes of shared memory; sm_90a has at most 232448");
}

// Without staging (STAGES=0) nothing bounds the tile by shared memory, and the contraction over
// MT_K is written out: MT_K=65536 wrote 118 MB of PTX in 6 s, and MT_K near 2^63 never stopped
// (found by FuzzCodegen). Both code generators stop as the kernel passes 100,000 instructions.
TEST(PtxCodegen, AKernelOfTooManyInstructionsIsRefusedAsItIsWritten) {
    auto const message = [](std::string const& target, std::int64_t mtK) {
        return emitMessage(target, {{"MT_K", mtK}, {"STAGES", 0}});
    };
    EXPECT_EQ(message("sm_90a", 6967068687966714032),
              "error: operation #78 (ForLoop): the kernel passes 100000 PTX instructions: the "
              "schedule writes out too much code (an unrolled loop over a tile too large)");
    EXPECT_EQ(message("gfx942", 720858975502860386),
              "error: operation #78 (ForLoop): the kernel passes 100000 instructions: the schedule "
              "writes out too much code (an unrolled loop over a tile too large)");
    EXPECT_EQ(message("sm_90a", 64), "emitted");
}

// The workitems of a workgroup are multiplied in many places: a block whose product passes
// int64 (found by FuzzCodegen under UBSan) is refused where the launch shape is read.
TEST(PtxCodegen, AWorkgroupOfTwoToTheSixtyTwoWorkitemsIsRefused) {
    EXPECT_EQ(emitMessage("sm_90a", {{"WG_SIZE", std::int64_t{1} << 62}}, "axpy.json",
                          "elementwise.pipeline.json"),
              "error: a workgroup of 4611686018427387904 x 1 x 1 workitems; code generation takes "
              "fewer than 2^31");
}

// STAGES copies of shared memory are filled ahead by asynchronous copies: on a target without
// them (every AMD target today) more than one stage would be silently ignored, so it is refused,
// by both code generators, with the parameter and the target.
TEST(PtxCodegen, CodegenParametersTheTargetCannotHonourAreRefused) {
    EXPECT_EQ(emitMessage("gfx942", {{"STAGES", 2}}),
              "error: STAGES=2 pipelines a loop through 2 copies of shared memory with "
              "asynchronous copies (cp.async), which gfx942 does not have; use STAGES=1");
    EXPECT_EQ(emitMessage("gfx942", {{"STAGES", 1}}), "emitted");
    EXPECT_EQ(emitMessage("sm_90a", {{"STAGES", -1}}),
              "error: STAGES=-1 is not a number of shared-memory copies: it must be 0 (operands "
              "read from memory) or more");
    EXPECT_EQ(emitMessage("sm_90a", {{"MIN_BLOCKS", 33}}),
              "error: MIN_BLOCKS=33 is out of range: 0 (no minimum) to 32, the workgroups sm_90a "
              "keeps on one multiprocessor (max_blocks_per_multiprocessor)");
    EXPECT_EQ(emitMessage("sm_90a", {{"PREFETCH", -1}}),
              "error: PREFETCH=-1 is not a number of workgroups ahead: it must be 0 (no "
              "prefetch) to 1048576");
    EXPECT_EQ(emitMessage("sm_90a", {{"HOLD", 2}}),
              "error: HOLD=2 must be 0 (a row's chunks read again in each pass) or 1 (held in "
              "registers where they are written out)");
}

// A kernel whose registers (as ptxas allocated them) times its workitems pass what the target
// has for a workgroup would not launch: refused, with both figures and the schedule.
TEST(PtxCodegen, RegistersPastTheTargetsLimitAreRefused) {
    lowering::EmittedKernel kernel;
    kernel.target = "sm_90a";
    kernel.block[0] = 1024;
    kernel.schedule = {{"MT_M", 128}};
    EXPECT_NO_THROW(lowering::checkRegisters(kernel, 64));
    try {
        lowering::checkRegisters(kernel, 65);
        ADD_FAILURE() << "65 registers x 1024 workitems accepted";
    } catch (UserError const& e) {
        EXPECT_STREQ(e.what(), "error: the kernel uses 65 registers per workitem, 66560 for its "
                               "1024 workitems; sm_90a has 65536 for a workgroup "
                               "(max_registers_per_block), schedule MT_M=128");
    }
}

TEST(PtxCodegen, GemmWithoutRegisterTilesIsRefusedWithTheReason) {
    // TT_M = 3 does not divide MT_M, so gemm-thread-tiles leaves the macro tiles whole: each
    // workgroup would be one workitem holding 64 x 64 accumulators.
    auto graph = lowered("gemm.json", "gemm.pipeline.json", {{"TT_M", 3}});
    try {
        lowering::emitKernel(graph, {});
        FAIL() << "expected a UserError";
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find("would need 4096 registers per workitem; tile it "
                                             "further"),
                  std::string::npos)
            << e.what();
    }
}

TEST(PtxCodegen, SixteenBitTilesMoveEightElementsAtOnce) {
    auto const kernel = lowering::emitKernel(
        lowered("fused-elementwise.json", "elementwise.pipeline.json", {{"VEC", 8}}), {});
    // X and Bias in, Y out: one 16-byte access each on the fast path, b16 on the masked one.
    std::size_t loads = 0, stores = 0;
    for (std::size_t at = 0; (at = kernel.code.find("ld.global.v4.b32", at)) != std::string::npos;
         ++at)
        ++loads;
    for (std::size_t at = 0; (at = kernel.code.find("st.global.v4.b32", at)) != std::string::npos;
         ++at)
        ++stores;
    EXPECT_EQ(loads, 2u);
    EXPECT_EQ(stores, 1u);
    EXPECT_NE(kernel.code.find("cvt.rn.f16.f32"), std::string::npos);
}

TEST(PtxCodegen, ManifestDescribesTheInterfaceAndTheLaunch) {
    auto const kernel = lowering::emitKernel(
        lowered("axpy.json", "elementwise.pipeline.json", {{"WG_SIZE", 128}, {"VEC", 2}}),
        {.target = "sm_80", .schedule = {{"WG_SIZE", 128}, {"VEC", 2}}});
    auto const m = nlohmann::json::parse(kernel.manifestJson());
    EXPECT_EQ(m["entry"], "kiln_axpy");
    EXPECT_EQ(m["target"], "sm_80");
    EXPECT_EQ(m["block"], nlohmann::json::array({128, 1, 1}));
    EXPECT_EQ(m["grid"][0], "ceildiv(N, 256)");
    EXPECT_EQ(m["grid"][1], "1");
    ASSERT_EQ(m["parameters"].size(), 4u);
    EXPECT_EQ(m["parameters"][0]["name"], "X");
    EXPECT_EQ(m["parameters"][0]["kind"], "pointer");
    EXPECT_EQ(m["parameters"][2]["name"], "alpha");
    EXPECT_EQ(m["parameters"][2]["offset"], 16);
    EXPECT_EQ(m["parameters"][3]["name"], "N");
    EXPECT_EQ(m["parameters"][3]["type"], "i64");
    EXPECT_EQ(m["parameters"][3]["offset"], 24);
    EXPECT_EQ(m["schedule"]["VEC"], 2);
    EXPECT_EQ(m["graph_hash"].get<std::string>().size(), 16u);
}

TEST(PtxCodegen, AGraphThatIsNotLoweredIsRefusedByName) {
    KernelGraph const graph = translate(loadCommand(sourcePath("examples/axpy.json")));
    try {
        lowering::emitKernel(graph, {});
        FAIL() << "expected a UserError";
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(), "operation #20 (Assign): #18 is not distributed over the grid "
                               "with constant-size local indices, so no workitem can hold it");
    }
}

// emitKernel chooses the code generator by the target's vendor: an AMD target gets AMDGCN, not
// PTX; a target arch-db does not know is refused.
TEST(PtxCodegen, AnAmdTargetIsNotAPtxTarget) {
    auto const graph = lowered("axpy.json", "elementwise.pipeline.json");
    auto const kernel = lowering::emitKernel(graph, {.target = "gfx942"});
    EXPECT_EQ(kernel.code.find(".visible .entry"), std::string::npos);
    EXPECT_NE(kernel.code.find(".amdhsa_kernel"), std::string::npos);
    EXPECT_THROW(lowering::emitKernel(graph, {.target = "sm_0"}), UserError);
}

class PtxGolden : public ::testing::TestWithParam<Case> {};

TEST_P(PtxGolden, MatchesTheGoldenFile) {
    Case const& c = GetParam();
    auto const kernel = lowering::emitKernel(lowered(c.command, c.pipeline, c.params, "sm_90"),
                                             {.target = "sm_90", .schedule = c.params});
    expectGoldenFile("tests/golden/ptx/" + c.name + ".sm_90.ptx", kernel.code);
}

INSTANTIATE_TEST_SUITE_P(Kernels, PtxGolden, ::testing::Values(kCases[0], kCases[3], kCases[11]),
                         [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
