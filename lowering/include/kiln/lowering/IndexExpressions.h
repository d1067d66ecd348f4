// IndexExpressions.h: coordinate transforms turned into index expressions.
//
// Code generation knows some indices as expressions (a workitem number, a loop counter, the
// constant place of an element in a thread's registers) and needs others (a tensor's offset, a
// shared-memory slot). solveIndices runs the same chain of transforms as the interpreter
// (TransformChain.h), each forward or in reverse, on Expressions, and collects the conditions
// under which every index on the way lies inside its dimension: the masks of tiles that
// overhang a tensor's edge. Conditions that IndexFacts proves for every launch are left out.
#pragma once

#include "kiln/graph/KernelGraph.h"
#include "kiln/lowering/IndexFacts.h"

#include <map>
#include <vector>

namespace kiln::lowering {

/// The targets' indices and the conditions that make the element valid (all must hold).
struct IndexSolution {
    std::map<Id, ExprPtr> indices; ///< every index computed on the way, targets included
    std::vector<ExprPtr> conditions;

    /// The index of `target`; an InternalError when it was not solved.
    ExprPtr const& at(Id target) const;
};

/// Solves `targets` from the `known` indices. A UserError when no chain reaches a target or a
/// transform on the way cannot be written as an expression (Sunder). `facts` are `graph`'s: the
/// chain of transforms comes from their TransformChains.
IndexSolution solveIndices(KernelGraph const& graph, std::map<Id, ExprPtr> const& known,
                           std::vector<Id> const& targets, IndexFacts const& facts);

} // namespace kiln::lowering
