// Compare.h: how well one set of results predicts another (the cost model against
// measurements, one GPU against another).
//
// Over the points both sets timed successfully: the Kendall rank correlation (tau-b, which
// allows ties), and how much slower, in the second set's times, the first set's best point is
// than the second set's best. Used by `kiln db compare` for issue 7's figures.
#pragma once

#include "kiln/scheduler/TuningDatabase.h"

#include <optional>
#include <vector>

namespace kiln::scheduler {

/// Kendall's tau-b of the pairs (x[i], y[i]); nothing when fewer than two pairs or when either
/// side is constant.
std::optional<double> kendallTau(std::vector<double> const& x, std::vector<double> const& y);

struct Comparison {
    std::size_t common = 0;    ///< points Ok in both
    std::optional<double> tau; ///< Kendall's tau-b over them
    /// The first set's best point, timed by the second, over the second's best (>= 1).
    std::optional<double> pickRatio;
    std::map<std::string, std::int64_t> predictedBest, measuredBest;
};

/// Compares `predicted` (e.g. the model's records) with `measured` over their common points.
Comparison compareResults(std::vector<TuningRecord> const& predicted,
                          std::vector<TuningRecord> const& measured);

} // namespace kiln::scheduler
