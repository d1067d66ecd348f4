// IndexExpressionsTest.cpp: coordinate transforms solved as expressions, and what IndexFacts
// proves about them.
#include "kiln/lowering/IndexExpressions.h"

#include "LoweringTestSupport.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

// A 2-D tensor of M x N (row-major), its rows tiled by 64 onto workgroups and workitems.
struct TiledRows {
    KernelGraph graph;
    Id user, rows, cols, number, item, wg, wi;
    TiledRows() {
        graph.arguments = {{"M", KernelArgument::Kind::Size, DataType::I64},
                           {"N", KernelArgument::Kind::Size, DataType::I64}};
        auto M = argument("M", DataType::I64), N = argument("N", DataType::I64);
        user = graph.addDimension({DimensionKind::User, M * N, {}, -1, "A", DataType::F32});
        rows = graph.addDimension({DimensionKind::SubDimension, M, N, 0});
        cols = graph.addDimension({DimensionKind::SubDimension, N, literal(1), 1});
        number = graph.addDimension({DimensionKind::MacroTileNumber, ceilDivide(M, literal(64))});
        item = graph.addDimension({DimensionKind::MacroTileIndex, literal(64)});
        wg = graph.addDimension({DimensionKind::Workgroup, ceilDivide(M, literal(64)), {}, 0});
        wi = graph.addDimension({DimensionKind::Workitem, literal(64), {}, 0});
        graph.addCoordinateEdge(CoordinateEdgeKind::Split, {user}, {rows, cols});
        graph.addCoordinateEdge(CoordinateEdgeKind::Tile, {rows}, {number, item});
        graph.addCoordinateEdge(CoordinateEdgeKind::PassThrough, {number}, {wg});
        graph.addCoordinateEdge(CoordinateEdgeKind::PassThrough, {item}, {wi});
    }
};

TEST(IndexExpressions, AnOffsetFromTheGridAndAColumn) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    auto const s = lowering::solveIndices(
        t.graph, {{t.wg, index(t.wg)}, {t.wi, index(t.wi)}, {t.cols, literal(3)}}, {t.user}, facts);
    EXPECT_EQ(toString(s.at(t.user)),
              fmt::format("(index#{} * 64 + index#{}) * N + 3", t.wg, t.wi));
    // The row may pass M (a ragged last tile); the workgroup and workitem numbers are within
    // their tiles by construction, and known indices (the column) are the caller's to check.
    ASSERT_EQ(s.conditions.size(), 1u);
    EXPECT_EQ(toString(s.conditions[0]), fmt::format("index#{} * 64 + index#{} < M", t.wg, t.wi));
}

// solveIndices takes its chain of transforms from the facts' TransformChains: found once for
// each pair of dimension sets, the same steps as transformChain.
TEST(IndexExpressions, EachChainOfTransformsIsFoundOnce) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    std::vector<Id> const known = {t.cols, t.wg, t.wi}, targets = {t.user};
    auto const& chain = facts.chains().between(known, targets);
    auto const direct = transformChain(t.graph, known, targets);
    ASSERT_EQ(chain.size(), direct.size());
    ASSERT_EQ(chain.size(), 4u); // two PassThroughs back to the tile, the Tile, the Split
    for (std::size_t k = 0; k < chain.size(); ++k) {
        EXPECT_EQ(chain[k].edge, direct[k].edge);
        EXPECT_EQ(chain[k].forward, direct[k].forward);
        EXPECT_EQ(chain[k].inputs, direct[k].inputs);
        EXPECT_EQ(chain[k].outputs, direct[k].outputs);
    }
    EXPECT_EQ(&facts.chains().between(known, targets), &chain); // kept, not found again
    EXPECT_NE(&facts.chains().between(known, {t.rows}), &chain);
    auto const s = lowering::solveIndices(
        t.graph, {{t.wg, index(t.wg)}, {t.wi, index(t.wi)}, {t.cols, literal(3)}}, {t.user}, facts);
    EXPECT_EQ(toString(s.at(t.user)),
              fmt::format("(index#{} * 64 + index#{}) * N + 3", t.wg, t.wi));
}

TEST(IndexExpressions, AnUnreachableTargetIsNamed) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    EXPECT_THROW(lowering::solveIndices(t.graph, {{t.wi, index(t.wi)}}, {t.user}, facts),
                 UserError);
}

TEST(IndexFacts, RangesDivisorsAndDifferences) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    auto const lane = index(t.wi);
    EXPECT_EQ(facts.range(lane).hi, 63);
    EXPECT_EQ(facts.range(lane * literal(4) + literal(3)).hi, 255);
    EXPECT_TRUE(facts.less(lane, literal(64)));
    EXPECT_FALSE(facts.less(lane, literal(63)));
    EXPECT_TRUE(facts.less(index(t.wg), ceilDivide(argument("M", DataType::I64), literal(64))));
    EXPECT_EQ(facts.powerOfTwoDivisor((index(t.wg) * literal(256) + lane) * literal(4)), 4);
    EXPECT_EQ(facts.powerOfTwoDivisor(lane * literal(8) + literal(4)), 4);
    EXPECT_EQ(lowering::IndexFacts::difference(lane * literal(4) + literal(3), lane * literal(4)),
              3);
    EXPECT_EQ(lowering::IndexFacts::difference(lane + literal(1), index(t.wg)), std::nullopt);
}

// Made for one problem (a sweep's candidate), a kernel's sizes are known: each is its value in
// every range, so that a workgroup's last row, (M / 64 - 1) * 64 + 63, is inside M = 8192 and a
// row of N = 8192 f16 elements is 16-byte aligned, neither of which holds for every M and N.
TEST(IndexFacts, KnownSizesAreTheirValues) {
    TiledRows t;
    lowering::IndexFacts facts(t.graph);
    ExprPtr const M = argument("M", DataType::I64), N = argument("N", DataType::I64);
    ExprPtr const lastRow = index(t.wg) * literal(64) + index(t.wi);
    EXPECT_FALSE(facts.less(lastRow, M));
    EXPECT_EQ(facts.powerOfTwoDivisor(index(t.wg) * N), 1);
    facts.assumeSizes({{"M", 8192}, {"N", 8192}});
    EXPECT_EQ(facts.range(M).lo, 8192);
    EXPECT_EQ(facts.range(index(t.wg)).hi, 127);
    EXPECT_TRUE(facts.less(lastRow, M));
    EXPECT_FALSE(facts.less(lastRow, literal(8191)));
    EXPECT_EQ(facts.powerOfTwoDivisor(index(t.wg) * N), 8192);
    EXPECT_TRUE(facts.alignedWhen(index(t.wg) * N, 8).empty());
    // A quotient's least value is the least dividend over the largest divisor: ceildiv(40, 64)
    // is 1, so index 0 of its dimension exists.
    facts.assumeSizes({{"M", 40}, {"N", 3}});
    EXPECT_EQ(facts.range(ceilDivide(M, literal(64))).lo, 1);
    EXPECT_TRUE(facts.less(literal(0), ceilDivide(M, literal(64))));
    EXPECT_EQ(facts.range(M / N).lo, 13);
}

// An element-wise kernel reads a flattened M x N tensor at x = 8 * workitem + k: its row x / N is
// inside when x is, so the tail checks need no 64-bit division (the fused bias + GELU chain had
// eight per workitem).
TEST(IndexFacts, TheRowOfAFlattenedIndexIsInsideWhenTheIndexIs) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    auto const M = argument("M", DataType::I64), N = argument("N", DataType::I64);
    auto const x = (index(t.wg) * literal(64) + index(t.wi)) * literal(8);
    auto const less = [](ExprPtr a, ExprPtr b) { return binary(BinaryOp::Less, a, b); };
    auto const last = less(x + literal(7), M * N);
    EXPECT_TRUE(facts.impliedBy(less(x / N, M), {last}));
    EXPECT_TRUE(facts.impliedBy(less((x + literal(3)) / N, M), {last}));
    EXPECT_TRUE(facts.impliedBy(less(x / N, M), {less(x, N * M)})); // either order of factors
    EXPECT_TRUE(facts.impliedBy(less(x / M, N), {last}));           // columns of an N x M view
    // Past the last element checked, or a bound that is not the rows times the divisor: kept.
    EXPECT_FALSE(facts.impliedBy(less((x + literal(8)) / N, M), {last}));
    EXPECT_FALSE(facts.impliedBy(less(x / N, M), {less(x, M * M)}));
    EXPECT_FALSE(facts.impliedBy(less(x / N, N), {last}));
    EXPECT_FALSE(facts.impliedBy(less(x / N, M), {}));
}

TEST(IndexFacts, ATileIndexSplitAndPutBackTogetherCancels) {
    TiledRows t;
    auto const w = index(t.wi) * literal(8);
    // (w / 32) * 32 + (w % 32 + 1) is w + 1, whatever w is.
    EXPECT_EQ(lowering::IndexFacts::difference(
                  w / literal(32) * literal(32) + (w % literal(32) + literal(1)), w),
              1);
    lowering::IndexFacts const facts(t.graph);
    // A remainder keeps what both sides are multiples of.
    EXPECT_EQ(facts.powerOfTwoDivisor(w % literal(32)), 8);
}

TEST(IndexFacts, RowsAFixedNumberApartDifferByAMultipleOfTheRowLength) {
    TiledRows t;
    auto const N = argument("N", DataType::I64);
    auto const row = index(t.wg) * literal(64) + index(t.wi);
    // (row + 16) * N + c and row * N + c: 16 rows of N apart, whatever the row.
    auto const d = lowering::IndexFacts::launchTimeDifference((row + literal(16)) * N + literal(8),
                                                              row * N + literal(8));
    ASSERT_TRUE(d);
    EXPECT_EQ(toString(d), "N * 16");
    // The other order of the product is the same term.
    EXPECT_EQ(toString(lowering::IndexFacts::launchTimeDifference(N * (row + literal(1)), row * N)),
              "N");
    // A distance that depends on the workitem is no launch-time distance.
    EXPECT_FALSE(lowering::IndexFacts::launchTimeDifference(row * N + index(t.wi), row * N));
}

// A tensor broadcast by a stride of 0 (layer norm's gamma, a GEMM's bias) leaves constants that
// keep their type in its offsets: `row * 0` folds to i64(0), and the column's `+ 3` with it to
// i64(3). They are constants like any literal: consecutive elements are one apart and the first
// of eight is aligned to eight, so the eight are one vector load.
TEST(IndexFacts, AConstantThatKeepsItsTypeIsAConstant) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    auto const column = index(t.wi) * literal(8);
    auto const at = [&](std::int64_t k) {
        return simplify(index(t.wg) * literal(0) + (column + literal(k)));
    };
    ASSERT_EQ(toString(at(3)), fmt::format("index#{} * 8 + i64(3)", t.wi));
    EXPECT_EQ(lowering::IndexFacts::difference(at(1), at(0)), 1);
    EXPECT_EQ(lowering::IndexFacts::difference(at(7), at(3)), 4);
    EXPECT_EQ(facts.powerOfTwoDivisor(at(0)), 8);
    EXPECT_EQ(facts.powerOfTwoDivisor(at(4)), 4);
    EXPECT_TRUE(facts.alignedWhen(at(0), 8).empty());
    EXPECT_EQ(facts.range(at(7)).lo, 7);
    EXPECT_EQ(facts.range(at(7)).hi, 63 * 8 + 7);
    EXPECT_EQ(toString(facts.reduce(at(3) % convert(DataType::I64, literal(8)))), "i64(3)");
    // A literal converted to a narrower type is the value that type holds: i32(2^32 + 4) is 4.
    auto const wrapped = convert(DataType::I32, literal((std::int64_t{1} << 32) + 4));
    EXPECT_EQ(facts.powerOfTwoDivisor(wrapped), 4);
    EXPECT_EQ(facts.range(wrapped).hi, 4);
}

TEST(IndexFacts, AlignmentIsAskedOfTheSizeAProductDependsOn) {
    TiledRows t;
    lowering::IndexFacts const facts(t.graph);
    auto const K = argument("N", DataType::I64), lane = index(t.wi);
    // row * K + 8 * lane is a multiple of 8 when K is: one check for every row.
    auto const c = facts.alignedWhen((index(t.wg) * literal(64) + lane) * K + lane * literal(8), 8);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(toString(c[0]), "N % 8 == 0");
    EXPECT_TRUE(facts.alignedWhen(lane * literal(16), 8).empty());
    // An odd constant cannot be helped by the other terms' sizes: the whole offset is checked.
    auto const odd = facts.alignedWhen(lane * K + literal(3), 4);
    ASSERT_EQ(odd.size(), 1u);
    EXPECT_EQ(toString(odd[0]), "(index#" + std::to_string(t.wi) + " * N + 3) % 4 == 0");
}

} // namespace
} // namespace kiln::test
