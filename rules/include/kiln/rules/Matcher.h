// Matcher.h: finding a Pattern in a KernelGraph.
//
// A backtracking matcher over the typed hypergraph: it binds the most constrained edge next,
// enumerating only the edges incident to nodes already bound (and, to start, the nodes of the
// rarest kind), so the work grows with the neighbourhood of a match rather than the graph.
// Variables bind distinct elements; a variadic port list binds the remaining ports, and two
// uses of one variadic variable must bind the same list. Matches come in a deterministic order
// (by the ids of their elements), so that rewriting is reproducible. We chose our own indexed
// matcher over Boost's VF2 because patterns are hypergraphs with ordered ports spanning three
// graphs, and because the matcher must say why it did not match (explain()).
#pragma once

#include "kiln/rules/Limits.h"
#include "kiln/rules/Rule.h"

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::rules {

/// Variables bound to graph elements.
struct Match {
    std::map<std::string, Id> elements; ///< node and edge variables (mapping edges: the op)
    std::map<std::string, std::vector<Id>> lists; ///< variadic variables
};

class Matcher {
public:
    explicit Matcher(KernelGraph const& graph);

    /// Calls `accept` with each match of `pattern` that extends `seed`, in order, until it
    /// returns true; returns whether one did.
    bool forEach(Pattern const& pattern, std::function<bool(Match const&)> const& accept,
                 Match const& seed = {});

    /// Whether some match of `pattern` extends `seed`.
    bool exists(Pattern const& pattern, Match const& seed);

    /// Candidate bindings tried so far: node and edge candidates, each partial match explored.
    std::int64_t candidatesTried() const { return tried_; }

    /// What a search throws once candidatesTried() passes the budget of setBudget or the clock
    /// passes its deadline; the engine reports it as a LimitError naming the rule.
    struct OverBudget {
        Limit limit;
    };

    /// Bounds every later search: at most `candidates` more tried, ending by `deadline`. Without a
    /// budget a search is unbounded.
    void setBudget(std::int64_t candidates, std::chrono::steady_clock::time_point deadline);

    /// Why `pattern` matches nowhere with `variable` bound to `at`: the first constraint that
    /// failed on the deepest partial match, as a sentence; empty when it does match.
    std::string explain(Pattern const& pattern, std::string const& variable, Id at);

private:
    struct Search;
    KernelGraph const& graph_;
    std::map<DimensionKind, std::vector<Id>> dimensionsByKind_;
    std::map<OperationKind, std::vector<Id>> operationsByKind_;
    std::vector<Id> allDimensions_, allOperations_;
    std::map<Id, std::vector<Id>> users_; ///< dimension -> operations connected to it
    std::int64_t tried_ = 0;
    std::int64_t mostTried_ = INT64_MAX;
    std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();

    void count(); ///< one more candidate tried, within the budget
};

} // namespace kiln::rules
