// Limits.h: the bounds on every lowering, so that no rule set runs for minutes.
//
// A strategy can nest `repeat`s, a fixpoint can carry a large budget, and a pattern with many
// free nodes makes the matcher try the product of their candidates: each alone is legitimate,
// together they can run for as long as they like. Every lowering (a pipeline, or one rule set
// applied alone) therefore runs within Limits on the rule applications, the strategy steps,
// the matcher's candidate bindings and the wall time, all counted across its steps. The
// defaults are far above what the shipped pipelines use (see Limits below), so
// reaching one means a runaway rule set; the LimitError names the limit, the rule set, the
// strategy and the rule, and the graph is left as it was before the lowering.
#pragma once

#include "kiln/graph/Error.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::rules {

/// The most one lowering may use. Every count is a total over the lowering's steps. The
/// largest shipped lowering (GEMM, any schedule and target) uses 13 applications, 64 steps,
/// about 1,500 candidates and a few milliseconds; each default is reached within a few seconds
/// by the runaway it stops.
struct Limits {
    /// Rules applied. A rule that grows the graph every time costs ~2 s to reach 2,000 (each
    /// application copies, verifies and hashes the graph).
    std::int64_t applications = 2'000;
    /// Strategy steps: a composite strategy run, or a rule tried on the graph (~0.1-0.5 s for
    /// a million).
    std::int64_t steps = 1'000'000;
    /// Matcher work: the node and edge candidates it tried to bind, one per partial match
    /// explored (~4 million a second).
    std::int64_t candidates = 10'000'000;
    /// Wall time, in seconds: the bound on what the counts miss (slow guards, large graphs).
    /// What the lowering's observers take (EngineOptions::observe: the semantic check, a
    /// trace) does not count: it grows with the problem the caller chose to check at, and a
    /// rule set is not a runaway because the check after each of its applications is slow.
    double seconds = 10;
};

/// Which limit a lowering reached.
enum class Limit : std::uint8_t { Applications, Steps, Candidates, Time };

std::string_view name(Limit limit);

/// "100 rule applications", "2 s of wall time": the limit with its value in `limits`.
std::string describe(Limit limit, Limits const& limits);

/// What a lowering has used of its Limits so far.
struct Usage {
    std::int64_t applications = 0, steps = 0, candidates = 0;
    /// When the lowering began, moved later by the time its observers took (the wall-time
    /// limit counts from here); unset: when the rule set starts to apply.
    std::optional<std::chrono::steady_clock::time_point> start;
};

/// The time by which a lowering that began at `start` must end (time_point::max() when the
/// limit is too far to count).
std::chrono::steady_clock::time_point deadline(std::chrono::steady_clock::time_point start,
                                               Limits const& limits);

/// A lowering that reached one of its Limits: bad input (a runaway rule set), located at the
/// strategy that was running. A `try` strategy does not catch it.
class LimitError : public UserError {
public:
    LimitError(Limit limit, std::string message, SourceLocation location)
        : UserError(std::move(message), std::move(location))
        , limit_(limit) {}

    Limit limit() const { return limit_; }

private:
    Limit limit_;
};

} // namespace kiln::rules
