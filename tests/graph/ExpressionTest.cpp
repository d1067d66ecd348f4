// Expressions: evaluation (integer and float semantics, wrapping, rounding), result types with
// weak literals, evaluation times, and the errors evaluation reports.
#include "kiln/graph/Expression.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>

namespace kiln {
namespace {

using DT = DataType;

// Arguments and indices with values, for expressions that read them.
struct Values : Environment {
    std::map<std::string, Value> arguments;
    std::map<Id, std::int64_t> indices;
    Value argument(expr::Argument const& a) const override {
        auto it = arguments.find(a.name);
        return it == arguments.end() ? Environment::argument(a) : it->second;
    }
    Value index(Id dimension) const override {
        auto it = indices.find(dimension);
        return it == indices.end() ? Environment::index(dimension) : Value::integer(it->second);
    }
};

std::int64_t evalInt(ExprPtr const& e) {
    return evaluateInt(*e);
}
ExprPtr lit(std::int64_t v) {
    return literal(v);
}
ExprPtr real(double v) {
    return literal(Value::real(v));
}

// The message of the UserError that evaluating `e` throws ("" when none is thrown).
std::string evaluationError(ExprPtr const& e, Environment const& env = Environment{}) {
    try {
        evaluate(*e, env);
    } catch (UserError const& error) {
        return error.message();
    }
    return "";
}

TEST(Expression, IntegerDivisionTruncatesTowardZero) {
    EXPECT_EQ(evalInt(lit(7) / lit(2)), 3);
    EXPECT_EQ(evalInt(lit(-7) / lit(2)), -3);
    EXPECT_EQ(evalInt(lit(7) / lit(-2)), -3);
    EXPECT_EQ(evalInt(lit(-7) / lit(-2)), 3);
    EXPECT_EQ(evalInt(lit(6) / lit(3)), 2);
}

TEST(Expression, ModuloHasTheSignOfTheDividend) {
    EXPECT_EQ(evalInt(lit(7) % lit(3)), 1);
    EXPECT_EQ(evalInt(lit(-7) % lit(3)), -1);
    EXPECT_EQ(evalInt(lit(7) % lit(-3)), 1);
    EXPECT_EQ(evalInt(lit(9) % lit(3)), 0);
    // For non-negative operands (every index), x == (x / t) * t + x % t.
    for (std::int64_t x = 0; x < 40; ++x)
        for (std::int64_t t = 1; t < 9; ++t)
            EXPECT_EQ(evalInt((lit(x) / lit(t)) * lit(t) + lit(x) % lit(t)), x);
}

TEST(Expression, CeilDivideRoundsUp) {
    EXPECT_EQ(evalInt(ceilDivide(lit(7), lit(2))), 4);
    EXPECT_EQ(evalInt(ceilDivide(lit(8), lit(2))), 4);
    EXPECT_EQ(evalInt(ceilDivide(lit(0), lit(5))), 0);
    EXPECT_EQ(evalInt(ceilDivide(lit(1), lit(64))), 1);
    EXPECT_EQ(evalInt(ceilDivide(lit(-7), lit(2))), -3);
    EXPECT_EQ(evalInt(ceilDivide(lit(7), lit(-2))), -3);
    EXPECT_EQ(evalInt(ceilDivide(lit(-7), lit(-2))), 4);
    for (std::int64_t n = 0; n < 50; ++n)
        for (std::int64_t t = 1; t < 9; ++t)
            EXPECT_EQ(evalInt(ceilDivide(lit(n), lit(t))), (n + t - 1) / t);
}

TEST(Expression, ShiftsAndBitwise) {
    EXPECT_EQ(evalInt(binary(BinaryOp::ShiftLeft, lit(1), lit(10))), 1024);
    EXPECT_EQ(evalInt(binary(BinaryOp::ShiftRight, lit(1024), lit(3))), 128);
    EXPECT_EQ(evalInt(binary(BinaryOp::ShiftRight, lit(-16), lit(2))), -4); // arithmetic
    EXPECT_EQ(evalInt(binary(BinaryOp::ShiftLeft, lit(1), lit(63))),
              std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(evalInt(binary(BinaryOp::BitwiseAnd, lit(12), lit(10))), 8);
    EXPECT_EQ(evalInt(binary(BinaryOp::BitwiseOr, lit(12), lit(10))), 14);
    EXPECT_EQ(evalInt(binary(BinaryOp::BitwiseXor, lit(12), lit(10))), 6);
    EXPECT_EQ(evalInt(unary(UnaryOp::BitwiseNot, lit(5))), -6);
    EXPECT_EQ(evaluationError(binary(BinaryOp::ShiftLeft, lit(1), lit(64))),
              "shift by 64 is out of range 0..63");
    EXPECT_EQ(evaluationError(binary(BinaryOp::ShiftRight, lit(1), lit(-1))),
              "shift by -1 is out of range 0..63");
}

TEST(Expression, MinMaxGcdAbs) {
    EXPECT_EQ(evalInt(binary(BinaryOp::Min, lit(3), lit(-2))), -2);
    EXPECT_EQ(evalInt(binary(BinaryOp::Max, lit(3), lit(-2))), 3);
    EXPECT_EQ(evalInt(binary(BinaryOp::Gcd, lit(12), lit(18))), 6);
    EXPECT_EQ(evalInt(binary(BinaryOp::Gcd, lit(-4), lit(6))), 2);
    EXPECT_EQ(evalInt(binary(BinaryOp::Gcd, lit(0), lit(5))), 5);
    EXPECT_EQ(evalInt(unary(UnaryOp::Abs, lit(-5))), 5);
    EXPECT_EQ(evalInt(unary(UnaryOp::Negate, lit(5))), -5);
}

TEST(Expression, ComparisonsAndLogicGiveBool) {
    Value const v = evaluate(*binary(BinaryOp::Less, lit(2), lit(3)));
    EXPECT_EQ(v, Value::boolean(true));
    EXPECT_EQ(evaluate(*binary(BinaryOp::GreaterEqual, real(2.5), lit(3))), Value::boolean(false));
    EXPECT_EQ(evaluate(*binary(BinaryOp::Equal, lit(4), real(4.0))), Value::boolean(true));
    EXPECT_EQ(evaluate(*unary(UnaryOp::LogicalNot, lit(0))), Value::boolean(true));
    EXPECT_EQ(evaluate(*binary(BinaryOp::LogicalOr, lit(0), lit(7))), Value::boolean(true));
    EXPECT_EQ(evaluate(*binary(BinaryOp::LogicalAnd, lit(2), lit(0))), Value::boolean(false));
}

TEST(Expression, LogicShortCircuits) {
    ExprPtr const boom = binary(BinaryOp::Equal, lit(1) / lit(0), lit(0));
    EXPECT_EQ(evaluate(*binary(BinaryOp::LogicalAnd, lit(0), boom)), Value::boolean(false));
    EXPECT_EQ(evaluate(*binary(BinaryOp::LogicalOr, lit(1), boom)), Value::boolean(true));
    EXPECT_EQ(evaluationError(binary(BinaryOp::LogicalAnd, lit(1), boom)), "'/' by zero (1 / 0)");
}

TEST(Expression, SelectPicksOneSide) {
    EXPECT_EQ(evalInt(select(lit(1), lit(10), lit(20))), 10);
    EXPECT_EQ(evalInt(select(binary(BinaryOp::Greater, lit(1), lit(2)), lit(10), lit(20))), 20);
}

TEST(Expression, I32ArithmeticWraps) {
    Values env;
    env.arguments["n"] = Value::integer(std::numeric_limits<std::int32_t>::max(), DT::I32);
    ExprPtr const n = argument("n", DT::I32);
    Value const sum = evaluate(*(n + lit(1)), env);
    EXPECT_EQ(sum.type, DT::I32);
    EXPECT_EQ(sum.i, std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(evaluate(*(n * lit(2)), env).i, -2);
    EXPECT_EQ(evalInt(convert(DT::I32, lit(std::int64_t{1} << 32 | 5))), 5);
    EXPECT_EQ(evalInt(convert(DT::I32, real(-3.9))), -3);
    EXPECT_EQ(evaluate(*convert(DT::Bool, lit(7))), Value::integer(1, DT::Bool));
}

TEST(Expression, FloatArithmeticRoundsToItsType) {
    Values env;
    env.arguments["h"] = Value::real(1.0, DT::F16);
    env.arguments["f"] = Value::real(1.0, DT::F32);
    // 1 + 2^-11 is half an f16 ulp above 1: ties to even give 1.
    Value const h = evaluate(*(argument("h", DT::F16) + real(std::ldexp(1.0, -11))), env);
    EXPECT_EQ(h.type, DT::F16);
    EXPECT_EQ(h.f, 1.0);
    Value const f = evaluate(*(argument("f", DT::F32) + real(std::ldexp(1.0, -11))), env);
    EXPECT_EQ(f.type, DT::F32);
    EXPECT_EQ(f.f, 1.0 + std::ldexp(1.0, -11));
    EXPECT_EQ(evaluate(*convert(DT::F16, real(0.1))).f, 0.0999755859375);
    EXPECT_EQ(evaluate(*convert(DT::F32, real(0.1))).f, static_cast<double>(0.1f));
    EXPECT_EQ(evaluate(*convert(DT::BF16, real(0.1))).f, 0.10009765625);
    EXPECT_TRUE(std::isinf(evaluate(*(real(1.0) / real(0.0))).f)); // floats do not fail
}

TEST(Expression, RoundToHalfTypes) {
    double const ulp16 = std::ldexp(1.0, -10);
    EXPECT_EQ(roundTo(DT::F16, 1.0 + ulp16 / 2), 1.0);                 // tie, to even
    EXPECT_EQ(roundTo(DT::F16, 1.0 + 3 * ulp16 / 2), 1.0 + 2 * ulp16); // tie, to even
    EXPECT_EQ(roundTo(DT::F16, 1.0 + 0.6 * ulp16), 1.0 + ulp16);
    EXPECT_EQ(roundTo(DT::F16, 65504.0), 65504.0); // largest f16
    EXPECT_EQ(roundTo(DT::F16, 65519.0), 65504.0);
    EXPECT_TRUE(std::isinf(roundTo(DT::F16, 65520.0))); // rounds to overflow
    EXPECT_EQ(roundTo(DT::F16, -65520.0), -INFINITY);
    EXPECT_EQ(roundTo(DT::F16, std::ldexp(1.0, -24)), std::ldexp(1.0, -24)); // smallest subnormal
    EXPECT_EQ(roundTo(DT::F16, std::ldexp(1.0, -25)), 0.0);                  // tie, to even (0)
    EXPECT_EQ(roundTo(DT::F16, 3 * std::ldexp(1.0, -25)), std::ldexp(1.0, -23));
    EXPECT_EQ(roundTo(DT::BF16, 1.0 + std::ldexp(1.0, -8)), 1.0);
    EXPECT_EQ(roundTo(DT::BF16, 1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));
    EXPECT_EQ(roundTo(DT::BF16, 3.0e38), std::ldexp(226.0, 120)); // bf16 keeps f32's range
    EXPECT_EQ(roundTo(DT::F32, 1.0 + std::ldexp(1.0, -30)), 1.0);
    EXPECT_EQ(roundTo(DT::I32, 2.7), 2.0);
    EXPECT_EQ(roundTo(DT::I32, -2.7), -2.0);
    EXPECT_TRUE(std::isnan(roundTo(DT::F16, NAN)));
}

TEST(Expression, WeakLiteralsTakeTheOtherOperandsType) {
    auto const type = [](ExprPtr const& e) { return resultType(*e); };
    ExprPtr const h = argument("h", DT::F16), b = argument("b", DT::BF16);
    ExprPtr const f = argument("f", DT::F32), d = argument("d", DT::F64);
    ExprPtr const i = argument("i", DT::I32), n = argument("n", DT::I64);
    EXPECT_EQ(type(h * lit(2)), DT::F16);
    EXPECT_EQ(type(h * real(2.0)), DT::F16);
    EXPECT_EQ(type(lit(2) * h), DT::F16);
    EXPECT_EQ(type(i + lit(1)), DT::I32);
    EXPECT_EQ(type(i * real(2.5)), DT::F64); // an integer cannot hold a float literal
    EXPECT_EQ(type(lit(1) + lit(2)), DT::I64);
    EXPECT_EQ(type(lit(1) + real(2.0)), DT::F64);
    // Two typed operands promote as in C, with half types meeting in f32.
    EXPECT_EQ(type(h + b), DT::F32);
    EXPECT_EQ(type(h + f), DT::F32);
    EXPECT_EQ(type(f + d), DT::F64);
    EXPECT_EQ(type(i + n), DT::I64);
    EXPECT_EQ(type(h + n), DT::F16);
    EXPECT_EQ(type(binary(BinaryOp::Less, h, lit(0))), DT::Bool);
    EXPECT_EQ(type(unary(UnaryOp::LogicalNot, i)), DT::Bool);
    EXPECT_EQ(type(unary(UnaryOp::Negate, h)), DT::F16);
    EXPECT_EQ(type(select(binary(BinaryOp::Less, i, lit(0)), h, lit(1))), DT::F16);
    EXPECT_EQ(type(convert(DT::BF16, i)), DT::BF16);
    EXPECT_EQ(type(binary(BinaryOp::Max, f * h + lit(1), lit(0))), DT::F32);
    EXPECT_EQ(type(dimensionSize(3) * lit(4)), DT::I64);
    EXPECT_EQ(type(dataValue(3, DT::F16) * lit(2)), DT::F16);
}

TEST(Expression, ArithmeticOnBoolsIsOnI32) {
    ExprPtr const yes = binary(BinaryOp::Less, lit(1), lit(2));
    EXPECT_EQ(resultType(*(yes + lit(1))), DT::I32);
    EXPECT_EQ(evaluate(*(yes + lit(1))), Value::integer(2, DT::I32)); // not bool(1)
    EXPECT_EQ(evaluate(*(yes * lit(5))), Value::integer(5, DT::I32));
    EXPECT_EQ(evalInt(yes + yes), 2);
    EXPECT_EQ(resultType(*(yes + argument("n", DT::I64))), DT::I64);
    EXPECT_EQ(resultType(*(yes * real(2.0))), DT::F64);
}

TEST(Expression, OnlyI64AndF64LiteralsAreWeak) {
    ExprPtr const i32five = literal(Value::integer(5, DT::I32));
    EXPECT_TRUE(isWeak(*lit(5)));
    EXPECT_TRUE(isWeak(*(lit(5) * real(0.5))));
    EXPECT_FALSE(isWeak(*i32five));
    EXPECT_FALSE(isWeak(*literal(Value::real(0.5, DT::F16))));
    EXPECT_FALSE(isWeak(*argument("n", DT::I64)));
    EXPECT_FALSE(isWeak(*convert(DT::I64, lit(5))));
    EXPECT_EQ(resultType(*(i32five + argument("n", DT::I64))), DT::I64); // promoted, as i32(5) is
    EXPECT_EQ(resultType(*(i32five + lit(1))), DT::I32);                 // the weak 1 adapts
    EXPECT_EQ(resultType(*(literal(Value::real(0.5, DT::F16)) * argument("f", DT::F32))), DT::F32);
}

// A node's typing is recorded when it is built, from its children's: it is what resultType and
// isWeak answer, down a deep chain as at its root.
TEST(Expression, ANodeIsTypedWhenBuilt) {
    ExprPtr e = convert(DT::I32, argument("n", DT::I64));
    for (int k = 0; k < 1000; ++k)
        e = e * lit(3) + lit(1);
    EXPECT_EQ(e->typing().type, DT::I32);
    EXPECT_FALSE(e->typing().weak);
    EXPECT_EQ(resultType(*e), DT::I32);
    ExprPtr const weak = lit(2) * real(0.5);
    EXPECT_EQ(weak->typing().type, DT::F64);
    EXPECT_TRUE(weak->typing().weak);
    EXPECT_EQ(resultType(*binary(BinaryOp::Less, index(1), lit(3))), DT::Bool);
}

TEST(Expression, ResultWithAWeakLiteralIsRoundedToTheStrongType) {
    Values env;
    env.arguments["h"] = Value::real(3.0, DT::F16);
    Value const v = evaluate(*(argument("h", DT::F16) * real(0.1)), env);
    EXPECT_EQ(v.type, DT::F16);
    EXPECT_EQ(v.f, roundTo(DT::F16, v.f));
    EXPECT_NEAR(v.f, 0.3, std::ldexp(1.0, -12));
}

TEST(Expression, EvaluationTimeIsTheLatestLeaf) {
    auto const when = [](ExprPtr const& e) { return evaluationTime(*e); };
    EXPECT_EQ(when(lit(3) * lit(4)), EvaluationTime::Translate);
    EXPECT_EQ(when(argument("M", DT::I64) * lit(4)), EvaluationTime::KernelLaunch);
    EXPECT_EQ(when(dimensionSize(2)), EvaluationTime::KernelLaunch);
    EXPECT_EQ(when(dimensionStride(2) + lit(1)), EvaluationTime::KernelLaunch);
    EXPECT_EQ(when(index(2) + argument("M", DT::I64)), EvaluationTime::KernelExecute);
    EXPECT_EQ(when(dataValue(2, DT::F32)), EvaluationTime::KernelExecute);
    EXPECT_EQ(when(tag("x", DT::F32)), EvaluationTime::KernelExecute);
    EXPECT_EQ(when(select(lit(1), dimensionSize(2), index(3))), EvaluationTime::KernelExecute);
    EXPECT_EQ(when(convert(DT::F32, argument("M", DT::I64))), EvaluationTime::KernelLaunch);
    EXPECT_EQ(when(unary(UnaryOp::Negate, lit(1))), EvaluationTime::Translate);
}

TEST(Expression, IntegerErrorsAreUserErrors) {
    EXPECT_EQ(evaluationError(lit(1) / lit(0)), "'/' by zero (1 / 0)");
    EXPECT_EQ(evaluationError(lit(5) % lit(0)), "'%' by zero (5 % 0)");
    EXPECT_EQ(evaluationError(ceilDivide(lit(5), lit(0))), "'ceildiv' by zero (5 ceildiv 0)");
    EXPECT_EQ(evaluationError(lit(std::numeric_limits<std::int64_t>::min()) / lit(-1)),
              "'/' overflows (-9223372036854775808 / -1)");
    // A size or an element count past int64 is an error, not a negative number.
    EXPECT_EQ(evaluationError(lit(std::int64_t(1) << 40) * lit(std::int64_t(1) << 30)),
              "'*' overflows 64 bits (1099511627776 * 1073741824)");
    EXPECT_EQ(evaluationError(lit(std::numeric_limits<std::int64_t>::max()) + lit(1)),
              "'+' overflows 64 bits (9223372036854775807 + 1)");
    EXPECT_EQ(evaluationError(lit(std::numeric_limits<std::int64_t>::min()) - lit(1)),
              "'-' overflows 64 bits (-9223372036854775808 - 1)");
    EXPECT_EQ(evaluationError(binary(BinaryOp::BitwiseAnd, real(1.0), lit(1))),
              "'&' needs integer operands, not f64");
    EXPECT_EQ(evaluationError(unary(UnaryOp::BitwiseNot, real(1.0))),
              "'~' needs an integer operand, not f64");
    EXPECT_THROW(evaluate(*(lit(1) / lit(0))), UserError);
}

TEST(Expression, MissingLeavesSayWhatWasMissing) {
    EXPECT_EQ(evaluationError(argument("alpha", DT::F32)), "argument 'alpha' has no value here");
    EXPECT_EQ(evaluationError(dimensionSize(4)), "the size of dimension #4 is not known here");
    EXPECT_EQ(evaluationError(dimensionStride(4)), "the stride of dimension #4 is not known here");
    EXPECT_EQ(evaluationError(index(4)),
              "the index of dimension #4 is only known inside the kernel");
    EXPECT_EQ(evaluationError(dataValue(4, DT::F32)),
              "the value of dimension #4 is only known inside the kernel");
    EXPECT_EQ(evaluationError(tag("x", DT::F32)), "value 'x' has no value here");
    try {
        evaluateInt(*real(1.5));
        FAIL();
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(), "'1.5' is f64 where an integer is needed");
    }
}

TEST(Expression, LeavesComeFromTheEnvironment) {
    Values env;
    env.arguments["M"] = Value::integer(100);
    env.indices[7] = 13;
    ExprPtr const e = ceilDivide(argument("M", DT::I64), lit(32)) * index(7) + lit(1);
    EXPECT_EQ(evaluateInt(*e, env), 4 * 13 + 1);
}

TEST(Expression, StructuralEquality) {
    EXPECT_TRUE(equal(lit(1) + index(3), lit(1) + index(3)));
    EXPECT_FALSE(equal(lit(1) + index(3), index(3) + lit(1)));
    EXPECT_FALSE(equal(argument("a", DT::F32), argument("a", DT::F16)));
    EXPECT_FALSE(equal(dimensionSize(3), dimensionStride(3)));
    EXPECT_FALSE(equal(lit(1), real(1.0)));
    EXPECT_EQ(literalInt(lit(42)), 42);
    EXPECT_EQ(literalInt(real(42.0)), std::nullopt);
    EXPECT_EQ(literalInt(index(1)), std::nullopt);
}

TEST(Expression, AFactorGoesIntoTheLiteralsWhereTheyCanTakeIt) {
    ExprPtr const x = argument("x", DT::F32);
    auto const scaled = [](ExprPtr const& e) { return scaledByLiteral(e, 2.0); };
    EXPECT_TRUE(equal(scaled(real(3.0)), real(6.0)));
    // c * y: the literal; x (c + d x x): both literals of the sum; a quotient's numerator.
    EXPECT_TRUE(equal(scaled(real(3.0) * x), real(6.0) * x));
    EXPECT_TRUE(equal(scaled(x * (real(1.5) + real(0.25) * (x * x))),
                      x * (real(3.0) + real(0.5) * (x * x))));
    EXPECT_TRUE(equal(scaled(real(1.0) / x), real(2.0) / x));
    EXPECT_TRUE(equal(scaled(unary(UnaryOp::Negate, real(3.0) * x)),
                      unary(UnaryOp::Negate, real(6.0) * x)));
    // No literal to take it (x, x * x), a sum with a term that has none, an integer literal.
    for (ExprPtr const& e : {x, x * x, x + real(1.0) * x - x, lit(3) * x, x / real(2.0)})
        EXPECT_EQ(scaled(e), nullptr);
    // A literal the factor would take out of f32's range stays as it is (2^(inf * 0) is NaN).
    EXPECT_EQ(scaled(real(3e38) * x), nullptr);
}

} // namespace
} // namespace kiln
