// Contraction.h (internal): a Multiply into a register tile in the terms every code generator
// writes it in: which operand axes meet the result's rows and columns, the constant K extent of
// the staged tiles, and the distinct rows (or columns) of a workitem's accumulators, so that
// each operand element is read once per K index.
#pragma once

#include "kiln/graph/Evaluate.h"
#include "kiln/lowering/IndexExpressions.h"

#include <array>
#include <map>
#include <optional>
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

/// Where an accumulator lies in the result at lane 0: (row, column).
using Place = std::pair<std::int64_t, std::int64_t>;

/// A matrix instruction's accumulators: fragments of four registers, each at its first place plus
/// the instruction's four offsets, in a grid of slabs of rows and of columns.
struct Fragments {
    struct Fragment {
        std::array<std::size_t, 4> registers; ///< the held value's elements, in offset order
        std::size_t rowSlab = 0, colSlab = 0; ///< into rows, cols
    };
    std::vector<Fragment> fragments;
    std::vector<std::size_t> rows, cols; ///< an element of each slab of rows (columns), in order
};

/// Groups the elements placed at `at` (place -> element) into fragments whose registers lie at
/// the fragment's first place plus each of `offsets`; nothing when an element is left over or
/// the fragments do not make a whole grid of slabs.
std::optional<Fragments> groupFragments(std::map<Place, std::size_t> const& at,
                                        std::array<Place, 4> const& offsets);

/// Hardware indices at chosen values, for evaluating where a lane's accumulators lie (the matrix
/// instructions' layout checks); anything else a place depends on (a loop counter, a size) is a
/// UserError, and then the layout is not a fragment layout.
class LaneEnvironment : public Environment {
public:
    std::map<Id, std::int64_t> indices;
    Value index(Id dimension) const override {
        auto const it = indices.find(dimension);
        if (it == indices.end())
            return Environment::index(dimension);
        return Value::integer(it->second);
    }
};

} // namespace kiln::lowering::detail
