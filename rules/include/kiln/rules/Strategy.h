// Strategy.h: how a rule set's rules are applied, separate from the rules themselves.
//
// Leaves apply rules: `once` (each listed rule at most once, in order), `fixpoint` (any listed
// rule, highest priority first, until none matches, within a hard budget of applications), and
// `first` (the highest-priority rule that matches, once). Composites: `seq` (children in
// order), `repeat` (a child N times) and `try` (a child whose failure leaves the graph as it
// was). How a strategy stopped is part of the result, not a log line.
#pragma once

#include "kiln/graph/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rules {

struct Strategy {
    enum class Kind : std::uint8_t { Once, Fixpoint, First, Seq, Repeat, Try };
    Kind kind = Kind::Fixpoint;
    std::vector<std::string>
        rules;                 ///< leaves: the rules it may apply (empty: every rule of the set)
    std::int64_t budget = 256; ///< fixpoint: most applications before it is an error
    std::int64_t times = 1;    ///< repeat
    std::vector<Strategy> children; ///< seq, repeat, try
    SourceLocation at;
};

std::string_view name(Strategy::Kind kind);

/// Why applying a strategy stopped.
enum class StopReason : std::uint8_t {
    Saturated, ///< no listed rule matches any more
    Done,      ///< once/first/seq/repeat ran to their end
    Recovered, ///< a `try` caught a failure and restored the graph
};

std::string_view name(StopReason reason);

} // namespace kiln::rules
