// The kernel's workgroups and their tiles, for both targets (KernelWalker.h): the hardware
// indices bound (bindHardwareIndices()), GROUP_M's and clusters' order of tiles
// (orderTilesInGroups()), and PERSISTENT=1's loop over the tiles a workgroup takes
// (kernelBody(), forEachTile(), bindTile()).
#include "KernelWalker.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Simplify.h"
#include "kiln/lowering/Clusters.h"
#include "kiln/lowering/Occupancy.h"
#include "kiln/lowering/TileOrder.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering::detail {

template <class Register>
void KernelWalker<Register>::bindHardwareIndices() {
    for (int a = 0; a < 3; ++a) {
        for (bool workgroup : {true, false}) {
            auto const& d = workgroup ? shape_.workgroups[static_cast<std::size_t>(a)]
                                      : shape_.workitems[static_cast<std::size_t>(a)];
            if (!d)
                continue;
            indices_.insert_or_assign(*d, hardwareIndex(workgroup, a));
            if (auto const& size = graph_.coordinates.node(*d).size;
                unitIndicesAreZero() && size && literalInt(simplify(size)) == std::int64_t{1})
                units_.insert(*d);
        }
    }
    // Clusters (Clusters.h): each takes a block of neighbouring tiles along the axes it spans.
    ClusterShape const cluster = clusterShape(options_.schedule);
    for (auto const& [axis, extent] : {std::pair{0, cluster.m}, std::pair{1, cluster.n}})
        if (extent > 1 && (!shape_.workgroups[axis] || units_.contains(*shape_.workgroups[axis])))
            throw UserError(fmt::format("CLUSTER_{}={}: the grid has one {} of tiles, which no "
                                        "cluster of {} shares; use CLUSTER_{}=1",
                                        axis == 0 ? 'M' : 'N', extent, axis == 0 ? "row" : "column",
                                        extent, axis == 0 ? 'M' : 'N'));
    // A persistent kernel binds its tiles' indices in its loop (bindTile()).
    if (auto const g = options_.schedule.find("GROUP_M");
        g != options_.schedule.end() && g->second > 0 && !persistentTiles(options_.schedule))
        orderTilesInGroups(g->second);
}

// The hardware starts workgroups in the order of their linear id x + y * X (x fastest); the one
// with linear id p takes the tile groupedTile() gives (TileOrder.h). The axis-1 index holds p
// first, so that both tile numbers are written from it alone.
template <class Register>
void KernelWalker<Register>::orderTilesInGroups(std::int64_t group) {
    auto const& rows = shape_.workgroups[0];
    auto const& cols = shape_.workgroups[1];
    if (!rows || !cols || units_.contains(*rows) || units_.contains(*cols))
        return; // one row or column of tiles: there is no other order
    ExprPtr const x = graph_.coordinates.node(*rows).size, y = graph_.coordinates.node(*cols).size;
    if (!x || !y)
        return;
    // Clusters: the workgroup's number as clusteredTileIndices() counts them (its cluster's
    // linear number x the cluster's size + its rank), then the tile of that number, in the
    // order of the blocks of tiles clusters take (TileOrder.h).
    if (ClusterShape const cluster = clusterShape(options_.schedule); cluster.clustered()) {
        auto i32 = [](ExprPtr const& e) { return convert(DataType::I32, e); };
        ExprPtr const m = literal(cluster.m), n = literal(cluster.n);
        ExprPtr const linear =
            (i32(index(*rows)) / m + i32(index(*cols)) / n * i32(ceilDivide(x, m))) *
                literal(cluster.size()) +
            i32(index(*rows)) % m + i32(index(*cols)) % n * m;
        assignIndex(*cols, convert(DataType::I64, linear));
        settle();
        auto const tile = clusteredTileIndices(index(*cols), {x, y}, group, cluster.m, cluster.n);
        assignIndex(*rows, tile[0]);
        settle();
        assignIndex(*cols, tile[1]);
        settle();
        return;
    }
    // Settled after each index changes, so that nothing computed from its old value is reused;
    // the row's work is reused for the column.
    assignIndex(*cols, index(*rows) + index(*cols) * x);
    settle();
    GridTile const tile = groupedTile(index(*cols), x, y, group);
    assignIndex(*rows, tile.row);
    assignIndex(*cols, tile.column);
    settle();
}

template <class Register>
void KernelWalker<Register>::kernelBody() {
    auto const body = graph_.sequence(graph_.kernel(), ControlEdgeKind::Body);
    if (!persistentTiles(options_.schedule))
        return list(body);
    beforeTiles(body);
    forEachTile([&] {
        list(body);
        betweenTiles();
    });
}

template <class Register>
void KernelWalker<Register>::forEachTile(std::function<void()> const& body) {
    // Clusters: workgroups over the grid of blocks of tiles (clusteredExtent), so that both
    // workgroups of a cluster loop as many times, past the edge too (TileOrder.h).
    ClusterShape const cluster = clusterShape(options_.schedule);
    ExprPtr tiles = literal(1);
    for (std::size_t a = 0; a < shape_.workgroups.size(); ++a)
        if (auto const& d = shape_.workgroups[a]; d && !units_.contains(*d))
            tiles = tiles * convert(DataType::I64, clusteredExtent(graph_.coordinates.node(*d).size,
                                                                   a == 0   ? cluster.m
                                                                   : a == 1 ? cluster.n
                                                                            : 1));
    Register const tile = linearWorkgroup(), step = workgroupsLaunched();
    settle();
    LoopLabels const labels = beginTiles(tile, simplify(tiles));
    bindTile(tile);
    body();
    endTiles(labels, tile, step);
    settle();
}

// The tile's number goes into the last axis's index (the carrier), from which every axis's index
// is computed (TileOrder.h's tileIndices), the carrier's own last. Settled after each index
// changes, so that nothing computed from its old value is reused.
template <class Register>
void KernelWalker<Register>::bindTile(Register const& tile) {
    std::vector<Id> axes;
    std::vector<ExprPtr> sizes;
    for (auto const& d : shape_.workgroups)
        if (d && !units_.contains(*d)) {
            axes.push_back(*d);
            sizes.push_back(graph_.coordinates.node(*d).size);
        }
    if (axes.empty())
        return;
    Id const carrier = axes.back();
    copyIndex(carrier, tile);
    settle();
    auto const g = options_.schedule.find("GROUP_M");
    // The grouped order is of axes 0 and 1 (rows and columns of tiles).
    bool const grouped = g != options_.schedule.end() && g->second > 0 && axes.size() >= 2 &&
                         shape_.workgroups[0] == axes[0] && shape_.workgroups[1] == axes[1];
    ClusterShape const cluster = clusterShape(options_.schedule);
    auto const indices = cluster.clustered()
                             ? clusteredTileIndices(index(carrier), sizes, grouped ? g->second : 0,
                                                    cluster.m, cluster.n)
                             : tileIndices(index(carrier), sizes, grouped ? g->second : 0);
    for (std::size_t a = 0; a < axes.size(); ++a) {
        if (equal(indices[a], index(axes[a])))
            continue; // the carrier already holds it
        assignIndex(axes[a], indices[a]);
        settle();
    }
}

template <class Register>
void KernelWalker<Register>::beforeTiles(std::vector<Id> const&) {}

template <class Register>
void KernelWalker<Register>::betweenTiles() {
    auto const nodes = graph_.control.nodes();
    if (stagingBytes_ > 0 || std::any_of(nodes.begin(), nodes.end(), [&](Id op) {
            return graph_.control.node(op).kind == OperationKind::StoreShared;
        }))
        barrier();
}

// The targets' register types, as KernelWalker.cpp instantiates the rest.
#define KILN_TILES_INSTANTIATE(Register)                                                           \
    template void KernelWalker<Register>::bindHardwareIndices();                                   \
    template void KernelWalker<Register>::orderTilesInGroups(std::int64_t);                        \
    template void KernelWalker<Register>::kernelBody();                                            \
    template void KernelWalker<Register>::forEachTile(std::function<void()> const&);               \
    template void KernelWalker<Register>::bindTile(Register const&);                               \
    template void KernelWalker<Register>::beforeTiles(std::vector<Id> const&);                     \
    template void KernelWalker<Register>::betweenTiles();

KILN_TILES_INSTANTIATE(std::string)
KILN_TILES_INSTANTIATE(amdgcn::Value)
#undef KILN_TILES_INSTANTIATE

} // namespace kiln::lowering::detail
