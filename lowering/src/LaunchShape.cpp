#include "kiln/lowering/LaunchShape.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>

namespace kiln::lowering {

LaunchShape launchShape(KernelGraph const& graph) {
    LaunchShape shape;
    shape.grid = {literal(1), literal(1), literal(1)};
    for (Id d : graph.coordinates.nodes()) {
        auto const& dim = graph.coordinates.node(d);
        bool const group = dim.kind == DimensionKind::Workgroup;
        if (!group && dim.kind != DimensionKind::Workitem)
            continue;
        int const axis = std::max(dim.axis, 0);
        if (axis > 2)
            throw UserError(fmt::format("{} #{} is on axis {}; GPUs have axes 0 to 2",
                                        name(dim.kind), d, axis));
        auto& slot = group ? shape.workgroups[axis] : shape.workitems[axis];
        if (slot)
            throw UserError(
                fmt::format("{} #{} and #{} are both on axis {}", name(dim.kind), *slot, d, axis));
        slot = d;
        if (!dim.size)
            throw UserError(fmt::format("{} #{} has no size", name(dim.kind), d));
        ExprPtr const size = simplify(dim.size);
        if (group) {
            shape.grid[axis] = size;
            continue;
        }
        auto n = literalInt(size);
        if (!n || *n <= 0)
            throw UserError(fmt::format("Workitem #{} has size {}; code generation needs a "
                                        "positive constant",
                                        d, toString(size)));
        shape.block[axis] = *n;
    }
    return shape;
}

} // namespace kiln::lowering
