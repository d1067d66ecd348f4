// Engine.h: applying a rule set to a KernelGraph under its strategy.
//
// The engine finds matches (Matcher), keeps those whose node guards and rule guard hold and
// that no negative pattern extends, applies them (applyRewrite), and drives the strategy. A
// fixpoint that runs out of budget, or that comes back to a graph it has already produced
// (found by hashing the printed graph), is an error that names the rules that kept firing.
// Observers see every application: the trace, DOT files per step, and the semantic check.
// Every run is bounded by Limits (Limits.h), counted across the steps of a lowering.
#pragma once

#include "kiln/rules/Limits.h"
#include "kiln/rules/Rewrite.h"
#include "kiln/rules/Rule.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kiln::rules {

struct EngineOptions {
    std::map<std::string, std::int64_t> parameters;
    /// Facts of the target (arch.NAME); absent when no target is given.
    std::function<std::optional<std::int64_t>(std::string const&)> arch;
    /// Called after every application with the graph it produced.
    std::function<void(Application const&, KernelGraph const& after)> observe;
    /// The most the whole lowering may use; reaching a limit is a LimitError.
    Limits limits;
    /// What the lowering used before this rule set (lower() carries it from step to step).
    Usage spent;
};

struct ApplyResult {
    std::int64_t applications = 0;
    StopReason reason = StopReason::Done;
    Usage spent; ///< options.spent plus what this rule set used
};

/// Applies `rules` to `graph` under the rule set's strategy, within `options.limits`. On error
/// (a LimitError among them) the graph is left as it was before the call.
ApplyResult apply(RuleSet const& rules, KernelGraph& graph, EngineOptions const& options);

/// The first match of `rule` in `graph` whose guards hold and that no negative pattern extends.
/// `candidates`, if given, accumulates the candidate bindings tried.
std::optional<Match> findMatch(Rule const& rule, KernelGraph const& graph,
                               RuleContext const& context, std::int64_t* candidates = nullptr);

/// Why `rule` does not match with variable `variable` bound to element `at`: the first failed
/// constraint (kind, edge, guard or negative pattern), or "" when it matches there.
std::string whyNot(Rule const& rule, KernelGraph const& graph, std::string const& variable, Id at,
                   RuleContext const& context);

/// Parameter values for `rules`: `given` plus each declared default; a UserError naming a
/// parameter with neither.
std::map<std::string, std::int64_t>
parameterValues(RuleSet const& rules, std::map<std::string, std::int64_t> const& given);

} // namespace kiln::rules
