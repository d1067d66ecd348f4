// Launch shapes and shared-memory layouts of lowered KernelGraphs.
#include "kiln/lowering/LaunchShape.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/lowering/HeldElements.h"

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

ExprPtr linearWorkitem(LaunchShape const& shape) {
    ExprPtr linear = literal(0);
    std::int64_t stride = 1;
    for (std::size_t a = 0; a < 3; ++a) {
        if (shape.workitems[a])
            linear = linear + index(*shape.workitems[a]) * literal(stride);
        stride *= shape.block[a];
    }
    return simplify(linear);
}

SharedLayout sharedLayout(KernelGraph const& graph) {
    SharedLayout layout;
    for (Id d : graph.coordinates.nodes()) {
        auto const& dim = graph.coordinates.node(d);
        if (dim.kind != DimensionKind::Shared)
            continue;
        std::int64_t const n = constantSize(graph, d, "Shared");
        layout.bytes = (layout.bytes + 15) / 16 * 16;
        layout.offsets[d] = layout.bytes;
        layout.bytes += static_cast<std::size_t>(n) *
                        static_cast<std::size_t>(sizeInBytes(dim.dtype.value_or(DataType::F32)));
    }
    return layout;
}

} // namespace kiln::lowering
