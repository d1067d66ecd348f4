// OnlineSoftmaxTest.cpp: ONLINE=1, the softmax's row max and sum of exp(x - max) in one pass
// (lowering/OnlineSoftmax.h, KernelWalkerOnline.cpp). The pattern is found by what a graph
// computes, in the Command's graph and the lowered one, and not where a softmax differs from it;
// ONLINE is refused where the Command has none, and out of range. On the cooperative schedules
// the kernel reads X twice where ONLINE=0 reads it three times, exchanges the max and then the
// rescaled sum over the lanes (shfl.sync.bfly) and through shared memory, assembles with ptxas
// at odd and round sizes without spilling; the lowered graph keeps the Command's meaning at odd
// sizes; a small online softmax's PTX is golden.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R OnlineSoftmax   (then review the diff)
#include "kiln/lowering/OnlineSoftmax.h"

#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "AssemblesAtSizes.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <bit>
#include <gtest/gtest.h>

namespace kiln::test {
namespace {

using Params = std::map<std::string, std::int64_t>;

// examples/softmax-f16.json with its operations replaced.
Command softmaxWith(std::string const& operations) {
    return parseCommand(R"({"command": "variant", "version": 1,
        "arguments": {"X": {"tensor": "f16", "shape": ["M", "N"]},
                      "Y": {"tensor": "f16", "shape": ["M", "N"]}},
        "operations": [)" + operations +
                            R"(], "problem": {"M": 33, "N": 257}})",
                        "variant.json");
}

std::string const kLoad = R"({"op": "LoadTiled", "tag": "x", "tensor": "X"})";
std::string const kStore = R"({"op": "StoreTiled", "tensor": "Y", "value": "y"})";

std::string operations(std::string const& combine, std::string const& exp, std::string const& sum) {
    return kLoad + R"(, {"op": "Reduce", "tag": "m", "value": "x", "combine": ")" + combine +
           R"("}, {"op": "Execute", "tag": "e", "expr": ")" + exp +
           R"("}, {"op": "Reduce", "tag": "s", "value": "e", "combine": ")" + sum +
           R"("}, {"op": "Execute", "tag": "y", "expr": "e / s", "dtype": "f16"}, )" + kStore;
}

TEST(OnlineSoftmaxPattern, IsFoundInTheSoftmaxBeforeAndAfterLowering) {
    KernelGraph const command = translate(loadCommand(sourcePath("examples/softmax-f16.json")));
    KernelGraph const graph = lowered("softmax-f16.json", "reduction.pipeline.json",
                                      {{"COOP", 1}, {"ROWS", 1}, {"LANES", 64}});
    for (KernelGraph const* g : {&command, &graph}) {
        auto const found = lowering::findMaxExpSums(*g);
        ASSERT_EQ(found.size(), 1u);
        auto const& p = found.front();
        EXPECT_EQ(g->coordinates.node(p.rows).name, "x");
        EXPECT_EQ(g->coordinates.node(p.max).name, "m");
        EXPECT_EQ(g->coordinates.node(p.exps).name, "e");
        EXPECT_EQ(g->coordinates.node(p.sum).name, "s");
        EXPECT_EQ(g->control.node(p.sumOp).combine, Combine::Sum);
    }
}

// Found by what the operations compute: the same pattern under other tags and with the
// operands' f32 spelled out is found; a softmax that differs in any part is not.
TEST(OnlineSoftmaxPattern, IsFoundByWhatTheGraphComputes) {
    auto const count = [](std::string const& ops) {
        return lowering::findMaxExpSums(translate(softmaxWith(ops))).size();
    };
    EXPECT_EQ(count(operations("max", "exp(f32(x) - f32(m))", "sum")), 1u);
    EXPECT_EQ(count(operations("min", "exp(f32(x) - f32(m))", "sum")), 0u) << "a min";
    EXPECT_EQ(count(operations("max", "exp(f32(x) - f32(m))", "max")), 0u) << "a max of exps";
    EXPECT_EQ(count(operations("max", "exp(f32(m) - f32(x))", "sum")), 0u) << "swapped";
    EXPECT_EQ(count(operations("max", "exp(f32(x) - f32(m)) * 2.0", "sum")), 0u) << "scaled";
    EXPECT_EQ(count(operations("max", "exp(f32(x) - 2.0 * f32(m))", "sum")), 0u) << "2 max";
    EXPECT_EQ(count(operations("max", "exp(f32(x))", "sum")), 0u) << "no max subtracted";
    // The max of another row value than the one exponentiated.
    std::string const otherMax = kLoad + R"json(,
        {"op": "Execute", "tag": "z", "expr": "x * 2.0", "dtype": "f16"},
        {"op": "Reduce", "tag": "m", "value": "z", "combine": "max"},
        {"op": "Execute", "tag": "e", "expr": "exp(f32(x) - f32(m))"},
        {"op": "Reduce", "tag": "s", "value": "e"},
        {"op": "Execute", "tag": "y", "expr": "e / s", "dtype": "f16"}, )json" +
                                 kStore;
    EXPECT_EQ(count(otherMax), 0u) << "the max of another value";
}

TEST(OnlineSoftmaxPattern, LayerNormAndRmsNormHaveNone) {
    for (std::string const name : {"layernorm-f16.json", "rmsnorm-f16.json"})
        EXPECT_TRUE(lowering::findMaxExpSums(translate(loadCommand(sourcePath("examples/" + name))))
                        .empty())
            << name;
}

std::string errorOf(std::string const& command, Params params, std::string const& target) {
    try {
        lowering::emitKernel(lowered(command, "reduction.pipeline.json", params, target),
                             {.target = target, .schedule = params});
    } catch (UserError const& e) {
        return e.message();
    }
    return "";
}

// ONLINE=1 where the Command has neither a max-then-exp-sum nor a mean-then-variance (an RMS
// norm: a mean of x * x) would not change the kernel: refused, saying what it needs; ONLINE out
// of 0..2 is refused by name, on both targets.
TEST(OnlineSoftmaxRefuses, ACommandWithoutAPairAndValuesOutOfRange) {
    Params const params{{"COOP", 1}, {"ROWS", 1}, {"LANES", 128}, {"VEC", 4}, {"ONLINE", 1}};
    for (std::string const target : {"sm_90a", "gfx942"}) {
        EXPECT_EQ(errorOf("rmsnorm-f16.json", params, target),
                  "ONLINE=1 computes a row's max and its sum of exp(x - max), or its mean and "
                  "variance, in one pass, but kernel 'rmsnorm' has no such pair (no Assign "
                  "computes f32(value#15) - f32(value#19)); use ONLINE=0")
            << target;
        Params three = params;
        three["ONLINE"] = 3;
        EXPECT_EQ(errorOf("softmax-f16.json", three, target),
                  "ONLINE=3 must be 0 (a row read once for each of its statistics), 1 (a "
                  "softmax's max and sum of exp(x - max), or a mean and variance, in one pass: "
                  "OnlineSoftmax.h, MeanVariance.h) or 2 (as 1, the row's workitems merging both "
                  "statistics in one exchange)")
            << target;
        three["ONLINE"] = -1;
        EXPECT_NE(errorOf("softmax-f16.json", three, target).find("ONLINE=-1 must be 0"),
                  std::string::npos)
            << target;
    }
}

struct Schedule {
    std::string name;
    Params params;
};

std::vector<Schedule> const kSchedules = {
    {"256_lanes", {{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}}},
    {"warp_per_row", {{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"UNROLL", 2}}},
    {"two_warps", {{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}}},
    {"1024_lanes", {{"ROWS", 1}, {"LANES", 1024}, {"VEC", 8}, {"UNROLL", 2}}},
    {"16_lanes", {{"ROWS", 8}, {"LANES", 16}, {"VEC", 2}}},
};

Params schedule(Params p, int online) {
    p["COOP"] = 1;
    p["ONLINE"] = online;
    return p;
}

class OnlineSoftmax : public ::testing::TestWithParam<Schedule> {};

// ONLINE is read by code generation: the lowered graph is the one of ONLINE=0, which keeps the
// Command's meaning at the Command's sizes and odd ones (the interpreter, against the reference).
TEST_P(OnlineSoftmax, LowersToTheGraphOfThreePassesWhichKeepsTheCommandsMeaning) {
    Params const params = schedule(GetParam().params, 1);
    KernelGraph const graph = lowered("softmax-f16.json", "reduction.pipeline.json", params);
    EXPECT_EQ(toText(graph), toText(lowered("softmax-f16.json", "reduction.pipeline.json",
                                            schedule(GetParam().params, 0))));
    Command const command = loadCommand(sourcePath("examples/softmax-f16.json"));
    for (auto const& problem : std::vector<std::map<std::string, double>>{
             command.defaults, {{"M", 7}, {"N", 4097}}, {{"M", 1}, {"N", 1000}}}) {
        SemanticCheck const check(command, problem, 19);
        EXPECT_LE(check.measure(graph), check.tolerance())
            << "M=" << problem.at("M") << ", N=" << problem.at("N");
    }
}

// One pass for the max and the sum, one for the store: X is read twice where ONLINE=0 reads it
// three times. The exchanges: the max, then the sums rescaled to it, each over the lanes of a
// warp (an f64 in two shfl.sync.bfly.b32 a step) and through shared memory between two barriers
// where a row spans warps. One exp per element in each pass, and two per row for the rescales
// (the chunk's and the workitem's).
TEST_P(OnlineSoftmax, ReadsTheRowsTwiceOnPtx) {
    Params const params = schedule(GetParam().params, 1);
    auto const emit = [&](Params const& p) {
        return lowering::emitKernel(lowered("softmax-f16.json", "reduction.pipeline.json", p),
                                    {.target = "sm_90a", .schedule = p})
            .code;
    };
    std::string const online = emit(params), threePasses = emit(schedule(GetParam().params, 0));
    std::int64_t const lanes = params.at("LANES");
    std::int64_t const inWarp = std::min<std::int64_t>(lanes, 32);
    // Over a warp's lanes, then over the row's warps' values, one a lane.
    std::size_t const steps = static_cast<std::size_t>(
        std::countr_zero(std::uint64_t(inWarp)) + std::countr_zero(std::uint64_t(lanes / inWarp)));
    std::size_t const elements = static_cast<std::size_t>(
        params.at("VEC") * (params.contains("UNROLL") ? params.at("UNROLL") : 1));
    EXPECT_EQ(occurrences(online, "\n$loop_"), 2u) << online;
    EXPECT_EQ(occurrences(threePasses, "\n$loop_"), 3u);
    EXPECT_EQ(occurrences(online, "ld.global") * 3, occurrences(threePasses, "ld.global") * 2);
    EXPECT_EQ(occurrences(online, "shfl.sync.bfly.b32"), 2 * 2 * steps);
    EXPECT_EQ(occurrences(online, "bar.sync 0"), lanes > inWarp ? 4u : 0u);
    EXPECT_EQ(occurrences(online, "ex2.approx"), 2 * elements + 2);
    EXPECT_EQ(occurrences(threePasses, "ex2.approx"), 2 * elements);
}

// ptxas assembles the kernel for any size and for sizes of one chunk, odd, long and round, on
// both NVIDIA targets, without spilling.
TEST_P(OnlineSoftmax, AssemblesWithPtxas) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    expectAssemblesAtSizes(
        "softmax-f16.json", schedule(GetParam().params, 1),
        {{}, {{"M", 33}, {"N", 257}}, {{"M", 7}, {"N", 4097}}, {{"M", 8192}, {"N", 8192}}});
}

INSTANTIATE_TEST_SUITE_P(Schedules, OnlineSoftmax, ::testing::ValuesIn(kSchedules),
                         [](auto const& p) { return p.param.name; });

// Made for rows of at most four chunks (N <= 4 x UNROLL x LANES x VEC: written out), the online
// pass holds its loads for the store's pass, as ONLINE=0 does: X is read once, a load a chunk.
// A row of more chunks (a loop a pass) is read in both passes.
TEST(OnlineSoftmaxHeldRows, ARowOfFewChunksIsReadOnce) {
    Params const params = schedule({{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}}, 1);
    KernelGraph const graph = lowered("softmax-f16.json", "reduction.pipeline.json", params);
    for (auto const& [n, reads] : std::vector<std::pair<std::int64_t, std::size_t>>{
             {1024, 1}, {1000, 1}, {1025, 2}, {5000, 2}}) {
        lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
        options.sizes = {{"M", 64}, {"N", n}};
        EXPECT_EQ(globalVectorLoads(lowering::emitKernel(graph, options).code), reads)
            << "N = " << n;
    }
}

// A small online softmax whole: 2 rows of 64 lanes a workgroup, 4 elements a read.
TEST(OnlineSoftmaxGolden, PtxOnSm90) {
    Params const small = schedule({{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}}, 1);
    auto const graph = lowered("softmax-f16.json", "reduction.pipeline.json", small, "sm_90");
    expectGoldenFile("tests/golden/ptx/softmax_f16_online.sm_90.ptx",
                     lowering::emitKernel(graph, {.target = "sm_90", .schedule = small}).code);
}

} // namespace
} // namespace kiln::test
