#include "kiln/graph/Distribution.h"

namespace kiln {

bool isHardware(DimensionKind kind) {
    return kind == DimensionKind::Workgroup || kind == DimensionKind::Workitem;
}

Distribution distributionOf(KernelGraph const& graph, Id d) {
    auto const& coords = graph.coordinates;
    auto toHardware = [&](Id h) {
        for (Id e : coords.outgoing(h))
            if (coords.edge(e).kind == CoordinateEdgeKind::PassThrough &&
                isHardware(coords.node(coords.heads(e)[0]).kind))
                return true;
        return false;
    };
    // The Tile of `index` onto the grid, if it has one: hardware-bound heads and locals.
    auto tiling = [&](Id index, Distribution& into) {
        for (Id e : coords.outgoing(index)) {
            if (coords.edge(e).kind != CoordinateEdgeKind::Tile)
                continue;
            Distribution candidate;
            for (Id h : coords.heads(e)) {
                if (toHardware(h))
                    candidate.distributed = true;
                else
                    candidate.locals.push_back(h);
            }
            if (candidate.distributed) {
                into.distributed = true;
                into.locals.insert(into.locals.end(), candidate.locals.begin(),
                                   candidate.locals.end());
                return true;
            }
        }
        return false;
    };
    Distribution result;
    // The value's own index tiled onto the grid (a Linear value) ...
    if (tiling(d, result))
        return result;
    // ... or the axes it is the Flatten of, some tiled onto the grid, the rest local.
    for (Id e : coords.incoming(d)) {
        if (coords.edge(e).kind != CoordinateEdgeKind::Flatten)
            continue;
        Distribution candidate;
        std::vector<Id> untiled;
        for (Id axis : coords.tails(e))
            if (!tiling(axis, candidate))
                untiled.push_back(axis);
        if (candidate.distributed) {
            candidate.locals.insert(candidate.locals.end(), untiled.begin(), untiled.end());
            return candidate;
        }
    }
    return result;
}

} // namespace kiln
