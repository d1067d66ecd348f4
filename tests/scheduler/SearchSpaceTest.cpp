// Search spaces: domains, constraints with arch facts, pruning, and the shipped example.
#include "kiln/scheduler/SearchSpace.h"

#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/scheduler/Solver.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::scheduler;

namespace {

std::string const kSource = KILN_SOURCE_DIR;

SearchSpace space(std::string const& text) {
    return parseSearchSpace(text, "test.space.json");
}

std::string errorOf(std::function<void()> const& f) {
    try {
        f();
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(SearchSpace, DomainsExpandInOrder) {
    auto const s = space(R"({"space": "d", "version": 1, "parameters": {
        "A": {"values": [3, 1, 2]},
        "B": {"range": {"min": 1, "max": 10, "step": 4}},
        "C": {"pow2": {"min": 16, "max": 256}},
        "D": {"range": {"min": -2, "max": 0}}}})");
    ASSERT_EQ(s.parameters.size(), 4u);
    EXPECT_EQ(s.parameters[0].values, (std::vector<std::int64_t>{3, 1, 2}));
    EXPECT_EQ(s.parameters[1].values, (std::vector<std::int64_t>{1, 5, 9}));
    EXPECT_EQ(s.parameters[2].values, (std::vector<std::int64_t>{16, 32, 64, 128, 256}));
    EXPECT_EQ(s.parameters[3].values, (std::vector<std::int64_t>{-2, -1, 0}));
    EXPECT_EQ(s.unconstrainedSize(), 3 * 3 * 5 * 3);
    EXPECT_EQ(s.indexOf("C"), 2);
    EXPECT_EQ(s.indexOf("E"), -1);
}

TEST(Solver, EnumeratesExactlyTheValidPoints) {
    auto const s = space(R"({"space": "c", "version": 1, "parameters": {
        "A": {"range": {"min": 1, "max": 6}},
        "B": {"range": {"min": 1, "max": 6}}},
        "constraints": ["$A * $B <= 6", "$A <= $B"]})");
    Solver const solver(s, {});
    std::vector<Point> expected;
    for (std::int64_t a = 1; a <= 6; ++a)
        for (std::int64_t b = 1; b <= 6; ++b)
            if (a * b <= 6 && a <= b)
                expected.push_back({a, b});
    EXPECT_EQ(solver.all(), expected);
    EXPECT_TRUE(solver.valid({2, 3}));
    EXPECT_FALSE(solver.valid({3, 2}));
    EXPECT_FALSE(solver.valid({7, 7})); // outside the domains
    EXPECT_EQ(solver.text({2, 3}), "A=2,B=3");
    EXPECT_EQ(solver.fromNamed({{"A", 2}, {"B", 3}}), (Point{2, 3}));
    EXPECT_FALSE(solver.fromNamed({{"A", 2}, {"B", 30}}));
}

TEST(Solver, PrunesAsSoonAsAConstraintsParametersAreBound) {
    // A constraint on the first parameter only must cut whole subtrees: with A in 1..100 and
    // "$A <= 2", the solver visits 100 values of A and then B's 50 values under the 2 kept.
    auto const s = space(R"({"space": "p", "version": 1, "parameters": {
        "A": {"range": {"min": 1, "max": 100}},
        "B": {"range": {"min": 1, "max": 50}}},
        "constraints": ["$A <= 2"]})");
    Solver const solver(s, {});
    SolverStats const stats = solver.enumerate([](Point const&) { return true; });
    EXPECT_EQ(stats.validPoints, 100);
    EXPECT_EQ(stats.partialPoints, 100 + 2 * 50);
    EXPECT_EQ(stats.rejectedBy, (std::vector<std::int64_t>{98}));
}

TEST(Solver, ReadsArchFactsOfTheTarget) {
    auto const s = space(R"({"space": "a", "version": 1, "parameters": {
        "MT_M": {"pow2": {"min": 64, "max": 512}}, "STAGES": {"range": {"min": 1, "max": 8}}},
        "constraints": ["$MT_M * 64 * 2 * $STAGES <= arch.shared_bytes",
                        "arch.HasWGMMA == 1 || $STAGES <= 2"]})");
    // sm_90a: 232448 bytes and wgmma. sm_80: 166912 bytes (163 KB), no wgmma.
    std::size_t const hopper = Solver(s, rules::archFacts("sm_90a")).all().size();
    std::size_t const ampere = Solver(s, rules::archFacts("sm_80")).all().size();
    std::size_t expectHopper = 0, expectAmpere = 0;
    for (std::int64_t m = 64; m <= 512; m *= 2)
        for (std::int64_t st = 1; st <= 8; ++st) {
            expectHopper += m * 64 * 2 * st <= 232448;
            expectAmpere += m * 64 * 2 * st <= 166912 && st <= 2;
        }
    EXPECT_EQ(hopper, expectHopper);
    EXPECT_EQ(ampere, expectAmpere);
}

TEST(Solver, NeighboursAreOneStepAndValid) {
    auto const s = space(R"({"space": "n", "version": 1, "parameters": {
        "A": {"pow2": {"min": 1, "max": 8}}, "B": {"values": [5, 7, 9]}},
        "constraints": ["$A * $B <= 36"]})");
    Solver const solver(s, {});
    EXPECT_EQ(solver.neighbours({2, 7}), (std::vector<Point>{{1, 7}, {4, 7}, {2, 5}, {2, 9}}));
    EXPECT_EQ(solver.neighbours({4, 9}), (std::vector<Point>{{2, 9}, {4, 7}})); // 8*9 > 36
}

TEST(Solver, ArchFactsNeedATarget) {
    auto const s = space(R"({"space": "t", "version": 1, "parameters": {"A": {"values": [1]}},
        "constraints": ["$A <= arch.wave_size"]})");
    EXPECT_EQ(errorOf([&] { Solver(s, {}); }),
              "test.space.json:2:32: error: 'arch.wave_size' needs a target; none was given [at "
              "/constraints/0]");
}

TEST(SearchSpace, TheShippedGemmSpaceFitsItsPipeline) {
    SearchSpace const s = loadSearchSpace(kSource + "/examples/gemm.space.json");
    ASSERT_FALSE(s.pipeline.empty());
    rules::Pipeline const pipeline = rules::loadPipeline(s.pipeline);
    checkAgainstPipeline(s, pipeline);
    for (std::string target : {"sm_80", "sm_90a", "gfx942"}) {
        auto const points = Solver(s, rules::archFacts(target)).all();
        EXPECT_GT(points.size(), 50u) << target;
        for (auto const& p : points)
            EXPECT_LE((p[0] * p[2] * 2 + p[2] * p[1] * 2) * p[3],
                      *rules::archFacts(target)("shared_bytes"));
    }
}

TEST(SearchSpace, AParameterThePipelineDoesNotReadIsAnError) {
    auto s = space(R"({"space": "x", "version": 1, "parameters": {
        "MT_Q": {"values": [1]}}})");
    rules::Pipeline const pipeline = rules::loadPipeline(kSource + "/rules/gemm.pipeline.json");
    EXPECT_EQ(
        errorOf([&] { checkAgainstPipeline(s, pipeline); }),
        "test.space.json:2:9: error: 'MT_Q' is not a parameter of pipeline 'gemm' (did you "
        "mean 'MT_K'?); it reads CLUSTER_M, CLUSTER_N, EPILOGUE, GROUP_M, MIN_BLOCKS, MMA, MT_K, "
        "MT_M, MT_N, PERSISTENT, PINGPONG, "
        "STAGES, TMA, "
        "TT_M, TT_N, "
        "UNROLL, WARP_SPECIALIZE, WT_M, WT_N "
        "[at "
        "/parameters/MT_Q]");
}
