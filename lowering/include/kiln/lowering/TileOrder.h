// TileOrder.h: the order in which workgroups take the tiles of a two-dimensional grid.
//
// The hardware starts workgroups in the order of their linear id (x fastest), so with one tile
// per workgroup the tiles running at once are a few columns of rows of tiles: each reads its own
// rows of A, and together every column of B. GROUP_M (a schedule parameter code generation
// reads, Codegen.h) walks GROUP_M rows of tiles together instead, column by column, as Triton's
// and CUTLASS's "swizzle" do: the running tiles share GROUP_M row blocks of A and a band of
// columns of B, which stay in L2. The order is a permutation of the tiles, so it changes what
// runs where and when, never what is computed; it is written as index expressions once, for
// every target (KernelWalker::orderTilesInGroups).
#pragma once

#include "kiln/graph/Expression.h"

#include <cstdint>
#include <vector>

namespace kiln::lowering {

/// The tile a workgroup takes: its row (along axis 0) and column (axis 1) of the tile grid.
struct GridTile {
    ExprPtr row, column;
};

/// The tile of linear id `linear` (0 to rows * columns - 1) in the grouped order of a grid of
/// `rows` x `columns` tiles: group g = linear / (group * columns) holds rows
/// [g * group, g * group + h), h = min(rows - g * group, group) (fewer in the last group where
/// `group` does not divide `rows`), taken row fastest, then column by column. `group` >= 1;
/// group 1 is row-major order (columns fastest), group >= rows the hardware's (rows fastest).
GridTile groupedTile(ExprPtr const& linear, ExprPtr const& rows, ExprPtr const& columns,
                     std::int64_t group);

/// The indices along each axis of tile number `tile` (0 to the product of `tiles` - 1) of a grid
/// of `tiles` tiles along each axis, x first: x fastest (x = tile % X, y = tile / X % Y, the
/// last axis the quotient), or with `group` > 0 and two axes or more, x and y in the grouped
/// order (groupedTile) within each z. PERSISTENT=1's loop over tiles (KernelWalker::bindTile)
/// binds a workgroup's indices to them, tile after tile.
std::vector<ExprPtr> tileIndices(ExprPtr const& tile, std::vector<ExprPtr> const& tiles,
                                 std::int64_t group);

/// The extent of a grid of `tiles` along an axis in clusters of `cluster` workgroups along it:
/// `tiles` rounded up to a multiple of `cluster`.
ExprPtr clusteredExtent(ExprPtr const& tiles, std::int64_t cluster);

/// Clusters of `clusterM` x `clusterN` workgroups over a grid of `tiles` tiles along each axis
/// (x first; the cluster along axes 0 and 1): the indices of the tile of workgroup number `tile`
/// (0 to the product of the clusteredExtent()s - 1), where workgroups c x S .. c x S + S - 1
/// (S = clusterM x clusterN) are the ranks of the cluster that takes block number c, rank r at
/// (r % clusterM, r / clusterM) in its block, and the blocks are numbered as tileIndices()
/// numbers tiles over the grid of blocks, in GROUP_M's grouped order where `group` > 0 (group /
/// clusterM rows of blocks, at least one). PERSISTENT=1's loop over tiles binds them so, and
/// without it GROUP_M's order (the workgroup's number from its cluster's and its rank).
std::vector<ExprPtr> clusteredTileIndices(ExprPtr const& tile, std::vector<ExprPtr> const& tiles,
                                          std::int64_t group, std::int64_t clusterM,
                                          std::int64_t clusterN);

} // namespace kiln::lowering
