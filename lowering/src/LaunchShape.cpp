// Launch shapes and shared-memory layouts of lowered KernelGraphs.
#include "kiln/lowering/LaunchShape.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/lowering/HeldElements.h"

#include <fmt/format.h>
#include <limits>

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
    // No GPU runs workgroups of 2^31 workitems; refused here, their products are exact below.
    std::int64_t workitems = 1;
    for (std::int64_t const n : shape.block)
        if (__builtin_mul_overflow(workitems, n, &workitems) || workitems > INT32_MAX)
            throw UserError(fmt::format("a workgroup of {} x {} x {} workitems; code generation "
                                        "takes fewer than 2^31",
                                        shape.block[0], shape.block[1], shape.block[2]));
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
    if (auto const s = swizzles.find(shared); s != swizzles.end()) {
        ExprPtr const r = index / literal(s->second.rowLength),
                      c = index % literal(s->second.rowLength);
        ExprPtr const chunk =
            binary(BinaryOp::BitwiseXor, c % literal(64) / literal(8), r % literal(8));
        return simplify(c / literal(64) * literal(s->second.rows * 64) + r * literal(64) +
                        chunk * literal(8) + c % literal(8));
    }
    auto const it = padding.find(shared);
    if (it == padding.end())
        return index;
    return simplify(index + index / literal(it->second.rowLength) * literal(it->second.pad));
}

ExprPtr SharedLayout::atomPlace(Id shared, ExprPtr const& index) const {
    auto const s = swizzles.find(shared);
    if (s == swizzles.end())
        return place(shared, index);
    ExprPtr const r = index / literal(s->second.rowLength),
                  c = index % literal(s->second.rowLength);
    return simplify(c / literal(64) * literal(s->second.rows * 64) + r * literal(64) +
                    c % literal(64));
}

std::optional<std::int64_t> rowLength(KernelGraph const& graph, Id shared) {
    for (Id e : graph.coordinates.incoming(shared)) {
        if (graph.coordinates.edge(e).kind != CoordinateEdgeKind::Flatten)
            continue;
        auto const& size = graph.coordinates.node(graph.coordinates.tails(e).back()).size;
        if (auto const row = size ? literalInt(simplify(size)) : std::nullopt; row && *row > 0)
            return row;
    }
    return std::nullopt;
}

SharedLayout sharedLayout(KernelGraph const& graph, bool padRows, std::set<Id> const& swizzled) {
    SharedLayout layout;
    for (Id d : graph.coordinates.nodes()) {
        auto const& dim = graph.coordinates.node(d);
        if (dim.kind != DimensionKind::Shared)
            continue;
        std::int64_t n = constantSize(graph, d, "Shared");
        std::int64_t const bytes = sizeInBytes(dim.dtype.value_or(DataType::F32));
        auto const row = rowLength(graph, d);
        std::size_t alignment = 16;
        if (swizzled.contains(d)) {
            KILN_ASSERT(bytes == 2 && row && *row % 64 == 0 && n % *row == 0,
                        "Shared #{} cannot take the 128-byte swizzle", d);
            layout.swizzles[d] = {*row, n / *row};
            alignment = 1024; // the swizzle's pattern repeats every 8 rows of 128 bytes
        } else if (padRows && bytes == 2 && row && *row % (32 / bytes) == 0 && n % *row == 0) {
            SharedLayout::Padding const p{*row, 16 / bytes};
            layout.padding[d] = p;
            if (__builtin_add_overflow(n, n / p.rowLength * p.pad, &n))
                fail("the staged tiles need more than 2^63 bytes of shared memory (Shared #{} "
                     "holds {} elements)",
                     d, constantSize(graph, d, "Shared"));
        }
        layout.bytes = (layout.bytes + alignment - 1) / alignment * alignment;
        layout.offsets[d] = layout.bytes;
        // Sizes come from schedule parameters: a tile of 2^60 elements must not wrap around to a
        // layout that looks small (code generation refuses what passes the target's limit).
        std::size_t tile = 0;
        if (__builtin_mul_overflow(static_cast<std::size_t>(n), static_cast<std::size_t>(bytes),
                                   &tile) ||
            __builtin_add_overflow(layout.bytes, tile, &layout.bytes) ||
            layout.bytes > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
            fail("the staged tiles need more than 2^63 bytes of shared memory (Shared #{} holds "
                 "{} elements)",
                 d, n);
    }
    return layout;
}

} // namespace kiln::lowering
