// Simplification: constant folding, exact identities, gathering literals; and a randomized check
// that simplify(e) has the value of e for random integer expressions and argument values.
#include "kiln/graph/Simplify.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/ExpressionText.h"

#include <array>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <random>

namespace kiln {
namespace {

using DT = DataType;

ExprPtr i() {
    return index(1);
}
ExprPtr lit(std::int64_t v) {
    return literal(v);
}
std::string simplified(ExprPtr const& e) {
    return toString(simplify(e));
}

TEST(Simplify, FoldsConstants) {
    EXPECT_TRUE(equal(simplify(lit(1) + lit(2) * lit(3)), lit(7)));
    EXPECT_TRUE(equal(simplify(ceilDivide(lit(100), lit(32))), lit(4)));
    EXPECT_TRUE(
        equal(simplify(binary(BinaryOp::Less, lit(1), lit(2))), literal(Value::boolean(true))));
    EXPECT_TRUE(equal(simplify(unary(UnaryOp::Negate, lit(5))), lit(-5)));
    EXPECT_TRUE(equal(simplify(convert(DT::F16, literal(Value::real(0.1)))),
                      literal(Value::real(0.0999755859375, DT::F16))));
    EXPECT_EQ(simplified(i() * (lit(2) + lit(3))), "index#1 * 5");
}

TEST(Simplify, KeepsErrorsVisible) {
    EXPECT_EQ(simplified(lit(1) / lit(0)), "1 / 0");
    EXPECT_EQ(simplified(i() + lit(4) % lit(0)), "index#1 + 4 % 0");
}

// A floating-point division by a power of two is a product with its reciprocal: the same
// number, rounded once, for every dividend. Other divisors stay, and so does one whose
// reciprocal is not a normal number of its type (2^127 in f32), and integer division.
TEST(Simplify, DividesByAPowerOfTwoAsAProduct) {
    ExprPtr const x = argument("x", DT::F32);
    EXPECT_EQ(simplified(x / literal(Value::real(8192, DT::F32))), "x * f32(0.0001220703125)");
    EXPECT_EQ(simplified(x / literal(Value::real(-0.5, DT::F32))), "x * f32(-2.0)");
    EXPECT_EQ(simplified(x / literal(Value::real(3, DT::F32))), "x / f32(3.0)");
    EXPECT_EQ(simplified(x / literal(Value::real(std::ldexp(1.0, 127), DT::F32))),
              "x / f32(1.7014118346046923e+38)");
    EXPECT_EQ(simplified(i() / lit(8)), "index#1 / 8");
    ExprPtr const mean = argument("s", DT::F64) / convert(DT::F64, lit(4096));
    EXPECT_EQ(simplified(mean), "s * f64(0.000244140625)");
}

TEST(Simplify, IntegerIdentities) {
    EXPECT_EQ(simplified(i() + lit(0)), "index#1");
    EXPECT_EQ(simplified(lit(0) + i()), "index#1");
    EXPECT_EQ(simplified(i() - lit(0)), "index#1");
    EXPECT_EQ(simplified(i() * lit(1)), "index#1");
    EXPECT_EQ(simplified(lit(1) * i()), "index#1");
    EXPECT_EQ(simplified(i() * lit(0)), "i64(0)"); // a strong zero, typed as index#1
    EXPECT_EQ(simplified(i() - i()), "i64(0)");
    EXPECT_EQ(simplified(i() / lit(1)), "index#1");
    EXPECT_EQ(simplified(ceilDivide(i(), lit(1))), "index#1");
    EXPECT_EQ(simplified(i() % lit(1)), "i64(0)");
    EXPECT_EQ(simplified(binary(BinaryOp::Min, i(), i())), "index#1");
    EXPECT_EQ(simplified(binary(BinaryOp::Max, i() + lit(0), i())), "index#1");
    EXPECT_EQ(simplified(unary(UnaryOp::Negate, unary(UnaryOp::Negate, i()))), "index#1");
}

TEST(Simplify, GathersLiterals) {
    EXPECT_EQ(simplified(((i() * lit(4)) * lit(2)) + lit(1) + lit(3)), "index#1 * 8 + 4");
    EXPECT_EQ(simplified(lit(3) + i()), "index#1 + 3");
    EXPECT_EQ(simplified(i() - lit(3)), "index#1 + -3");
    EXPECT_EQ(simplified(i() + lit(5) - lit(5)), "index#1");
    EXPECT_EQ(simplified(lit(2) * (lit(3) * i())), "index#1 * 6");
}

// (x * c) / d with c a multiple of d is x * (c / d) in 64 bits, where overflow is an error; in
// 32 bits the product wraps, so the division stays.
TEST(Simplify, DividesExactMultiples) {
    ExprPtr const n = argument("N", DT::I64);
    EXPECT_EQ(simplified(n * lit(4) / lit(4)), "N");
    EXPECT_EQ(simplified(ceilDivide(i() * lit(8), lit(4))), "index#1 * 2");
    EXPECT_EQ(simplified(i() * lit(8) / lit(-4)), "index#1 * -2");
    EXPECT_EQ(simplified(i() * lit(6) / lit(4)), "index#1 * 6 / 4");
    EXPECT_EQ(simplified(i() * lit(4) / lit(8)), "index#1 * 4 / 8");
    ExprPtr const c = argument("c", DT::I32);
    EXPECT_EQ(simplified(c * lit(4) / lit(4)), "c * 4 / 4");
}

TEST(Simplify, FindsDivisionByAConstantZero) {
    ExprPtr const n = argument("N", DT::I64);
    EXPECT_EQ(divisionByZero(simplify(n + lit(1))), nullptr);
    EXPECT_EQ(toString(divisionByZero(simplify(lit(2) + n / lit(0)))), "N / 0");
    EXPECT_EQ(toString(divisionByZero(simplify(n % (n - n)))), "N % i64(0)");
    ExprPtr const positive = binary(BinaryOp::Greater, n, lit(0));
    EXPECT_EQ(toString(divisionByZero(
                  simplify(select(binary(BinaryOp::Less, ceilDivide(n, lit(0)), lit(2)), n, n)))),
              "ceildiv(N, 0)");
    // Behind && or || or in a branch of a select, the division may never be evaluated.
    EXPECT_EQ(divisionByZero(select(positive, lit(1), n / lit(0))), nullptr);
    EXPECT_EQ(divisionByZero(binary(BinaryOp::LogicalAnd, positive, n % lit(0))), nullptr);
    EXPECT_EQ(toString(simplify(binary(BinaryOp::LogicalAnd, lit(0),
                                       binary(BinaryOp::Equal, n % lit(0), lit(1))))),
              "false");
    EXPECT_EQ(divisionByZero(n / n), nullptr);
    // A float divided by zero is an infinity, not an error.
    EXPECT_EQ(divisionByZero(argument("f", DT::F32) / literal(Value::real(0.0))), nullptr);
}

TEST(Simplify, SelectOnAConstant) {
    EXPECT_EQ(simplified(select(binary(BinaryOp::Less, lit(1), lit(2)), i(), index(2))), "index#1");
    EXPECT_EQ(simplified(select(lit(0), i(), index(2))), "index#2");
    // Different branch types: picking one would change the type, so the select stays.
    ExprPtr const mixed = select(lit(1), argument("h", DT::F16), argument("f", DT::F32));
    EXPECT_EQ(simplified(mixed), "select(1, h, f)");
}

TEST(Simplify, ConversionsToTheSameTypeVanish) {
    EXPECT_EQ(simplified(convert(DT::I64, i())), "index#1");
    EXPECT_EQ(simplified(convert(DT::F32, argument("f", DT::F32))), "f");
    EXPECT_EQ(simplified(convert(DT::F16, argument("f", DT::F32))), "f16(f)");
}

TEST(Simplify, FloatsKeepWhatIsNotExact) {
    ExprPtr const f = argument("f", DT::F32);
    EXPECT_EQ(simplified(f * lit(0)), "f * 0"); // NaN * 0 is NaN
    EXPECT_EQ(simplified(f - f), "f - f");      // inf - inf is NaN
    EXPECT_EQ(simplified(f + lit(0)), "f + 0"); // -0 + 0 is +0
    EXPECT_EQ(simplified(f * lit(1)), "f");     // exact
    EXPECT_EQ(simplified(argument("n", DT::I32) * literal(Value::real(1.0))), "n * 1.0"); // f64
}

TEST(Simplify, LeavesOtherNodesAlone) {
    EXPECT_TRUE(equal(simplify(dimensionSize(3)), dimensionSize(3)));
    EXPECT_TRUE(equal(simplify(nullptr), nullptr));
    EXPECT_EQ(simplified(dimensionSize(3) * dimensionStride(3)), "size#3 * stride#3");
}

// A subtree that simplifies to itself comes back as the same node (code generation keys tables
// by node and re-simplifies trees built of simplified parts); one that changes is a new node.
TEST(Simplify, KeepsAnUnchangedSubtreeAsTheSameNode) {
    ExprPtr const row = i() * argument("N", DT::I64);
    ExprPtr const offset = row + index(2) % lit(4);
    EXPECT_EQ(simplify(offset), offset);
    ExprPtr const narrowed = convert(DT::I32, offset);
    EXPECT_EQ(simplify(narrowed), narrowed);
    ExprPtr const grown = (offset + lit(1)) + lit(2);
    ExprPtr const s = simplify(grown);
    EXPECT_EQ(toString(s), toString(offset) + " + 3");
    auto const* sum = std::get_if<expr::Binary>(s.get());
    ASSERT_NE(sum, nullptr);
    EXPECT_EQ(sum->lhs, offset); // the unchanged part is shared, not copied
    ExprPtr const picked = select(binary(BinaryOp::Less, index(3), lit(2)), offset, row);
    EXPECT_EQ(simplify(picked), picked);
}

// Folding or rewriting a node never changes how it types with its neighbours (found by the
// randomized test below).
TEST(Simplify, KeepsTypesAndWeakness) {
    ExprPtr const a = argument("a", DT::I64), c = argument("c", DT::I32);
    ExprPtr const flag = binary(BinaryOp::Less, a, lit(0));
    // i32(-133) >> 5 folds to the i32 literal -5, not to a weak -5 that would become a bool.
    ExprPtr const e =
        binary(BinaryOp::BitwiseOr,
               binary(BinaryOp::ShiftRight, convert(DT::I32, lit(-133)), lit(5)), flag);
    EXPECT_EQ(simplified(e), "a < 0 | i32(-5)");
    EXPECT_EQ(resultType(*simplify(e)), DT::I32);
    // select(1, 5, a) is an i64 like a; the weak 5 alone would turn c * 5 into i32.
    ExprPtr const picked = select(lit(1), lit(5), a) * c;
    EXPECT_EQ(resultType(*simplify(picked)), DT::I64);
    EXPECT_EQ(simplified(picked), "select(1, 5, a) * c");
    // i64(3) is strong; folding it to the weak literal 3 would let it adapt to i32.
    EXPECT_EQ(simplified(convert(DT::I64, lit(3)) * c), "c * i64(3)");
    EXPECT_EQ(simplified(convert(DT::I64, lit(1) + lit(2))), "i64(3)");
    EXPECT_EQ(simplified(convert(DT::I32, lit(3)) * c), "c * i32(3)");
    // Adding a weak 0 to a bool gives an i32; dropping the 0 would leave a bool.
    EXPECT_EQ(simplified(flag + lit(0)), "(a < 0) + 0");
}

// a and b are i64, c is i32, each with a random value; indices are never read.
struct RandomArguments : Environment {
    std::map<std::string, Value> values;
    Value argument(expr::Argument const& a) const override { return values.at(a.name); }
};

// simplify(e) never changes the value of an expression that evaluates: 20000 random trees of
// integer arithmetic, comparisons, logic, selects and conversions, each at 5 argument values.
TEST(Simplify, RandomExpressionsKeepTheirValue) {
    std::mt19937_64 random(7);
    auto const pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
    BinaryOp const ops[] = {
        BinaryOp::Add,        BinaryOp::Subtract,   BinaryOp::Multiply,   BinaryOp::Divide,
        BinaryOp::Modulo,     BinaryOp::CeilDivide, BinaryOp::Min,        BinaryOp::Max,
        BinaryOp::Gcd,        BinaryOp::ShiftLeft,  BinaryOp::ShiftRight, BinaryOp::BitwiseAnd,
        BinaryOp::BitwiseOr,  BinaryOp::BitwiseXor, BinaryOp::Equal,      BinaryOp::NotEqual,
        BinaryOp::Less,       BinaryOp::LessEqual,  BinaryOp::Greater,    BinaryOp::GreaterEqual,
        BinaryOp::LogicalAnd, BinaryOp::LogicalOr};
    ExprPtr const leaves[] = {argument("a", DT::I64), argument("b", DT::I64),
                              argument("c", DT::I32)};
    std::function<ExprPtr(int)> make = [&](int depth) -> ExprPtr {
        if (depth == 0 || pick(5) == 0)
            return pick(2) ? leaves[pick(3)] : lit(pick(2) ? pick(9) - 4 : pick(2001) - 1000);
        switch (pick(10)) {
        case 0:
            return unary(std::array{UnaryOp::Negate, UnaryOp::BitwiseNot, UnaryOp::Abs,
                                    UnaryOp::LogicalNot}[pick(4)],
                         make(depth - 1));
        case 1:
            return select(make(depth - 1), make(depth - 1), make(depth - 1));
        case 2:
            return convert(pick(2) ? DT::I32 : DT::I64, make(depth - 1));
        default: {
            BinaryOp const op = ops[pick(std::size(ops))];
            bool const shift = op == BinaryOp::ShiftLeft || op == BinaryOp::ShiftRight;
            return binary(op, make(depth - 1), shift ? lit(pick(12)) : make(depth - 1));
        }
        }
    };
    auto const valueOf = [](ExprPtr const& e, Environment const& env) -> std::optional<Value> {
        try {
            return evaluate(*e, env);
        } catch (UserError const&) {
            return std::nullopt;
        }
    };
    int evaluated = 0;
    for (int n = 0; n < 20000; ++n) {
        ExprPtr const e = make(4);
        ExprPtr const s = simplify(e);
        EXPECT_EQ(resultType(*s), resultType(*e)) << toString(e) << "  ->  " << toString(s);
        for (int k = 0; k < 5; ++k) {
            RandomArguments env;
            env.values["a"] = Value::integer(pick(41) - 20);
            env.values["b"] =
                Value::integer(pick(3) ? pick(41) - 20 : static_cast<std::int64_t>(random()));
            env.values["c"] = Value::integer(pick(41) - 20, DT::I32);
            auto const expected = valueOf(e, env);
            if (!expected)
                continue; // an expression that fails (division by zero) may simplify to one that
                          // does not
            ++evaluated;
            auto const actual = valueOf(s, env);
            ASSERT_TRUE(actual) << toString(e) << "  ->  " << toString(s);
            ASSERT_EQ(actual->i, expected->i)
                << toString(e) << "  ->  " << toString(s) << " with a=" << env.values["a"].i
                << " b=" << env.values["b"].i << " c=" << env.values["c"].i;
        }
    }
    EXPECT_GT(evaluated, 50000); // most expressions evaluate: the check is not vacuous
}

} // namespace
} // namespace kiln
