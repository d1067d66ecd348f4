// RowPatterns.h: what the finders of one-pass row statistics (OnlineSoftmax.h, MeanVariance.h)
// ask of a KernelGraph's operations and values.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <vector>

namespace kiln::lowering::detail {

/// The operations whose `role` (role::source, role::dest) is value `d`.
std::vector<Id> operationsWith(KernelGraph const& graph, char const* role, Id d);

/// Whether `e` is value `d` as f32: the value itself when it is f32, else its conversion to f32
/// (exact from f16 and bf16, and monotone, so that the f32 of a max is the max of the f32s).
bool asF32(KernelGraph const& graph, ExprPtr const& e, Id d);

/// Whether values `a` and `b` have the same shape, every extent known.
bool sameShape(KernelGraph const& graph, Id a, Id b);

} // namespace kiln::lowering::detail
