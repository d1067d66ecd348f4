// MeanVarianceTest.cpp: ONLINE=1 on a layer norm, its row mean and variance in one pass by
// Welford's algorithm (lowering/MeanVariance.h, KernelWalkerOnline.cpp). The pattern is found by
// what a graph computes, in the Command's graph and the lowered one, and not where a layer norm
// differs from it. On the cooperative schedules
// the kernel reads X twice where ONLINE=0 reads it three times, exchanges the rows' sums and then
// the workitems' M2 + n (m - M)^2 over the lanes (shfl.sync.bfly) and through shared memory,
// assembles with ptxas at odd and round sizes without spilling; the lowered graph keeps the
// Command's meaning at odd sizes, also where the rows' mean is 1000 and their spread about 1
// (tests/lowering/commands/layernorm-offset-f16.json). The interpreter runs the graph, which is
// the one of ONLINE=0: the pass's arithmetic is checked on the GPU (CooperativeReductionGpuTest's
// layernorm_online_* and layernorm_offset_* cases). A small layer norm's PTX is golden.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R MeanVariance   (then review the diff)
#include "kiln/lowering/MeanVariance.h"

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

std::string const kLayerNorm = "layernorm-f16.json";
/// examples/ relative: the layer norm of rows around 1000.
std::string const kOffset = "../tests/lowering/commands/layernorm-offset-f16.json";

// A layer norm with its statistics' operations replaced: x (f16) and xf = f32(x) given.
Command layerNormWith(std::string const& statistics) {
    return parseCommand(R"json({"command": "variant", "version": 1,
        "arguments": {"X": {"tensor": "f16", "shape": ["M", "N"]},
                      "Y": {"tensor": "f16", "shape": ["M", "N"]}},
        "operations": [{"op": "LoadTiled", "tag": "x", "tensor": "X"},
                       {"op": "Execute", "tag": "xf", "expr": "f32(x)"}, )json" +
                            statistics + R"json(,
                       {"op": "Execute", "tag": "y", "expr": "d * rsqrt(v + 1.0)", "dtype": "f16"},
                       {"op": "StoreTiled", "tensor": "Y", "value": "y"}],
        "problem": {"M": 33, "N": 257}})json",
                        "variant.json");
}

std::string statistics(std::string const& meanOf, std::string const& mean,
                       std::string const& deviation, std::string const& square,
                       std::string const& variance) {
    return R"({"op": "Reduce", "tag": "m", "value": ")" + meanOf + R"(", "combine": ")" + mean +
           R"("}, {"op": "Execute", "tag": "d", "expr": ")" + deviation +
           R"("}, {"op": "Execute", "tag": "dd", "expr": ")" + square +
           R"("}, {"op": "Reduce", "tag": "v", "value": "dd", "combine": ")" + variance + R"("})";
}

TEST(MeanVariancePattern, IsFoundInTheLayerNormBeforeAndAfterLowering) {
    KernelGraph const command = translate(loadCommand(sourcePath("examples/" + kLayerNorm)));
    KernelGraph const graph =
        lowered(kLayerNorm, "reduction.pipeline.json", {{"COOP", 1}, {"ROWS", 1}, {"LANES", 64}});
    for (KernelGraph const* g : {&command, &graph}) {
        auto const found = lowering::findMeanVariances(*g);
        ASSERT_EQ(found.size(), 1u);
        auto const& p = found.front();
        EXPECT_EQ(g->coordinates.node(p.rows).name, "xf");
        EXPECT_EQ(g->coordinates.node(p.mean).name, "mean");
        EXPECT_EQ(g->coordinates.node(p.deviations).name, "d");
        EXPECT_EQ(g->coordinates.node(p.squares).name, "dd");
        EXPECT_EQ(g->coordinates.node(p.variance).name, "var");
        EXPECT_EQ(g->control.node(p.varianceOp).combine, Combine::Mean);
    }
}

// Found by what the operations compute: the same statistics under other tags, of the f16 rows
// with their f32 spelled out, are found; statistics that differ in any part are not.
TEST(MeanVariancePattern, IsFoundByWhatTheGraphComputes) {
    auto const count = [](std::string const& ops) {
        return lowering::findMeanVariances(translate(layerNormWith(ops))).size();
    };
    EXPECT_EQ(count(statistics("xf", "mean", "xf - m", "d * d", "mean")), 1u);
    EXPECT_EQ(count(statistics("x", "mean", "f32(x) - f32(m)", "d * d", "mean")), 1u) << "f16";
    EXPECT_EQ(count(statistics("xf", "sum", "xf - m", "d * d", "mean")), 0u) << "a sum";
    EXPECT_EQ(count(statistics("xf", "mean", "xf - m", "d * d", "sum")), 0u) << "a sum of squares";
    EXPECT_EQ(count(statistics("xf", "mean", "m - xf", "d * d", "mean")), 0u) << "swapped";
    EXPECT_EQ(count(statistics("xf", "mean", "xf - 2.0 * m", "d * d", "mean")), 0u) << "2 mean";
    EXPECT_EQ(count(statistics("xf", "mean", "xf - m", "d * xf", "mean")), 0u) << "not a square";
    EXPECT_EQ(count(statistics("xf", "mean", "xf - m", "d * d * 2.0", "mean")), 0u) << "scaled";
    EXPECT_EQ(count(statistics("xf", "mean", "xf - m", "xf * xf", "mean")), 0u) << "no mean taken";
}

TEST(MeanVariancePattern, SoftmaxAndRmsNormHaveNone) {
    for (std::string const name : {"softmax-f16.json", "rmsnorm-f16.json"})
        EXPECT_TRUE(
            lowering::findMeanVariances(translate(loadCommand(sourcePath("examples/" + name))))
                .empty())
            << name;
}

struct Schedule {
    std::string name;
    Params params;
};

std::vector<Schedule> const kSchedules = {
    {"128_lanes", {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}}},
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

class MeanVariance : public ::testing::TestWithParam<Schedule> {};

// ONLINE is read by code generation: the lowered graph is the one of ONLINE=0, which keeps the
// Command's meaning at odd sizes, for rows of mean 0 and of mean 1000 alike.
TEST_P(MeanVariance, LowersToTheGraphOfThreePassesWhichKeepsTheCommandsMeaning) {
    Params const params = schedule(GetParam().params, 1);
    for (std::string const& name : {kLayerNorm, kOffset}) {
        KernelGraph const graph = lowered(name, "reduction.pipeline.json", params);
        EXPECT_EQ(toText(graph),
                  toText(lowered(name, "reduction.pipeline.json", schedule(GetParam().params, 0))));
        Command const command = loadCommand(sourcePath("examples/" + name));
        for (auto const& problem : std::vector<std::map<std::string, double>>{
                 command.defaults, {{"M", 7}, {"N", 1000}}, {{"M", 1}, {"N", 4097}}}) {
            auto p = command.defaults;
            for (auto const& [size, value] : problem)
                p[size] = value;
            SemanticCheck const check(command, p, 19);
            EXPECT_LE(check.measure(graph), check.tolerance())
                << name << ": M=" << p.at("M") << ", N=" << p.at("N");
        }
    }
}

// The PTX text split at its loops' labels: [0] before the first, [i] the i-th loop and what
// follows it up to the next.
std::vector<std::string> loops(std::string const& code) {
    std::vector<std::string> parts;
    std::size_t from = 0;
    for (auto at = code.find("\n$loop_"); at != std::string::npos;
         at = code.find("\n$loop_", at + 1)) {
        parts.push_back(code.substr(from, at - from));
        from = at;
    }
    parts.push_back(code.substr(from));
    return parts;
}

// One pass for the mean and the variance, one for the store: X is read twice where ONLINE=0
// reads it three times (the first pass's loads, X's alone, once fewer). The exchanges: the
// rows' sums, then the workitems' M2 + n (m - M)^2, each over the lanes of a warp (an f64 in two
// shfl.sync.bfly.b32 a step) and through shared memory between two barriers where a row spans
// warps, as many as the three passes' two means; two f32 divisions a chunk (its mean and Chan's
// weight), and the two means' f64 divisions by the row's length.
TEST_P(MeanVariance, ReadsTheRowsTwiceOnPtx) {
    Params const params = schedule(GetParam().params, 1);
    auto const emit = [&](Params const& p) {
        return lowering::emitKernel(lowered(kLayerNorm, "reduction.pipeline.json", p),
                                    {.target = "sm_90a", .schedule = p})
            .code;
    };
    std::string const online = emit(params), threePasses = emit(schedule(GetParam().params, 0));
    auto const onlineLoops = loops(online), threeLoops = loops(threePasses);
    ASSERT_EQ(onlineLoops.size(), 3u) << online;
    ASSERT_EQ(threeLoops.size(), 4u);
    std::size_t const xReads = occurrences(threeLoops[1], "ld.global");
    EXPECT_GT(xReads, 0u);
    EXPECT_EQ(occurrences(onlineLoops[1], "ld.global"), xReads);
    EXPECT_EQ(occurrences(threeLoops[2], "ld.global"), xReads);
    EXPECT_EQ(occurrences(online, "ld.global") + xReads, occurrences(threePasses, "ld.global"));
    std::int64_t const lanes = params.at("LANES");
    std::int64_t const inWarp = std::min<std::int64_t>(lanes, 32);
    std::size_t const steps = static_cast<std::size_t>(
        std::countr_zero(std::uint64_t(inWarp)) + std::countr_zero(std::uint64_t(lanes / inWarp)));
    EXPECT_EQ(occurrences(online, "shfl.sync.bfly.b32"), 2 * 2 * steps);
    EXPECT_EQ(occurrences(threePasses, "shfl.sync.bfly.b32"), 2 * 2 * steps);
    EXPECT_EQ(occurrences(online, "bar.sync 0"), lanes > inWarp ? 4u : 0u);
    EXPECT_EQ(occurrences(onlineLoops[1], "div.rn.f32"), 2u);
    EXPECT_EQ(occurrences(online, "div.rn.f64"), 2u);
}

// ptxas assembles the kernel for any size and for sizes of one chunk, odd, long and round, on
// both NVIDIA targets, without spilling.
TEST_P(MeanVariance, AssemblesWithPtxas) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    expectAssemblesAtSizes(
        kLayerNorm, schedule(GetParam().params, 1),
        {{}, {{"M", 33}, {"N", 257}}, {{"M", 7}, {"N", 1000}}, {{"M", 8192}, {"N", 8192}}});
}

INSTANTIATE_TEST_SUITE_P(Schedules, MeanVariance, ::testing::ValuesIn(kSchedules),
                         [](auto const& p) { return p.param.name; });

// Made for rows of at most four chunks (N <= 4 x UNROLL x LANES x VEC: written out), the one
// pass holds its loads for the store's pass, as ONLINE=0 does: X is read once, in the same
// loads. A row of more chunks (a loop a pass) is read twice, once fewer than with ONLINE=0.
TEST(MeanVarianceHeldRows, ARowOfFewChunksIsReadOnce) {
    auto const vectorLoads = [](int online, std::int64_t n) {
        Params const params = schedule({{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}}, online);
        lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
        options.sizes = {{"M", 64}, {"N", n}};
        return globalVectorLoads(
            lowering::emitKernel(lowered(kLayerNorm, "reduction.pipeline.json", params), options)
                .code);
    };
    for (std::int64_t const n : {1024, 1000, 1025})
        EXPECT_EQ(vectorLoads(1, n), vectorLoads(0, n)) << "N = " << n;
    EXPECT_EQ(vectorLoads(1, 5000) + 1, vectorLoads(0, 5000));
}

// A small one-pass layer norm whole: 2 rows of 64 lanes a workgroup, 4 elements a read.
TEST(MeanVarianceGolden, PtxOnSm90) {
    Params const small = schedule({{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}}, 1);
    auto const graph = lowered(kLayerNorm, "reduction.pipeline.json", small, "sm_90");
    expectGoldenFile("tests/golden/ptx/layernorm_f16_welford.sm_90.ptx",
                     lowering::emitKernel(graph, {.target = "sm_90", .schedule = small}).code);
}

} // namespace
} // namespace kiln::test
