// Strategies: each is deterministic given its seed, proposes only valid points, never repeats
// one, and the guided ones find the optimum of a smooth landscape in fewer candidates than
// exhaustive search.
#include "kiln/scheduler/Strategy.h"

#include <cmath>
#include <gtest/gtest.h>
#include <set>

using namespace kiln;
using namespace kiln::scheduler;

namespace {

SearchSpace grid() {
    return parseSearchSpace(R"({"space": "g", "version": 1, "parameters": {
        "A": {"range": {"min": 0, "max": 19}}, "B": {"range": {"min": 0, "max": 19}}},
        "constraints": ["$A + $B <= 30"]})",
                            "grid.space.json");
}

// A smooth bowl with its minimum at (13, 6).
double landscape(Point const& p) {
    return 100 + std::pow(double(p[0] - 13), 2) + 2 * std::pow(double(p[1] - 6), 2);
}

struct Trial {
    std::vector<Point> order;
    std::size_t toOptimum = 0; ///< candidates until (13, 6) was tried
};

Trial run(Solver const& solver, StrategyOptions options, std::size_t batch = 4) {
    options.predict = [](Point const& p) { return landscape(p) * 1.1 + double(p[1]); };
    auto strategy = makeStrategy(solver, options);
    Trial r;
    while (true) {
        auto const proposed = strategy->propose(batch);
        if (proposed.empty())
            break;
        for (auto const& p : proposed) {
            r.order.push_back(p);
            if (p == Point{13, 6} && r.toOptimum == 0)
                r.toOptimum = r.order.size();
            strategy->observe({p, true, landscape(p)});
        }
    }
    return r;
}

} // namespace

TEST(Strategy, DrawBelowIsFixedByTheSeed) {
    std::mt19937_64 rng(42);
    std::vector<std::uint64_t> draws;
    for (int i = 0; i < 5; ++i)
        draws.push_back(drawBelow(rng, 10));
    // std::mt19937_64's output is fixed by the standard, and so is this draw.
    std::mt19937_64 again(42);
    for (auto d : draws)
        EXPECT_EQ(d, drawBelow(again, 10));
    for (auto d : draws)
        EXPECT_LT(d, 10u);
}

TEST(Strategy, EachVisitsOnlyValidPointsOnceAndIsDeterministic) {
    SearchSpace const space = grid();
    Solver const solver(space, {});
    std::size_t const valid = solver.all().size();
    for (std::string name : strategyNames()) {
        Trial const a = run(solver, {.name = name, .seed = 5});
        Trial const b = run(solver, {.name = name, .seed = 5});
        EXPECT_EQ(a.order, b.order) << name;
        std::set<Point> seen;
        for (auto const& p : a.order) {
            EXPECT_TRUE(solver.valid(p)) << name;
            EXPECT_TRUE(seen.insert(p).second) << name << ": repeated";
        }
        EXPECT_EQ(seen.size(), valid) << name << ": runs until the space is exhausted";
        EXPECT_GT(a.toOptimum, 0u) << name;
    }
    EXPECT_NE(run(solver, {.name = "random", .seed = 5}).order,
              run(solver, {.name = "random", .seed = 6}).order);
    EXPECT_EQ(run(solver, {.name = "exhaustive"}).order, solver.all());
}

TEST(Strategy, GuidedSearchesReachTheOptimumSooner) {
    SearchSpace const space = grid();
    Solver const solver(space, {});
    std::size_t const exhaustive = run(solver, {.name = "exhaustive"}).toOptimum;
    std::size_t const guided = run(solver, {.name = "model-guided", .topK = 4}).toOptimum;
    std::size_t const evolved = run(solver, {.name = "evolutionary", .seed = 3}).toOptimum;
    auto const all = solver.all();
    EXPECT_EQ(exhaustive,
              std::size_t(std::find(all.begin(), all.end(), Point{13, 6}) - all.begin()) + 1);
    EXPECT_LE(guided, 4u); // the model ranks it first or nearly
    EXPECT_LT(evolved, exhaustive);
}

TEST(Strategy, AnUnknownNameSaysWhichExist) {
    SearchSpace const space = grid();
    Solver const solver(space, {});
    try {
        makeStrategy(solver, {.name = "evolution"});
        FAIL() << "no error";
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(), "unknown strategy 'evolution' (did you mean 'evolutionary'?); "
                               "expected one of exhaustive, random, evolutionary, model-guided");
    }
}
