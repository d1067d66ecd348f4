// A Multiply's contraction, shared by the PTX and AMDGCN code generators.
#include "Contraction.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/HeldElements.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

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

std::optional<Fragments> groupFragments(std::map<Place, std::size_t> const& at,
                                        std::array<Place, 4> const& offsets) {
    Fragments out;
    std::set<std::size_t> taken;
    std::map<std::int64_t, std::size_t> rows, cols; // a slab's first row/column -> an element
    std::vector<std::pair<Place, std::array<std::size_t, 4>>> found;
    for (auto const& [p, e] : at) {
        if (taken.contains(e))
            continue;
        std::array<std::size_t, 4> registers{};
        for (std::size_t i = 0; i < offsets.size(); ++i) {
            auto const it = at.find({p.first + offsets[i].first, p.second + offsets[i].second});
            if (it == at.end() || taken.contains(it->second))
                return std::nullopt;
            registers[i] = it->second;
            taken.insert(it->second);
        }
        rows.emplace(p.first, e);
        cols.emplace(p.second, e);
        found.emplace_back(p, registers);
    }
    if (found.size() != rows.size() * cols.size())
        return std::nullopt;
    for (auto const& [p, registers] : found)
        out.fragments.push_back(
            {registers, static_cast<std::size_t>(std::distance(rows.begin(), rows.find(p.first))),
             static_cast<std::size_t>(std::distance(cols.begin(), cols.find(p.second)))});
    for (auto const& [first, e] : rows)
        out.rows.push_back(e);
    for (auto const& [first, e] : cols)
        out.cols.push_back(e);
    return out;
}

} // namespace kiln::lowering::detail
