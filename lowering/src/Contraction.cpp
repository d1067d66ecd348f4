// A Multiply's contraction, shared by the PTX and AMDGCN code generators.
#include "Contraction.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/HeldElements.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering::detail {

Contraction contractionOf(KernelGraph const& graph, Id op, Operation const& o) {
    Contraction c;
    c.lhs = graph.mapping.get(op, role::lhs);
    c.rhs = graph.mapping.get(op, role::rhs);
    c.dest = graph.mapping.get(op, role::dest);
    auto const& lhsShape = graph.coordinates.node(c.lhs).shape;
    auto const lhsAxes = flattenAxes(graph, c.lhs), rhsAxes = flattenAxes(graph, c.rhs),
               destAxes = flattenAxes(graph, c.dest);
    if (lhsShape.size() != 2 || lhsAxes.size() != 2 || rhsAxes.size() != 2 || destAxes.size() != 2)
        throw UserError("a Multiply needs two-axis tiles");
    auto const inner = literalInt(simplify(lhsShape[o.transposeA ? 0 : 1]));
    if (!inner)
        throw UserError(fmt::format("the Multiply's K extent {} is not a constant; loop over K in "
                                    "tiles first (gemm-k-loop)",
                                    toString(lhsShape[o.transposeA ? 0 : 1])));
    c.inner = *inner;
    c.rowAxis = lhsAxes[o.transposeA ? 1 : 0];
    c.lhsK = lhsAxes[o.transposeA ? 0 : 1];
    c.colAxis = rhsAxes[o.transposeB ? 0 : 1];
    c.rhsK = rhsAxes[o.transposeB ? 1 : 0];
    c.destRow = destAxes[0];
    c.destCol = destAxes[1];
    return c;
}

Distinct distinctAlong(std::vector<IndexSolution> const& elements, Id axis) {
    Distinct d;
    for (auto const& e : elements) {
        ExprPtr const& v = e.at(axis);
        auto it = std::find_if(d.values.begin(), d.values.end(),
                               [&](ExprPtr const& x) { return equal(x, v); });
        d.which.push_back(static_cast<std::size_t>(it - d.values.begin()));
        if (it == d.values.end())
            d.values.push_back(v);
    }
    return d;
}

} // namespace kiln::lowering::detail
