#include "kiln/scheduler/Sweep.h"

#include "kiln/graph/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

namespace kiln::scheduler {

namespace {

TuningRecord recordOf(TuningKey const& key, std::map<std::string, std::int64_t> const& params,
                      Evaluation const& e) {
    TuningRecord r;
    r.key = key;
    r.point = params;
    r.status = e.ok ? RecordStatus::Ok : RecordStatus::Failed;
    r.microseconds = e.microseconds;
    r.spread = e.spread;
    r.samples = e.samples;
    r.stage = e.stage;
    r.error = e.error;
    r.compileSeconds = e.compileSeconds;
    r.extra = e.extra;
    return r;
}

/// A time that is not a positive, finite number is no measurement (a cost model given a
/// workgroup of 0 said infinity): the candidate failed, whatever its evaluator said.
Evaluation checkedTime(Evaluation e) {
    if (e.ok && !(std::isfinite(e.microseconds) && e.microseconds > 0)) {
        e.ok = false;
        e.stage = e.stage.empty() ? "run" : e.stage;
        e.error = fmt::format("the time {} us is not a positive, finite number", e.microseconds);
        e.microseconds = 0;
    }
    return e;
}

Evaluation evaluationOf(TuningRecord const& r) {
    Evaluation e;
    e.ok = r.status == RecordStatus::Ok;
    e.microseconds = r.microseconds;
    e.spread = r.spread;
    e.samples = r.samples;
    e.stage = r.stage;
    e.error = r.error;
    e.compileSeconds = r.compileSeconds;
    e.extra = r.extra;
    return e;
}

} // namespace

SweepResult runSweep(Solver const& solver, Strategy& strategy, Evaluator& evaluator,
                     TuningDatabase& database, TuningKey const& key, SweepOptions const& options) {
    using Clock = std::chrono::steady_clock;
    auto const start = Clock::now();
    auto const elapsed = [&] {
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    SweepResult result;
    result.evaluator = key.evaluator;
    std::vector<TuningRecord> records;
    SweepProgress progress;
    progress.total = options.budget.candidates;
    if (progress.total == 0) {
        std::size_t valid = 0;
        solver.enumerate([&](Point const&) { return ++valid < (std::size_t(1) << 24); });
        progress.total = valid;
    }

    auto const finish = [&](Point const& point, std::map<std::string, std::int64_t> const& params,
                            Evaluation const& evaluation, bool reused) {
        Evaluation const e = checkedTime(evaluation);
        SweepEntry entry{point, params, e, reused, elapsed()};
        TuningRecord const record = recordOf(key, params, e);
        if (!reused)
            database.append(record);
        records.push_back(record);
        result.entries.push_back(std::move(entry));
        ++progress.done;
        progress.reused += reused ? 1 : 0;
        progress.failures += e.ok ? 0 : 1;
        if (e.ok && (!progress.best || e.microseconds < *progress.best)) {
            progress.best = e.microseconds;
            progress.bestPoint = solver.text(point);
        }
        progress.elapsed = elapsed();
        // Atomic counters: safe here, where `finish` runs inside the evaluator's callback.
        progress.compileSeconds = evaluator.compileSeconds();
        progress.measureSeconds = evaluator.measureSeconds();
        if (options.progress)
            options.progress(progress);
    };

    auto const budgetLeft = [&]() -> std::size_t {
        if (options.budget.seconds > 0 && elapsed() >= options.budget.seconds)
            return 0;
        if (options.budget.candidates == 0)
            return std::size_t(-1);
        return options.budget.candidates > result.entries.size()
                   ? options.budget.candidates - result.entries.size()
                   : 0;
    };

    while (true) {
        std::size_t const left = budgetLeft();
        if (left == 0)
            break;
        std::vector<Point> proposed = strategy.propose(std::min(options.batch, left));
        if (proposed.empty())
            break;
        std::vector<Candidate> batch;
        for (auto const& p : proposed) {
            auto params = solver.named(p);
            if (TuningRecord const* old = database.find(key, params)) {
                Evaluation const e = evaluationOf(*old);
                finish(p, params, e, true);
                strategy.observe({p, e.ok, e.microseconds});
                continue;
            }
            batch.push_back({p, std::move(params)});
        }
        if (batch.empty())
            continue;
        evaluator.evaluate(batch, [&](std::size_t i, Evaluation const& e) {
            finish(batch[i].point, batch[i].params, e, false);
        });
        // Observations in batch order, so that the strategy's next proposals do not depend on
        // which candidate happened to finish first.
        std::map<Point, Evaluation const*> byPoint;
        for (auto it = result.entries.end() - std::ptrdiff_t(batch.size());
             it != result.entries.end(); ++it)
            byPoint[it->point] = &it->evaluation;
        KILN_ASSERT(byPoint.size() == batch.size(), "the evaluator skipped a candidate");
        for (auto const& c : batch) {
            Evaluation const& e = *byPoint.at(c.point);
            strategy.observe({c.point, e.ok, e.microseconds});
        }
    }

    // The finalists, measured again together; their new results stand (`records` holds one
    // record per entry, in the same order).
    std::vector<std::size_t> fastest;
    for (std::size_t i = 0; i < result.entries.size(); ++i)
        if (result.entries[i].evaluation.ok)
            fastest.push_back(i);
    std::sort(fastest.begin(), fastest.end(), [&](std::size_t a, std::size_t b) {
        auto const& x = result.entries[a];
        auto const& y = result.entries[b];
        return std::pair(x.evaluation.microseconds, x.params) <
               std::pair(y.evaluation.microseconds, y.params);
    });
    fastest.resize(std::min(fastest.size(), options.finalists));
    // The point the first measurements would choose, where a near-tie chose a smaller point
    // than the fastest, is a finalist too: the tie is decided again, side by side.
    if (auto const choice = bestOf(records); choice && options.finalists > 0) {
        auto const at = std::ranges::find_if(records, [&](TuningRecord const& r) {
            return r.status == RecordStatus::Ok && r.point == choice->point;
        });
        auto const i = std::size_t(at - records.begin());
        if (at != records.end() && std::ranges::find(fastest, i) == fastest.end())
            fastest.push_back(i);
    }
    // A finalist taken from the database already measured again (a sweep run a second time)
    // is not measured a third time.
    std::erase_if(fastest, [&](std::size_t i) {
        return result.entries[i].reused &&
               result.entries[i].evaluation.extra.contains(kRetimedExtra);
    });
    std::vector<Candidate> finalists;
    for (std::size_t i : fastest)
        finalists.push_back({result.entries[i].point, result.entries[i].params, true});
    if (!finalists.empty()) {
        evaluator.evaluate(finalists, [&](std::size_t k, Evaluation const& evaluation) {
            SweepEntry& entry = result.entries[fastest[k]];
            entry.evaluation = checkedTime(evaluation);
            entry.evaluation.extra[kRetimedExtra] = 1;
            records[fastest[k]] = recordOf(key, entry.params, entry.evaluation);
            database.append(records[fastest[k]]);
            ++result.retimed;
        });
    }

    result.seconds = elapsed();
    result.reused = progress.reused;
    result.failures = progress.failures;
    result.compileSeconds = evaluator.compileSeconds();
    result.measureSeconds = evaluator.measureSeconds();
    result.best = bestOf(records);
    return result;
}

} // namespace kiln::scheduler
