// Sweep.h: one tuning sweep: a strategy proposes, an evaluator evaluates, the database records.
//
// Before evaluating a proposed point the sweep looks it up in the database under its key: a
// record there (from an earlier or killed sweep) is reused, not evaluated again. Every new
// result is appended to the database as soon as the evaluator reports it. The sweep ends when
// the strategy is done or the budget (candidates, including reused ones, or seconds) is spent;
// then, where asked, its few fastest points are measured again (SweepOptions::finalists).
#pragma once

#include "kiln/scheduler/Evaluator.h"
#include "kiln/scheduler/Strategy.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

namespace kiln::scheduler {

struct SweepBudget {
    std::size_t candidates = 0; ///< 0: no limit
    double seconds = 0;         ///< 0: no limit
};

/// One candidate of a sweep, in the order it was done.
struct SweepEntry {
    Point point;
    std::map<std::string, std::int64_t> params;
    Evaluation evaluation;
    bool reused = false; ///< taken from the database
    double elapsed = 0;  ///< seconds since the sweep started, when it finished
};

struct SweepResult {
    std::string evaluator; ///< the key's evaluator, which says how candidates were checked
    std::vector<SweepEntry> entries;
    std::optional<TuningRecord> best; ///< bestOf() over the entries' records
    std::size_t reused = 0, failures = 0;
    std::size_t retimed = 0; ///< finalists measured again (SweepOptions::finalists)
    double seconds = 0, compileSeconds = 0, measureSeconds = 0;
};

/// What the progress display is told after each candidate.
struct SweepProgress {
    std::size_t done = 0, failures = 0, reused = 0;
    std::size_t total = 0; ///< the budget or the number of valid points
    double elapsed = 0;    ///< wall seconds since the sweep started
    /// Evaluator::compileSeconds() and measureSeconds(): busy seconds, summed over the compiles
    /// (or workers) running at once, so they can exceed `elapsed`.
    double compileSeconds = 0, measureSeconds = 0;
    std::optional<double> best;
    std::string bestPoint;
};

struct SweepOptions {
    SweepBudget budget;
    std::size_t batch = 8; ///< candidates proposed and evaluated at once
    /// The fastest this many points are evaluated again, together, once the search is done,
    /// and keep their new results (the database's later record of a point supersedes the
    /// earlier). The fastest of many noisy measurements is biased low: measured again, the
    /// winner's time is what a later run of it finds. The point the first measurements chose
    /// by a near-tie (bestOf()) is measured with them, and the winner is chosen among the
    /// finalists alone. 0: none (a cost model needs none).
    std::size_t finalists = 0;
    std::function<void(SweepProgress const&)> progress;
};

/// Runs a sweep over `solver`'s space.
SweepResult runSweep(Solver const& solver, Strategy& strategy, Evaluator& evaluator,
                     TuningDatabase& database, TuningKey const& key, SweepOptions const& options);

} // namespace kiln::scheduler
