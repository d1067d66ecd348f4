// TileOrder.cpp: the grouped order of tiles as index expressions (TileOrder.h).
#include "kiln/lowering/TileOrder.h"

#include "kiln/graph/Error.h"

#include <algorithm>

namespace kiln::lowering {

GridTile groupedTile(ExprPtr const& linear, ExprPtr const& rows, ExprPtr const& columns,
                     std::int64_t group) {
    KILN_ASSERT(group >= 1, "a group of tiles holds at least one row of them");
    // In i32, whose quotients cost a fraction of i64's on both targets (AMDGCN's i64 quotient
    // by a run-time value goes through f64): a grid has fewer than 2^31 workgroups a side, and
    // a group fewer than kMaxGroupM rows.
    auto i32 = [](ExprPtr const& e) { return convert(DataType::I32, e); };
    // Two quotients, the remainders from them, so that a target that keeps what it computed
    // (AMDGCN's memo) writes the column from the row's work.
    ExprPtr const p = i32(linear), span = literal(group) * i32(columns); // a group's tiles
    ExprPtr const which = p / span;
    ExprPtr const first = which * literal(group);
    ExprPtr const height = binary(BinaryOp::Min, i32(rows) - first, literal(group));
    ExprPtr const inGroup = p - which * span;
    ExprPtr const column = inGroup / height;
    return {convert(DataType::I64, first + (inGroup - column * height)),
            convert(DataType::I64, column)};
}

std::vector<ExprPtr> tileIndices(ExprPtr const& tile, std::vector<ExprPtr> const& tiles,
                                 std::int64_t group) {
    // Quotients in i32, as groupedTile's: a grid has fewer than 2^31 tiles.
    auto i32 = [](ExprPtr const& e) { return convert(DataType::I32, e); };
    std::vector<ExprPtr> out;
    ExprPtr below; // the tiles of the axes before this one (none: 1)
    if (group > 0 && tiles.size() >= 2) {
        ExprPtr const span = i32(tiles[0]) * i32(tiles[1]);
        GridTile const t =
            groupedTile(tiles.size() > 2 ? i32(tile) % span : tile, tiles[0], tiles[1], group);
        out = {t.row, t.column};
        below = span;
    }
    for (std::size_t a = out.size(); a < tiles.size(); ++a) {
        if (!below && a + 1 == tiles.size()) {
            out.push_back(tile); // one axis
            break;
        }
        ExprPtr q = below ? i32(tile) / below : i32(tile);
        if (a + 1 < tiles.size())
            q = q % i32(tiles[a]);
        out.push_back(convert(DataType::I64, q));
        below = below ? below * i32(tiles[a]) : i32(tiles[a]);
    }
    return out;
}

ExprPtr clusteredExtent(ExprPtr const& tiles, std::int64_t cluster) {
    if (cluster == 1)
        return tiles;
    return ceilDivide(tiles, literal(cluster)) * literal(cluster);
}

namespace {

// GROUP_M's rows of tiles as rows of blocks of `clusterM` rows each.
std::int64_t groupOfBlocks(std::int64_t group, std::int64_t clusterM) {
    return group > 0 ? std::max<std::int64_t>(1, group / clusterM) : 0;
}

} // namespace

std::vector<ExprPtr> clusteredTileIndices(ExprPtr const& tile, std::vector<ExprPtr> const& tiles,
                                          std::int64_t group, std::int64_t clusterM,
                                          std::int64_t clusterN) {
    KILN_ASSERT(clusterM >= 1 && clusterN >= 1 && (clusterN == 1 || tiles.size() >= 2),
                "a cluster of {} x {} over {} axes of tiles", clusterM, clusterN, tiles.size());
    std::int64_t const size = clusterM * clusterN;
    if (size == 1)
        return tileIndices(tile, tiles, group);
    auto i32 = [](ExprPtr const& e) { return convert(DataType::I32, e); };
    auto i64 = [](ExprPtr const& e) { return convert(DataType::I64, e); };
    std::vector<ExprPtr> blocks = tiles;
    for (std::size_t a = 0; a < 2 && a < tiles.size(); ++a)
        if (std::int64_t const extent = a == 0 ? clusterM : clusterN; extent > 1)
            blocks[a] = ceilDivide(tiles[a], literal(extent));
    // The rank's place in the block: (r % clusterM, r / clusterM), each where the cluster spans
    // that axis.
    ExprPtr const rank = i32(tile) % literal(size);
    auto out = tileIndices(i64(i32(tile) / literal(size)), blocks, groupOfBlocks(group, clusterM));
    if (clusterM > 1)
        out[0] = out[0] * literal(clusterM) + i64(clusterN > 1 ? rank % literal(clusterM) : rank);
    if (clusterN > 1)
        out[1] = out[1] * literal(clusterN) + i64(clusterM > 1 ? rank / literal(clusterM) : rank);
    return out;
}

} // namespace kiln::lowering
