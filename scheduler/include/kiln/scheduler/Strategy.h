// Strategy.h: which candidates a sweep tries, in which order.
//
// A strategy proposes batches of valid points and is told how each came out; the sweep stops
// when the strategy has nothing more to propose or the budget (candidates or seconds) is spent.
// Every strategy is deterministic given its seed: the same seed, space and results give the
// same proposals (random numbers come from std::mt19937_64, whose output the standard fixes,
// drawn through Kiln's own bounded draw rather than a library distribution).
//   exhaustive    every valid point, in enumeration order
//   random        valid points in a seeded random order, without repetition
//   evolutionary  a population refined by tournament selection, crossover and mutation
//   model-guided  all valid points ranked by the cost model; the top k measured; then the
//                 model-ranked neighbours of the best measured, until no neighbour is left
#pragma once

#include "kiln/scheduler/Solver.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// The outcome of one candidate, as a strategy sees it.
struct Outcome {
    Point point;
    bool ok = false;
    double microseconds = 0;
};

class Strategy {
public:
    virtual ~Strategy() = default;
    /// Up to `most` new points to evaluate next; empty when the strategy is done.
    virtual std::vector<Point> propose(std::size_t most) = 0;
    /// What happened to a proposed (or previously recorded) point.
    virtual void observe(Outcome const& outcome) = 0;
};

/// A draw in [0, n) from `rng`, the same on every standard library.
std::uint64_t drawBelow(std::mt19937_64& rng, std::uint64_t n);

/// Predicts a point's time (the cost model), for model-guided search.
using Predictor = std::function<double(Point const&)>;

/// What a strategy needs.
struct StrategyOptions {
    std::string name = "exhaustive"; ///< exhaustive, random, evolutionary, model-guided
    std::uint64_t seed = 1;
    std::size_t population = 16; ///< evolutionary
    std::size_t topK = 8;        ///< model-guided: the first batch measured
    Predictor predict;           ///< model-guided: needed
};

/// The strategy `options.name` over `solver`'s valid points; a UserError for an unknown name.
std::unique_ptr<Strategy> makeStrategy(Solver const& solver, StrategyOptions const& options);

/// The strategy names, for --help and messages.
std::vector<std::string> strategyNames();

} // namespace kiln::scheduler
