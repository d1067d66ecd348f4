#include "kiln/graph/Distribution.h"

#include <optional>

namespace kiln {

bool isHardware(DimensionKind kind) {
    return kind == DimensionKind::Workgroup || kind == DimensionKind::Workitem;
}

Distribution distributionOf(KernelGraph const& graph, Id d) {
    auto const& coords = graph.coordinates;
    // The hardware dimension `h` passes through to (Workgroup or Workitem), or is one of the
    // axes of (a grid of warps flattened into one workitem index), if any.
    auto toHardware = [&](Id h) -> std::optional<DimensionKind> {
        for (Id e : coords.outgoing(h)) {
            auto const edge = coords.edge(e).kind;
            auto const kind = coords.node(coords.heads(e)[0]).kind;
            if ((edge == CoordinateEdgeKind::PassThrough || edge == CoordinateEdgeKind::Flatten) &&
                isHardware(kind))
                return kind;
        }
        return std::nullopt;
    };
    // The Tile of `index` onto the grid, if it has one: hardware-bound heads and locals.
    auto tiling = [&](auto const& self, Id index, Distribution& into) -> bool {
        for (Id e : coords.outgoing(index)) {
            if (coords.edge(e).kind != CoordinateEdgeKind::Tile)
                continue;
            Distribution candidate;
            for (Id h : coords.heads(e)) {
                if (auto const hardware = toHardware(h)) {
                    candidate.distributed = true;
                    candidate.overWorkitems |= *hardware == DimensionKind::Workitem;
                } else if (!self(self, h, candidate)) // a local index tiled further: its locals
                    candidate.locals.push_back(h);
            }
            if (candidate.distributed) {
                into.distributed = true;
                into.overWorkitems |= candidate.overWorkitems;
                into.locals.insert(into.locals.end(), candidate.locals.begin(),
                                   candidate.locals.end());
                return true;
            }
        }
        return false;
    };
    Distribution result;
    // The value's own index tiled onto the grid (a Linear value) ...
    if (tiling(tiling, d, result))
        return result;
    // ... or the axes it is the Flatten of, some tiled onto the grid, the rest local.
    for (Id e : coords.incoming(d)) {
        if (coords.edge(e).kind != CoordinateEdgeKind::Flatten)
            continue;
        Distribution candidate;
        std::vector<Id> untiled;
        for (Id axis : coords.tails(e))
            if (!tiling(tiling, axis, candidate))
                untiled.push_back(axis);
        if (candidate.distributed) {
            candidate.locals.insert(candidate.locals.end(), untiled.begin(), untiled.end());
            return candidate;
        }
    }
    return result;
}

} // namespace kiln
