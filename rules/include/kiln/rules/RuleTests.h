// RuleTests.h: running the tests a rule set file carries.
//
// Each test translates a Command, applies the rule sets it names as `before`, then this rule
// set with the test's parameters, checking the meaning after every application (SemanticCheck,
// at the Command's problem sizes or the test's own "problem"), and compares counts of kinds with
// the expected ones, or the error with the expected one. `kiln rules test` and the test suite both
// run them.
#pragma once

#include "kiln/rules/Rule.h"

#include <string>
#include <vector>

namespace kiln::rules {

struct RuleTestResult {
    std::string name;
    bool passed = false;
    std::string message; ///< why it failed, or a one-line summary when it passed
};

std::vector<RuleTestResult> runRuleTests(RuleSet const& rules);

/// How many elements of the kind named `kind` (a dimension, operation or edge kind) `graph` has.
std::int64_t countKind(KernelGraph const& graph, std::string const& kind);

} // namespace kiln::rules
