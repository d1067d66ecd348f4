// Rule.h: rules, rule sets and their parts, as loaded from JSON.
//
// A Rule is data: a pattern over the KernelGraph (typed node variables; coordinate, control and
// mapping edges with ordered ports, variadic port lists; negative sub-patterns), a guard, and a
// rewrite (nodes and edges to add, attributes to set, uses to retarget, elements to remove).
// A RuleSet groups rules under a Strategy and declares the schedule parameters they read.
// Every part remembers where it was written, so that every later error can point back there.
#pragma once

#include "kiln/graph/Error.h"
#include "kiln/graph/KernelGraph.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/rules/RuleExpression.h"
#include "kiln/rules/Strategy.h"

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::rules {

/// A node variable: which graph, which kinds (any of them), and a guard of its own.
struct NodePattern {
    std::string variable;
    bool control = false;                      ///< an Operation (else a Dimension)
    std::vector<DimensionKind> dimensionKinds; ///< empty: any
    std::vector<OperationKind> operationKinds; ///< empty: any
    std::optional<RuleExpression> where;
    SourceLocation at;
};

/// An ordered list of node variables with, at its end, an optional variadic variable that binds
/// the remaining ports ("...rest", with at least `minRest` of them).
struct PortList {
    std::vector<std::string> fixed;
    std::optional<std::string> rest;
    int minRest = 0;
    int maxRest = -1;
};

/// An edge of a pattern: a coordinate hyperedge, a control edge or a mapping connection.
struct EdgePattern {
    enum class Graph : std::uint8_t { Coordinate, Control, Mapping };
    Graph graph;
    std::string variable; ///< "as": lets the rewrite remove it; generated when not given
    CoordinateEdgeKind coordinateKind = CoordinateEdgeKind::DataFlow;
    ControlEdgeKind controlKind = ControlEdgeKind::Sequence;
    std::string role;      ///< Mapping
    PortList tails, heads; ///< Coordinate: tails/heads; Control: from/to; Mapping: op/dim
    SourceLocation at;
};

struct Pattern {
    std::vector<NodePattern> nodes;
    std::vector<EdgePattern> edges;
    std::vector<Pattern> negatives; ///< none of these may extend a match
};

/// A node the rewrite adds: a dimension or an operation with attributes as rule expressions.
struct NodeTemplate {
    std::string variable;
    bool control = false;
    DimensionKind dimensionKind = DimensionKind::User;
    OperationKind operationKind = OperationKind::Nop;
    std::optional<RuleExpression> size, stride, expression;
    std::vector<RuleExpression> shape;
    std::optional<int> axis;
    std::string name;
    std::optional<DataType> dtype;
    std::string dtypeFrom; ///< copy the dtype of this variable
    bool transposeA = false, transposeB = false;
    std::optional<Combine> combine;
    SourceLocation at;
};

/// New values for attributes of a bound variable.
struct AttributeUpdate {
    std::string variable;
    std::optional<RuleExpression> size, stride, expression;
    std::optional<std::vector<RuleExpression>> shape;
    SourceLocation at;
};

/// Every use of `from` (mapping connections and expression leaves) becomes a use of `to`.
struct Retarget {
    std::string from, to;
    SourceLocation at;
};

/// Moves operations into the body of a loop: each leaves its place in the control graph (its
/// neighbours are joined), the loop takes the place of the last one that had a place, and they
/// run in order as the loop's body.
struct Wrap {
    std::string loop;
    std::vector<std::string> body;
    SourceLocation at;
};

struct Rewrite {
    std::vector<NodeTemplate> addNodes;
    std::vector<EdgePattern> addEdges; ///< variadic lists allowed where bound by the match
    std::vector<AttributeUpdate> updates;
    std::vector<Retarget> retargets;
    std::optional<Wrap> wrap;
    std::vector<std::string> remove;
    std::vector<SourceLocation> removeAt;
};

struct Rule {
    std::string name;
    std::string doc;
    int priority = 0;
    Pattern match;
    std::optional<RuleExpression> where;
    Rewrite rewrite;
    SourceLocation at;
};

/// A check a rule file carries: a Command translated (and lowered by the steps before), then
/// this rule set applied, then expected counts of kinds or an expected error.
struct RuleTest {
    std::string name;
    std::string command;             ///< Command file, relative to the rule file
    std::vector<std::string> before; ///< rule set files applied first, relative to the rule file
    std::map<std::string, std::int64_t> params;
    std::map<std::string, std::int64_t> expectCounts; ///< kind name -> count in the result
    std::optional<std::string> expectError;           ///< a substring of the expected UserError
    bool check = true; ///< run the interpreter before and after against the Command
    /// The problem the check runs at in place of the Command's own ("problem": sizes and
    /// scalars, read as a Command's is); the check's ragged problem of primes runs as well.
    std::optional<JsonValue> problem;
    SourceLocation at;
};

/// A schedule parameter a rule set reads, with an optional default and an optional condition
/// its value must meet (over this and the set's other parameters), checked before the set runs.
struct Parameter {
    std::string name;
    std::optional<std::int64_t> fallback;
    std::string doc;
    std::optional<RuleExpression> valid;
    SourceLocation validAt;
};

struct RuleSet {
    std::string name;
    std::string doc;
    std::string file;
    std::vector<Parameter> parameters;
    Strategy strategy;
    std::vector<Rule> rules;
    std::vector<RuleTest> tests;

    Rule const* find(std::string_view rule) const;
};

} // namespace kiln::rules
