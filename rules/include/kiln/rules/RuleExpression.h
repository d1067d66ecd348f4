// RuleExpression.h: expressions inside rules, parsed once and instantiated per match.
//
// Guards and new attributes are written in the graph's expression language, plus names that
// only mean something inside a rule: `x.size`, `x.stride`, `x.axis`, `x.index`, `x.value`,
// `x.count` and `x.shape0..2` of a bound variable x (`x.transA`, `x.transB`, 0 or 1, of a
// Multiply), `$NAME` for
// schedule parameters, and `arch.NAME` for facts of the target. They are checked when the rule file
// is loaded (an unknown variable is an error at its column) and kept as placeholders, which
// instantiate() replaces by the matched graph's own expressions; so attributes stay symbolic
// (ceildiv(M, 64)), and a guard decides only what it can decide before launch.
#pragma once

#include "kiln/graph/Expression.h"
#include "kiln/graph/KernelGraph.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::rules {

/// A name a rule expression refers to.
struct Placeholder {
    /// CommandFact: `command.NAME`, a fact of the Command a search space is tuned for
    /// (scheduler/CommandFacts.h), where RuleScope::commandFacts allows it.
    enum class Kind : std::uint8_t { Attribute, Parameter, ArchFact, CommandFact };
    Kind kind;
    std::string variable;  ///< Attribute: the pattern variable
    std::string attribute; ///< Attribute: size, stride, axis, index, value, count, transA, transB;
                           ///< else the name
};

/// A parsed rule expression: a tree whose Argument leaves named "@k" stand for placeholders[k].
struct RuleExpression {
    std::string text;
    ExprPtr tree;
    std::vector<Placeholder> placeholders;
};

/// What a rule expression may name where it is written.
struct RuleScope {
    std::set<std::string> variables;  ///< pattern (and, in a rewrite, added) variables
    std::set<std::string> parameters; ///< declared $NAMEs
    /// Whether `command.NAME` may be written: in a search space's constraints, which are
    /// checked for one Command; not in rules, which apply to any graph.
    bool commandFacts = false;
};

/// Parses `text`; throws ExpressionError at the offset of an unknown name or attribute.
RuleExpression parseRuleExpression(std::string const& text, RuleScope const& scope);

/// Resolves placeholders during instantiation.
struct RuleContext {
    KernelGraph const* graph = nullptr;
    std::map<std::string, Id> const* nodes = nullptr;              ///< variable -> element
    std::map<std::string, std::vector<Id>> const* lists = nullptr; ///< variadic variables
    std::map<std::string, std::int64_t> const* parameters = nullptr;
    std::function<std::optional<std::int64_t>(std::string const&)> arch; ///< fact by name
};

/// The expression with every placeholder replaced, simplified. A UserError when a placeholder
/// has no value (an unset parameter, a dimension without a stride...).
ExprPtr instantiate(RuleExpression const& e, RuleContext const& context);

/// The outcome of a guard: true, false, or undecidable before launch (with the reason).
struct GuardValue {
    bool holds = false;
    bool decided = true;
    std::string value; ///< the simplified guard, for traces and `why`
};
GuardValue evaluateGuard(RuleExpression const& e, RuleContext const& context);

} // namespace kiln::rules
