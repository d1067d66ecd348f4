// Verify.h: the structural invariants of a KernelGraph, checked.
//
// Every stage that builds or rewrites a KernelGraph (translate, the JSON loader, rule sets,
// native steps) must leave these true; the interpreter and code generation rely on them without
// checking. verify() lists every broken invariant, not just the first, in a deterministic order
// (by element id, graph-wide problems first), so that a failing rewrite can be debugged from one
// message. Loaders turn problems into a UserError (the input was bad); rewrites into an
// InternalError (Kiln has a bug).
//
// What is checked:
//   coordinates  edge arity per kind; transforms (all but DataFlow) form no cycle; DataFlow joins
//                data dimensions; sizes, strides, axes, element types and tensor names where a
//                kind needs them; a tile's shape multiplies to its size (when both are numbers)
//   control      one Kernel, with no incoming edge, from which every operation is reached; no
//                cycle; Body from Kernel/ForLoop/If, Else from If, Initialize/ForLoopIncrement
//                from ForLoop to Assign; conditions of ForLoop/If and values of Assign present
//   mapping      each operation has exactly the roles its kind needs (Translate.h), each naming
//                a dimension of the right kind; no connections of operations that do not exist
//   expressions  every size#, stride#, index# and value# leaf names a dimension (value# a data
//                dimension of that type); every argument names a graph argument of that type;
//                no unbound Command tag remains
#pragma once

#include "kiln/graph/Error.h"
#include "kiln/graph/KernelGraph.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// One broken invariant: the element it is about (0 for the graph as a whole) and what is wrong.
struct Problem {
    Id element = 0;
    std::string message;
    bool operator==(Problem const&) const = default;
};

/// Every broken invariant of `graph`, ordered by element id (graph-wide problems first), and in
/// a fixed order of checks within one element. Empty when the graph is valid.
std::vector<Problem> verify(KernelGraph const& graph);

/// "#12 Tile: message" (or "graph: message" for element 0): the problem with its element's id
/// and kind, as every report of problems prints it.
std::string describe(KernelGraph const& graph, Problem const& problem);

/// All problems, described and joined by "; ".
std::string describe(KernelGraph const& graph, std::vector<Problem> const& problems);

/// For loaders: a UserError "graph is not valid: #12 Tile: ...; ..." at `where` unless valid.
void verifyOrFail(KernelGraph const& graph, SourceLocation where = {});

/// For rewrites: an InternalError "graph is not valid after WHEN: ..." unless valid.
void check(KernelGraph const& graph, std::string_view when);

/// check() in debug builds (NDEBUG not defined); nothing in release builds, where the cost of
/// verifying after every rewrite is not wanted.
inline void debugCheck([[maybe_unused]] KernelGraph const& graph,
                       [[maybe_unused]] std::string_view when) {
#ifndef NDEBUG
    check(graph, when);
#endif
}

} // namespace kiln
