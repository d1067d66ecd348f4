// HeldElements.h: the elements of a value that one workitem holds in its registers.
//
// A value distributed over the grid (graph/Distribution.h) with constant-size local indices is
// held in registers: one per combination of its local indices, last index fastest. Each element
// is where it lies (every index solved from the hardware indices, loop counters and the
// element's constant local indices) and when it exists (the conditions of the solution). Code
// generators for every target enumerate a workitem's elements through these functions.
#pragma once

#include "kiln/lowering/IndexExpressions.h"

#include <map>
#include <string_view>
#include <vector>

namespace kiln::lowering {

/// The axes data dimension `d` is the Flatten of (`d` itself when it is not one).
std::vector<Id> flattenAxes(KernelGraph const& graph, Id d);

/// The size of `d`, which code generation needs as a constant; a UserError naming `what`
/// otherwise.
std::int64_t constantSize(KernelGraph const& graph, Id d, std::string_view what);

/// Whether a workitem can hold `d` in registers: distributed over the grid, with local indices
/// of constant size.
bool holdable(KernelGraph const& graph, Id d);

/// Every element of held value `d` in register order, solved from the `known` indices; a
/// UserError past `maxElements` registers per workitem.
std::vector<IndexSolution> heldElements(KernelGraph const& graph, IndexFacts const& facts,
                                        std::map<Id, ExprPtr> const& known, Id d,
                                        std::int64_t maxElements = 256);

} // namespace kiln::lowering
