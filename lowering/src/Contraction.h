// Contraction.h (internal): a Multiply into a register tile in the terms every code generator
// writes it in: which operand axes meet the result's rows and columns, the constant K extent of
// the staged tiles, and the distinct rows (or columns) of a workitem's accumulators, so that
// each operand element is read once per K index.
#pragma once

#include "kiln/lowering/IndexExpressions.h"

#include <vector>

namespace kiln::lowering::detail {

struct Contraction {
    Id lhs = 0, rhs = 0, dest = 0;
    Id rowAxis = 0, lhsK = 0;    ///< the lhs axis along the result's rows, and its K axis
    Id colAxis = 0, rhsK = 0;    ///< the rhs axis along the result's columns, and its K axis
    Id destRow = 0, destCol = 0; ///< the result's axes
    std::int64_t inner = 0;      ///< the K extent
};

/// The contraction of Multiply `op`; a UserError for tiles that are not two-axis or a K extent
/// that is not a constant.
Contraction contractionOf(KernelGraph const& graph, Id op, Operation const& o);

/// The distinct indices along `axis` of `elements`, in first-seen order.
struct Distinct {
    std::vector<ExprPtr> values;
    std::vector<std::size_t> which; ///< each element's among them
};
Distinct distinctAlong(std::vector<IndexSolution> const& elements, Id axis);

} // namespace kiln::lowering::detail
