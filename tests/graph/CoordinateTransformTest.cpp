// Coordinate transforms, by enumeration: every kind maps every index of small spaces forward
// and back exactly (including tile sizes that do not divide the extent and column-major
// strides), and the Expression instantiation, evaluated, agrees with the integer one.
#include "kiln/graph/CoordinateTransform.h"

#include "kiln/graph/Evaluate.h"

#include <gtest/gtest.h>
#include <map>

namespace kiln {
namespace {

using CE = CoordinateEdgeKind;
using Ints = std::vector<std::int64_t>;

Ints forwardInts(CE kind, Ints const& tails, TransformShape<std::int64_t> const& shape) {
    auto r = forward(kind, tails, shape);
    EXPECT_TRUE(r) << name(kind);
    return r.value_or(Ints{});
}
Ints reverseInts(CE kind, Ints const& heads, TransformShape<std::int64_t> const& shape) {
    auto r = reverse(kind, heads, shape);
    EXPECT_TRUE(r) << name(kind);
    return r.value_or(Ints{});
}

TEST(CoordinateTransform, TileSplitsAnIndexIntoDigits) {
    for (std::int64_t n = 1; n <= 13; ++n)
        for (std::int64_t t = 1; t <= 6; ++t) { // 4, 5, 6 do not divide most n
            TransformShape<std::int64_t> const shape{.headSizes = {(n + t - 1) / t, t}};
            for (std::int64_t i = 0; i < n; ++i) {
                EXPECT_EQ(forwardInts(CE::Tile, {i}, shape), (Ints{i / t, i % t})) << n << " " << t;
                EXPECT_EQ(reverseInts(CE::Tile, {i / t, i % t}, shape), Ints{i});
            }
        }
}

TEST(CoordinateTransform, TileIntoThreeLevels) {
    TransformShape<std::int64_t> const shape{.headSizes = {3, 4, 2}};
    std::int64_t i = 0;
    for (std::int64_t a = 0; a < 3; ++a)
        for (std::int64_t b = 0; b < 4; ++b)
            for (std::int64_t c = 0; c < 2; ++c, ++i) {
                EXPECT_EQ(forwardInts(CE::Tile, {i}, shape), (Ints{a, b, c}));
                EXPECT_EQ(reverseInts(CE::Tile, {a, b, c}, shape), Ints{i});
            }
}

// A rows x cols tensor stored row-major (strides cols, 1) or column-major (1, rows), with an
// optional padded leading dimension.
void checkSplitAndJoin(std::int64_t rows, std::int64_t cols, Ints const& strides) {
    TransformShape<std::int64_t> const split{.headSizes = {rows, cols}, .headStrides = strides};
    TransformShape<std::int64_t> const join{.tailSizes = {rows, cols}, .tailStrides = strides};
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
            std::int64_t const offset = r * strides[0] + c * strides[1];
            EXPECT_EQ(reverseInts(CE::Split, {r, c}, split), Ints{offset});
            EXPECT_EQ(forwardInts(CE::Split, {offset}, split), (Ints{r, c}))
                << rows << "x" << cols << " strides " << strides[0] << "," << strides[1];
            EXPECT_EQ(forwardInts(CE::Join, {r, c}, join), Ints{offset});
            EXPECT_EQ(reverseInts(CE::Join, {offset}, join), (Ints{r, c}));
        }
}

TEST(CoordinateTransform, SplitAndJoinRowMajor) {
    for (std::int64_t rows = 1; rows <= 5; ++rows)
        for (std::int64_t cols = 1; cols <= 5; ++cols)
            checkSplitAndJoin(rows, cols, {cols, 1});
}

TEST(CoordinateTransform, SplitAndJoinColumnMajor) {
    for (std::int64_t rows = 2; rows <= 5; ++rows)
        for (std::int64_t cols = 2; cols <= 5; ++cols)
            checkSplitAndJoin(rows, cols, {1, rows});
}

TEST(CoordinateTransform, SplitAndJoinWithPaddedRows) {
    checkSplitAndJoin(3, 5, {8, 1}); // leading dimension 8 > 5
    checkSplitAndJoin(5, 3, {1, 7});
}

TEST(CoordinateTransform, FlattenIsRowMajor) {
    Ints const sizes{2, 3, 4};
    TransformShape<std::int64_t> const shape{.tailSizes = sizes};
    std::int64_t f = 0;
    for (std::int64_t a = 0; a < 2; ++a)
        for (std::int64_t b = 0; b < 3; ++b)
            for (std::int64_t c = 0; c < 4; ++c, ++f) {
                EXPECT_EQ(forwardInts(CE::Flatten, {a, b, c}, shape), Ints{f});
                EXPECT_EQ(reverseInts(CE::Flatten, {f}, shape), (Ints{a, b, c}));
            }
}

TEST(CoordinateTransform, PassThroughInheritForget) {
    TransformShape<std::int64_t> const one{.tailSizes = {7}, .headSizes = {7}};
    TransformShape<std::int64_t> const three{.tailSizes = {7}, .headSizes = {7, 7, 7}};
    TransformShape<std::int64_t> const forget{.tailSizes = {3, 4}, .headSizes = {1}};
    for (std::int64_t i = 0; i < 7; ++i) {
        EXPECT_EQ(forwardInts(CE::PassThrough, {i}, one), Ints{i});
        EXPECT_EQ(reverseInts(CE::PassThrough, {i}, one), Ints{i});
        EXPECT_EQ(forwardInts(CE::Inherit, {i}, three), (Ints{i, i, i}));
        EXPECT_EQ(reverseInts(CE::Inherit, {i, 0, 5}, three), Ints{i}); // reads the first head
        EXPECT_EQ(forwardInts(CE::Forget, {i % 3, i % 4}, forget), Ints{0});
        EXPECT_FALSE(reverse(CE::Forget, Ints{i}, forget));
    }
}

TEST(CoordinateTransform, SunderRunsOverSegmentsInTurn) {
    Ints const segments{3, 5, 2};
    for (std::int64_t t = 0; t < 10; ++t) {
        Ints const heads = sunderForward(t, segments);
        std::int64_t const which = t < 3 ? 0 : t < 8 ? 1 : 2;
        std::int64_t const start = which == 0 ? 0 : which == 1 ? 3 : 8;
        Ints expected(4, 0);
        expected[static_cast<std::size_t>(which)] = t - start;
        expected[3] = which;
        EXPECT_EQ(heads, expected) << t;
        EXPECT_EQ(sunderReverse(heads, segments), t);
    }
    // The templates leave Sunder (and DataFlow) to the functions above.
    TransformShape<std::int64_t> const shape{.tailSizes = {10}, .headSizes = {3, 5, 2, 3}};
    EXPECT_FALSE(forward(CE::Sunder, Ints{0}, shape));
    EXPECT_FALSE(reverse(CE::Sunder, Ints{0, 0, 0, 0}, shape));
    EXPECT_FALSE(forward(CE::DataFlow, Ints{0}, shape));
    EXPECT_THROW(sunderReverse({0, 0, 0, 3}, segments), InternalError);
}

// Index leaves #100, #101, ... take the values of `indices`.
struct Indices : Environment {
    Ints values;
    Value index(Id dimension) const override {
        return Value::integer(values.at(static_cast<std::size_t>(dimension - 100)));
    }
    Value argument(expr::Argument const& a) const override { return arguments.at(a.name); }
    std::map<std::string, Value> arguments;
};

std::vector<ExprPtr> indexLeaves(std::size_t count) {
    std::vector<ExprPtr> out;
    for (std::size_t k = 0; k < count; ++k)
        out.push_back(index(100 + static_cast<Id>(k)));
    return out;
}

std::vector<ExprPtr> literals(Ints const& v) {
    std::vector<ExprPtr> out;
    for (auto x : v)
        out.push_back(literal(x));
    return out;
}

// Forward and reverse as Expressions over index leaves, evaluated at every point of `space`,
// against the integer maps.
void checkExpressions(CE kind, TransformShape<std::int64_t> const& ints,
                      TransformShape<ExprPtr> const& exprs, std::size_t arity,
                      std::vector<Ints> const& points, bool reverseToo, Indices env = {}) {
    auto const f = forward(kind, indexLeaves(arity), exprs);
    auto const r = reverse(kind, indexLeaves(arity), exprs);
    for (Ints const& p : points) {
        env.values = p;
        if (f) {
            Ints got;
            for (auto const& e : *f)
                got.push_back(evaluateInt(*e, env));
            EXPECT_EQ(got, forwardInts(kind, p, ints)) << name(kind);
        }
        if (reverseToo && r) {
            Ints got;
            for (auto const& e : *r)
                got.push_back(evaluateInt(*e, env));
            EXPECT_EQ(got, reverseInts(kind, p, ints)) << name(kind);
        }
    }
}

TEST(CoordinateTransform, ExpressionsAgreeWithIntegers) {
    std::vector<Ints> ones, pairs, triples;
    for (std::int64_t i = 0; i < 24; ++i)
        ones.push_back({i});
    for (std::int64_t a = 0; a < 4; ++a)
        for (std::int64_t b = 0; b < 6; ++b)
            pairs.push_back({a, b});
    for (std::int64_t a = 0; a < 2; ++a)
        for (std::int64_t b = 0; b < 3; ++b)
            for (std::int64_t c = 0; c < 4; ++c)
                triples.push_back({a, b, c});

    // Tile 24 -> (4, 6) and back.
    TransformShape<std::int64_t> const tile{.headSizes = {4, 6}};
    TransformShape<ExprPtr> const tileE{.headSizes = literals({4, 6})};
    checkExpressions(CE::Tile, tile, tileE, 1, ones, false);
    checkExpressions(CE::Tile, tile, tileE, 2, pairs, true);

    // Split / Join with row-major and column-major literal strides.
    for (Ints const& strides : {Ints{6, 1}, Ints{1, 4}}) {
        TransformShape<std::int64_t> const split{.headSizes = {4, 6}, .headStrides = strides};
        TransformShape<ExprPtr> const splitE{.headSizes = literals({4, 6}),
                                             .headStrides = literals(strides)};
        checkExpressions(CE::Split, split, splitE, 2, pairs, true);
        TransformShape<std::int64_t> const join{.tailSizes = {4, 6}, .tailStrides = strides};
        TransformShape<ExprPtr> const joinE{.tailSizes = literals({4, 6}),
                                            .tailStrides = literals(strides)};
        checkExpressions(CE::Join, join, joinE, 2, pairs, false);
    }
    // Split with a stride given at launch (an argument), row-major.
    Indices launch;
    launch.arguments["N"] = Value::integer(6);
    TransformShape<std::int64_t> const splitN{.headSizes = {4, 6}, .headStrides = {6, 1}};
    TransformShape<ExprPtr> const splitNE{
        .headSizes = literals({4, 6}), .headStrides = {argument("N", DataType::I64), literal(1)}};
    checkExpressions(CE::Split, splitN, splitNE, 2, pairs, true, launch);

    TransformShape<std::int64_t> const flatten{.tailSizes = {2, 3, 4}};
    TransformShape<ExprPtr> const flattenE{.tailSizes = literals({2, 3, 4})};
    checkExpressions(CE::Flatten, flatten, flattenE, 3, triples, false);
    checkExpressions(CE::Flatten, flatten, flattenE, 1, ones, true);

    TransformShape<std::int64_t> const one{.tailSizes = {24}, .headSizes = {24, 24}};
    TransformShape<ExprPtr> const oneE{.tailSizes = literals({24}),
                                       .headSizes = literals({24, 24})};
    checkExpressions(CE::PassThrough, one, oneE, 1, ones, true);
    checkExpressions(CE::Inherit, one, oneE, 1, ones, false);
    checkExpressions(CE::Forget, one, oneE, 1, ones, false);
}

TEST(CoordinateTransform, ArityOfEachKind) {
    auto const same = [](Arity a, Arity b) {
        return a.minTails == b.minTails && a.maxTails == b.maxTails && a.minHeads == b.minHeads &&
               a.maxHeads == b.maxHeads;
    };
    EXPECT_TRUE(same(arity(CE::Tile), {1, 1, 1, -1}));
    EXPECT_TRUE(same(arity(CE::Split), {1, 1, 1, -1}));
    EXPECT_TRUE(same(arity(CE::Join), {1, -1, 1, 1}));
    EXPECT_TRUE(same(arity(CE::Flatten), {1, -1, 1, 1}));
    EXPECT_TRUE(same(arity(CE::PassThrough), {1, 1, 1, 1}));
    EXPECT_TRUE(same(arity(CE::Forget), {1, -1, 1, 1}));
    EXPECT_TRUE(same(arity(CE::Inherit), {1, 1, 1, -1}));
    EXPECT_TRUE(same(arity(CE::Sunder), {1, 1, 2, -1}));
    EXPECT_TRUE(isTransform(CE::Tile));
    EXPECT_FALSE(isTransform(CE::DataFlow));
}

TEST(CoordinateTransform, NamesRoundTrip) {
    EXPECT_EQ(allCoordinateEdgeKinds().size(), 9u);
    for (CE kind : allCoordinateEdgeKinds())
        EXPECT_EQ(parseCoordinateEdgeKind(name(kind)), kind);
    EXPECT_EQ(name(CE::PassThrough), "PassThrough");
    EXPECT_EQ(parseCoordinateEdgeKind("Tiles"), std::nullopt);
}

} // namespace
} // namespace kiln
