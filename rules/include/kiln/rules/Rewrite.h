// Rewrite.h: applying one rule at one match, all or nothing.
//
// The rewrite runs on a copy of the graph: it adds nodes (attributes instantiated from the
// match), sets attributes, adds edges, retargets uses, removes what the rule names, records the
// provenance of every new element, and verifies the result. Only a valid result replaces the
// graph; otherwise the UserError names the rule and what it would have broken, and the graph is
// unchanged. Removing a node while an edge the rule does not remove still touches it is such an
// error: a rule re-connects dangling edges explicitly.
#pragma once

#include "kiln/rules/Matcher.h"
#include "kiln/rules/RuleExpression.h"

#include <string>
#include <vector>

namespace kiln::rules {

/// What one application did, for traces.
struct Application {
    std::string ruleset;
    std::string rule;
    std::int64_t number = 0; ///< 1 for the first application in a run
    Match match;
    std::string guard; ///< the guard, instantiated and simplified
    std::vector<Id> added, removed;
};

/// Applies `rule` at `match`; `context` supplies parameters and arch facts.
Application applyRewrite(Rule const& rule, Match const& match, KernelGraph& graph,
                         RuleContext const& context, std::int64_t number);

} // namespace kiln::rules
