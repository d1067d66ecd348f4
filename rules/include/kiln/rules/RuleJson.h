// RuleJson.h: reading rule sets from JSON (docs/rules.md describes the format).
//
// Everything is checked as it is read: kinds, ports, variables, parameters and every expression
// (with the column of the offending name inside the string), so that a rule set that loads can
// only fail on the graph it is applied to. Errors point at file:line:col and the JSON pointer.
// Templates (RuleTemplate.h) are expanded first; an error in an instance points at the
// template's text and names the instance.
#pragma once

#include "kiln/graph/SourceJson.h"
#include "kiln/rules/Rule.h"

#include <string>
#include <string_view>

namespace kiln::rules {

RuleSet parseRuleSet(std::string_view text, std::string const& file);
RuleSet loadRuleSet(std::string const& path);
RuleSet readRuleSet(JsonValue const& root);

} // namespace kiln::rules
