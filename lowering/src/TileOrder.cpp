// TileOrder.cpp: the grouped order of tiles as index expressions (TileOrder.h).
#include "kiln/lowering/TileOrder.h"

#include "kiln/graph/Error.h"

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

} // namespace kiln::lowering
