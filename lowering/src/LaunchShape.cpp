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

ExprPtr SharedLayout::place(Id shared, ExprPtr const& index) const {
    auto const it = padding.find(shared);
    if (it == padding.end())
        return index;
    return simplify(index + index / literal(it->second.rowLength) * literal(it->second.pad));
}

SharedLayout sharedLayout(KernelGraph const& graph, bool padRows) {
    SharedLayout layout;
    for (Id d : graph.coordinates.nodes()) {
        auto const& dim = graph.coordinates.node(d);
        if (dim.kind != DimensionKind::Shared)
            continue;
        std::int64_t n = constantSize(graph, d, "Shared");
        std::int64_t const bytes = sizeInBytes(dim.dtype.value_or(DataType::F32));
        if (padRows && bytes == 2) {
            // The row: the fastest axis of the Flatten that makes the tile.
            for (Id e : graph.coordinates.incoming(d)) {
                if (graph.coordinates.edge(e).kind != CoordinateEdgeKind::Flatten)
                    continue;
                auto const& size = graph.coordinates.node(graph.coordinates.tails(e).back()).size;
                auto const row = size ? literalInt(simplify(size)) : std::nullopt;
                if (row && *row > 0 && *row * bytes % 32 == 0 && n % *row == 0) {
                    SharedLayout::Padding const p{*row, 16 / bytes};
                    layout.padding[d] = p;
                    n += n / p.rowLength * p.pad;
                }
            }
        }
        layout.bytes = (layout.bytes + 15) / 16 * 16;
        layout.offsets[d] = layout.bytes;
        layout.bytes += static_cast<std::size_t>(n) * static_cast<std::size_t>(bytes);
    }
    return layout;
}

} // namespace kiln::lowering
