// CooperativeReductionTest.cpp: Reduces whose rows several workitems share (rows-to-workgroups,
// COOP=1 in rules/reduction.pipeline.json; docs/codegen.md, "Cooperative reductions"). Every
// schedule keeps the Command's meaning (the reference interpreter at odd sizes, both layouts,
// sum, max, min and mean, f32, f16 and bf16, the 16-bit rows accumulated in f32); the kernels take
// the steps the schedule asks for on both targets; a small case's lowered graph, PTX and AMDGCN are
// golden files.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R CooperativeReduction   (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <bit>
#include <gtest/gtest.h>

namespace kiln::test {
namespace {

using Params = std::map<std::string, std::int64_t>;

struct Schedule {
    std::string name, command;
    Params params;
};

// Row-major (the reduced axis contiguous): lanes along x; column-major: rows along x.
std::vector<Schedule> const kSchedules = {
    {"rowmajor_256_lanes", "row-sum-rowmajor.json", {{"ROWS", 1}, {"LANES", 256}, {"VEC", 4}}},
    {"rowmajor_warp_per_row", "row-sum-rowmajor.json", {{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}}},
    {"rowmajor_16_lanes", "row-sum-rowmajor.json", {{"ROWS", 8}, {"LANES", 16}, {"VEC", 2}}},
    {"rowmajor_1024_lanes", "row-sum-rowmajor.json", {{"ROWS", 1}, {"LANES", 1024}, {"VEC", 1}}},
    {"colmajor_8_lanes", "row-reduction.json", {{"ROWS", 64}, {"LANES", 8}, {"VEC", 2}}},
    {"colmajor_one_lane", "row-reduction.json", {{"ROWS", 128}, {"LANES", 1}, {"VEC", 4}}},
    {"colmajor_shuffled", "row-reduction.json", {{"ROWS", 4}, {"LANES", 32}, {"VEC", 1}}},
    {"max_f16_colmajor", "row-max-colmajor.json", {{"ROWS", 32}, {"LANES", 8}, {"VEC", 4}}},
    {"min_bf16_rowmajor", "row-min-rowmajor-bf16.json", {{"ROWS", 2}, {"LANES", 64}, {"VEC", 8}}},
    {"mean_f16_rowmajor", "row-mean-rowmajor.json", {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}}},
    {"rowmajor_4_reads",
     "row-sum-rowmajor.json",
     {{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}, {"UNROLL", 4}}},
    {"colmajor_2_reads",
     "row-reduction.json",
     {{"ROWS", 32}, {"LANES", 8}, {"VEC", 2}, {"UNROLL", 2}}},
};

Params cooperative(Params p) {
    p["COOP"] = 1;
    return p;
}

// The 32-bit words of a row's accumulator: f16 and bf16 rows (the schedules named so) reduced to
// f16 or bf16 accumulate in f32, the others in f64 (two halves in each exchange).
std::size_t accumulatorWords(Schedule const& s) {
    return s.name.find("f16") != std::string::npos ? 1 : 2;
}

class CooperativeReduction : public ::testing::TestWithParam<Schedule> {};

// The reference interpreter runs the lowered graph at the Command's sizes, a ragged problem of
// primes, one row and one column, and matches the Command's direct meaning.
TEST_P(CooperativeReduction, KeepsTheCommandsMeaning) {
    Schedule const& s = GetParam();
    Command const command = loadCommand(sourcePath("examples/" + s.command));
    KernelGraph const graph = lowered(s.command, "reduction.pipeline.json", cooperative(s.params));
    for (auto const& problem : std::vector<std::map<std::string, double>>{
             command.defaults, {{"M", 1}, {"N", 1000}}, {{"M", 1000}, {"N", 1}}}) {
        SemanticCheck const check(command, problem, 7);
        EXPECT_LE(check.measure(graph), check.tolerance())
            << s.name << " at M=" << problem.at("M") << ", N=" << problem.at("N");
    }
}

// The butterfly steps of a row's exchange and the values each workitem reads from shared memory:
// the lanes of a row within a warp (consecutive ones, row-major, or ROWS apart, column-major)
// combine in a butterfly; where a row spans warps, each workitem reads one warp's value and a
// second butterfly combines them where the row's lanes are consecutive, else each reads every
// warp's value.
struct Exchange {
    std::size_t steps = 0, sharedReads = 0;
};

Exchange exchangeOf(Schedule const& s) {
    std::int64_t const lanes = s.params.at("LANES"), rows = s.params.at("ROWS");
    std::int64_t const stride = s.command.find("rowmajor") != std::string::npos ? 1 : rows;
    std::int64_t const inWarp = stride >= 32 ? 1 : std::min<std::int64_t>(lanes, 32 / stride);
    Exchange e;
    e.steps = static_cast<std::size_t>(std::countr_zero(std::uint64_t(inWarp)));
    if (lanes > inWarp && stride == 1) {
        e.steps += static_cast<std::size_t>(std::countr_zero(std::uint64_t(lanes / inWarp)));
        e.sharedReads = 1;
    } else if (lanes > inWarp) {
        e.sharedReads = static_cast<std::size_t>(lanes / inWarp);
    }
    return e;
}

// PTX: the lanes of a warp combine with shfl.sync.bfly (an f64 accumulator as two halves), a
// row's warps through shared memory between two barriers; one workitem stores.
TEST_P(CooperativeReduction, CombinesAcrossLanesOnPtx) {
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    auto const kernel = lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params),
                                             {.target = "sm_90a", .schedule = params});
    std::int64_t const lanes = params.at("LANES"), rows = params.at("ROWS");
    Exchange const e = exchangeOf(s);
    EXPECT_EQ(occurrences(kernel.code, "shfl.sync.bfly.b32"), accumulatorWords(s) * e.steps)
        << kernel.code;
    bool const shared = e.sharedReads > 0;
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), shared ? 2u : 0u);
    EXPECT_EQ(kernel.sharedBytes, shared ? static_cast<std::size_t>(8 * lanes * rows) : 0u);
    EXPECT_EQ(
        occurrences(kernel.code, accumulatorWords(s) == 2 ? "ld.shared.b64" : "ld.shared.b32"),
        e.sharedReads);
    EXPECT_EQ(kernel.block[0] * kernel.block[1], lanes * rows);
}

// ptxas assembles every schedule for both NVIDIA targets, without spilling.
TEST_P(CooperativeReduction, AssemblesWithPtxas) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    for (std::string const target : {"sm_80", "sm_90a"}) {
        auto const kernel =
            lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params, target),
                                 {.target = target, .schedule = params});
        auto const result = runtime::assemblePtx(kernel.code, target);
        ASSERT_TRUE(result.ok()) << result.error().message() << "\n" << kernel.code;
        EXPECT_EQ(result.value().spillStores, 0) << target;
    }
}

// AMDGCN: the same steps with ds_swizzle_b32 (bit-mask mode: lane ^ distance) and LDS.
TEST_P(CooperativeReduction, CombinesAcrossLanesOnAmdgcn) {
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    auto const kernel =
        lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params, "gfx942"),
                             {.target = "gfx942", .schedule = params});
    Exchange const e = exchangeOf(s);
    EXPECT_EQ(occurrences(kernel.code, "ds_swizzle_b32"), accumulatorWords(s) * e.steps);
    EXPECT_EQ(occurrences(kernel.code, "s_barrier"), e.sharedReads > 0 ? 2u : 0u);
}

INSTANTIATE_TEST_SUITE_P(Schedules, CooperativeReduction, ::testing::ValuesIn(kSchedules),
                         [](auto const& p) { return p.param.name; });

// UNROLL reads a step, each a vector load coalesced across the lanes (LANES x VEC elements
// apart), where the rows are contiguous.
TEST(CooperativeReductionUnroll, IssuesUnrollVectorLoadsAStep) {
    Params const params = cooperative({{"ROWS", 1}, {"LANES", 512}, {"VEC", 4}, {"UNROLL", 4}});
    auto const kernel =
        lowering::emitKernel(lowered("row-sum-rowmajor.json", "reduction.pipeline.json", params),
                             {.target = "sm_90a", .schedule = params});
    EXPECT_EQ(occurrences(kernel.code, "ld.global.v4.f32"), 4u);
    for (int read = 1; read < 4; ++read) // 512 lanes x 4 elements x 4 bytes apart
        EXPECT_NE(kernel.code.find("+" + std::to_string(read * 8192) + "];"), std::string::npos)
            << read;
}

// ROW_VEC consecutive rows a workitem (rules/consecutive-rows-per-workitem.rules.json): every
// schedule keeps the Command's meaning at odd sizes, and a column-major sum reads the rows'
// elements of a column with one vector load (ROW_VEC f32 at once) and stores its rows' values
// with one vector store, on PTX (ptxas assembles it) and AMDGCN.
std::vector<Schedule> const kRowVectors = {
    {"colmajor_4_rows",
     "row-reduction.json",
     {{"ROWS", 32}, {"LANES", 16}, {"VEC", 8}, {"ROW_VEC", 4}}},
    {"colmajor_2_rows_split",
     "row-reduction.json",
     {{"ROWS", 64}, {"LANES", 4}, {"VEC", 4}, {"ROW_VEC", 2}, {"SPLIT", 4}}},
    {"max_f16_colmajor_8_rows",
     "row-max-colmajor.json",
     {{"ROWS", 64}, {"LANES", 2}, {"VEC", 4}, {"ROW_VEC", 8}}},
    {"rowmajor_2_rows",
     "row-sum-rowmajor.json",
     {{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}, {"ROW_VEC", 2}}},
};

TEST(CooperativeReductionRowVectors, KeepTheCommandsMeaning) {
    for (Schedule const& s : kRowVectors) {
        Command const command = loadCommand(sourcePath("examples/" + s.command));
        KernelGraph const graph =
            lowered(s.command, "reduction.pipeline.json", cooperative(s.params));
        for (auto const& problem : std::vector<std::map<std::string, double>>{
                 command.defaults, {{"M", 1}, {"N", 1000}}, {{"M", 1001}, {"N", 3}}}) {
            SemanticCheck const check(command, problem, 7);
            EXPECT_LE(check.measure(graph), check.tolerance())
                << s.name << " at M=" << problem.at("M") << ", N=" << problem.at("N");
        }
    }
}

TEST(CooperativeReductionRowVectors, ReadAColumnsRowsWithOneVectorLoad) {
    Params const params = cooperative(kRowVectors[0].params); // VEC=8 columns of 4 rows a step
    auto const graph = lowered("row-reduction.json", "reduction.pipeline.json", params);
    auto const ptx = lowering::emitKernel(graph, {.target = "sm_90a", .schedule = params});
    EXPECT_EQ(occurrences(ptx.code, "ld.global.v4.f32"), 8u);
    EXPECT_EQ(occurrences(ptx.code, "st.global.v4.f32"), 1u);
    EXPECT_EQ(ptx.grid[0], "ceildiv(M, 128)"); // 32 workitems of 4 rows a workgroup
    if (runtime::findPtxas()) {
        auto const result = runtime::assemblePtx(ptx.code, "sm_90a");
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_EQ(result.value().spillStores, 0);
    }
    auto const gcn = lowering::emitKernel(
        lowered("row-reduction.json", "reduction.pipeline.json", params, "gfx942"),
        {.target = "gfx942", .schedule = params});
    EXPECT_GE(occurrences(gcn.code, "global_load_dwordx4"), 8u);
}

// A mean is the sum divided by the row's length in the accumulator's type (f32 for these f16
// rows), once per row, on both schedules.
TEST(CooperativeReductionMean, DividesTheSumOncePerRow) {
    for (Params const& params : {Params{{"COOP", 0}}, cooperative({{"ROWS", 1}, {"LANES", 256}})}) {
        auto const ptx = lowering::emitKernel(
            lowered("row-mean-rowmajor.json", "reduction.pipeline.json", params),
            {.target = "sm_90a", .schedule = params});
        EXPECT_EQ(occurrences(ptx.code, "div.rn.f32"), 1u);
        EXPECT_EQ(occurrences(ptx.code, "div.rn.f64"), 0u);
        auto const gcn = lowering::emitKernel(
            lowered("row-mean-rowmajor.json", "reduction.pipeline.json", params, "gfx942"),
            {.target = "gfx942", .schedule = params});
        EXPECT_EQ(occurrences(gcn.code, "v_div_fixup_f32"), 1u);
        EXPECT_EQ(occurrences(gcn.code, "v_div_fixup_f64"), 0u);
    }
}

// A schedule the walker cannot write is refused by name, not miscompiled.
TEST(CooperativeReductionRefuses, ARowWhoseWorkgroupIsNotWholeWarps) {
    // 2 x 8 = 16 workitems: the rule's `valid` refuses it before code generation.
    EXPECT_THROW(lowered("row-sum-rowmajor.json", "reduction.pipeline.json",
                         {{"COOP", 1}, {"ROWS", 2}, {"LANES", 8}, {"VEC", 1}}),
                 UserError);
}

// A small case whole: 2 rows of 64 lanes a workgroup, 4 elements a read (shuffles over 32
// lanes, then two warps through shared memory).
Params const kSmall{{"COOP", 1}, {"ROWS", 2}, {"LANES", 64}, {"VEC", 4}};

TEST(CooperativeReductionGolden, LoweredGraph) {
    expectGoldenFile("tests/golden/row_sum_rowmajor_coop.lowered.txt",
                     toText(lowered("row-sum-rowmajor.json", "reduction.pipeline.json", kSmall)));
}

TEST(CooperativeReductionGolden, PtxOnSm90) {
    auto const graph = lowered("row-sum-rowmajor.json", "reduction.pipeline.json", kSmall, "sm_90");
    expectGoldenFile("tests/golden/ptx/row_sum_rowmajor_coop.sm_90.ptx",
                     lowering::emitKernel(graph, {.target = "sm_90", .schedule = kSmall}).code);
}

TEST(CooperativeReductionGolden, AmdgcnOnGfx942) {
    auto const graph =
        lowered("row-sum-rowmajor.json", "reduction.pipeline.json", kSmall, "gfx942");
    expectGoldenFile("tests/golden/amdgcn/row_sum_rowmajor_coop.gfx942.s",
                     lowering::emitKernel(graph, {.target = "gfx942", .schedule = kSmall}).code);
}

} // namespace
} // namespace kiln::test
