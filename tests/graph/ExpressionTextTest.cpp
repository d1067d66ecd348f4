// Expression text: printing and parsing agree (print(parse(s)) is stable and keeps the value),
// precedence follows C, and each syntax error points at the offending character.
#include "kiln/graph/ExpressionText.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"

#include <gtest/gtest.h>
#include <map>
#include <random>

namespace kiln {
namespace {

using DT = DataType;

// M, N, K are sizes (i64), alpha an f32 scalar, h an f16 one; value#N is f32 for N < 100;
// "forbidden" is a name the resolver rejects with a message.
struct Names : NameResolver {
    ExprPtr name(std::string_view n) const override {
        if (n == "M" || n == "N" || n == "K")
            return argument(std::string(n), DT::I64);
        if (n == "alpha")
            return argument("alpha", DT::F32);
        if (n == "h")
            return argument("h", DT::F16);
        if (n == "forbidden")
            fail("'forbidden' may not be used here");
        return nullptr;
    }
    std::optional<DataType> dataType(Id dimension) const override {
        return dimension < 100 ? std::optional(DT::F32) : std::nullopt;
    }
};

struct Sizes : Environment {
    Value argument(expr::Argument const& a) const override {
        static std::map<std::string, Value> const values{
            {"M", Value::integer(100)}, {"N", Value::integer(7)}, {"K", Value::integer(-3)}};
        return values.at(a.name);
    }
};

ExprPtr parse(std::string_view text) {
    return parseExpression(text, Names{});
}
std::string reprint(std::string_view text) {
    return toString(parse(text));
}
std::int64_t value(std::string_view text) {
    return evaluateInt(*parse(text), Sizes{});
}

TEST(ExpressionText, CanonicalTextPrintsBackUnchanged) {
    for (char const* text : {
             "1 + 2 * 3",
             "(1 + 2) * 3",
             "M - N - K",
             "M - (N - K)",
             "M / (N / K)",
             "M * N % K",
             "M << 2 + 1",
             "(M << 2) + 1",
             "M & N | K ^ 1",
             "M & (N | K)",
             "M < N && N < K || M == 0",
             "M < N && (N < K || M == 0)",
             "M * -1",
             "-M",
             "- -M",
             "-(M + 1)",
             "!(M < N)",
             "~M",
             "min(M, N)",
             "max(M * 2, ceildiv(N, 64))",
             "gcd(M, 12)",
             "select(M < N, M, N)",
             "f16(alpha)",
             "i32(M) * 2",
             "abs(K)",
             "exp(alpha) + log(alpha) + sqrt(alpha) + tanh(alpha)",
             "size#3 * stride#4 + index#5",
             "value#7 * 2.0 + alpha",
             "1.5",
             "0.1",
             "1e-05",
             "inf",
             "nan",
             "h * 0.5 + 1",
             "(M != N) >= 0",
             "M >= N != K <= 0",
         })
        EXPECT_EQ(reprint(text), text);
}

TEST(ExpressionText, OtherSpellingsPrintCanonically) {
    EXPECT_EQ(reprint("  M+N *K "), "M + N * K");
    EXPECT_EQ(reprint("((M))"), "M");
    EXPECT_EQ(reprint("(M * N) * K"), "M * N * K");
    EXPECT_EQ(reprint("M * (N * K)"), "M * (N * K)");
    EXPECT_EQ(reprint("0x1F"), "31");
    EXPECT_EQ(reprint("2."), "2.0");
    EXPECT_EQ(reprint("1E3"), "1000.0");
    EXPECT_EQ(reprint("true"), "true");
    EXPECT_EQ(reprint("false"), "false");
    EXPECT_EQ(reprint("ceildiv ( M , 4 )"), "ceildiv(M, 4)");
    EXPECT_EQ(reprint("--M"), "- -M");
}

TEST(ExpressionText, PrecedenceAndAssociativityFollowC) {
    EXPECT_EQ(value("1 + 2 * 3"), 7);
    EXPECT_EQ(value("(1 + 2) * 3"), 9);
    EXPECT_EQ(value("10 - 4 - 3"), 3);
    EXPECT_EQ(value("100 / 10 / 5"), 2);
    EXPECT_EQ(value("2 * 7 % 4"), 2);
    EXPECT_EQ(value("1 << 2 + 1"), 8);
    EXPECT_EQ(value("7 & 3 == 3"), 1); // == binds tighter than &
    EXPECT_EQ(value("6 | 1 ^ 3"), 6 | (1 ^ 3));
    EXPECT_EQ(value("-2 * 3"), -6);
    EXPECT_EQ(value("- 2 * -3"), 6);
    EXPECT_EQ(value("M - N * K"), 121);
    EXPECT_EQ(value("0 || 1 && 0"), 0);
    EXPECT_EQ(value("1 < 2 == 1"), 1);
    EXPECT_EQ(value("select(K < 0, -K, K) + min(M, N)"), 10);
}

TEST(ExpressionText, LeavesAndTypes) {
    ExprPtr const e = parse("value#7 * alpha + size#2");
    EXPECT_EQ(resultType(*e), DT::F32);
    auto const* sum = std::get_if<expr::Binary>(e.get());
    ASSERT_TRUE(sum);
    EXPECT_TRUE(equal(sum->rhs, dimensionSize(2)));
    auto const* product = std::get_if<expr::Binary>(sum->lhs.get());
    ASSERT_TRUE(product);
    EXPECT_TRUE(equal(product->lhs, dataValue(7, DT::F32)));
    EXPECT_TRUE(equal(product->rhs, argument("alpha", DT::F32)));
    EXPECT_TRUE(equal(parse("-3"), literal(-3)));
    EXPECT_TRUE(equal(parse("bf16(2)"), convert(DT::BF16, literal(2))));
    EXPECT_EQ(resultType(*parse("h * 2")), DT::F16);
    EXPECT_EQ(literalInt(parse("-9223372036854775807 - 1")), std::nullopt); // a subtraction
    EXPECT_EQ(value("-9223372036854775807 - 1"), std::numeric_limits<std::int64_t>::min());
}

TEST(ExpressionText, PrintsTypedLiteralsWithTheirType) {
    EXPECT_EQ(toString(literal(Value::integer(5, DT::I32))), "i32(5)");
    EXPECT_EQ(toString(literal(Value::real(0.5, DT::F16))), "f16(0.5)");
    EXPECT_EQ(toString(literal(Value::real(2, DT::F32))), "f32(2.0)");
    EXPECT_EQ(toString(literal(Value::real(-2.5))), "-2.5");
    EXPECT_EQ(toString(literal(-7) * literal(2)), "-7 * 2");
    EXPECT_EQ(toString(literal(2) * literal(-7)), "2 * -7");
    EXPECT_EQ(toString(unary(UnaryOp::Negate, literal(-7))), "- -7");
    EXPECT_EQ(toString(ExprPtr{}), "<none>");
}

TEST(ExpressionText, NegatedLiteralsKeepTheirStructure) {
    // Negate(3) and the literal -3 print differently, so each parses back as itself.
    ExprPtr const negated = unary(UnaryOp::Negate, literal(3));
    EXPECT_EQ(toString(negated), "-(3)");
    EXPECT_TRUE(equal(parse("-(3)"), negated));
    EXPECT_TRUE(equal(parse("-3"), literal(-3)));
    EXPECT_EQ(toString(unary(UnaryOp::Negate, literal(0))), "-(0)");
    EXPECT_EQ(toString(unary(UnaryOp::Negate, literal(Value::real(0.5)))), "-(0.5)");
    EXPECT_EQ(reprint("- -0"), "-(0)"); // -0 is the literal 0
    EXPECT_EQ(reprint("-(0)"), "-(0)");
    EXPECT_EQ(reprint("-0"), "0");
}

TEST(ExpressionText, SmallestIntegerPrintsAndParses) {
    std::int64_t const smallest = std::numeric_limits<std::int64_t>::min();
    EXPECT_EQ(toString(literal(smallest)), "-9223372036854775808");
    EXPECT_TRUE(equal(parse("-9223372036854775808"), literal(smallest)));
    EXPECT_TRUE(equal(parse("- -9223372036854775808"), unary(UnaryOp::Negate, literal(smallest))));
    EXPECT_EQ(value("-9223372036854775808 / 2"), smallest / 2);
}

struct Failure {
    std::size_t offset;
    std::string message;
    bool operator==(Failure const&) const = default;
};
std::ostream& operator<<(std::ostream& os, Failure const& f) {
    return os << "at " << f.offset << ": " << f.message;
}

Failure failure(std::string_view text) {
    try {
        parse(text);
    } catch (ExpressionError const& e) {
        return {e.offset(), e.message()};
    }
    return {0, "(parsed)"};
}

TEST(ExpressionText, ErrorsPointAtTheOffendingCharacter) {
    EXPECT_EQ(failure(""), (Failure{0, "empty expression"}));
    EXPECT_EQ(failure("1 +"), (Failure{3, "expression ends too soon"}));
    EXPECT_EQ(failure("(1 + 2"), (Failure{6, "expected ')' to close '('"}));
    EXPECT_EQ(failure("1 + * 2"), (Failure{4, "unexpected '*'"}));
    EXPECT_EQ(failure("M + @"), (Failure{4, "unexpected '@'"}));
    EXPECT_EQ(failure("M + Q"), (Failure{4, "unknown name 'Q'"}));
    EXPECT_EQ(failure("2 * forbidden"), (Failure{4, "'forbidden' may not be used here"}));
    EXPECT_EQ(failure("min(1)"), (Failure{0, "min takes 2 arguments, not 1"}));
    EXPECT_EQ(failure("1 + abs(1, 2)"), (Failure{4, "abs takes 1 argument, not 2"}));
    EXPECT_EQ(failure("select(1, 2)"), (Failure{0, "select takes 3 arguments, not 2"}));
    EXPECT_EQ(failure("max(1, 2"), (Failure{8, "expected ')' to close the arguments of max"}));
    EXPECT_EQ(failure("foo(1)"), (Failure{0, "unknown function 'foo'"}));
    EXPECT_EQ(failure("3x"), (Failure{1, "unexpected 'x' after a number"}));
    EXPECT_EQ(failure("1 2"), (Failure{2, "unexpected '2' after the expression"}));
    EXPECT_EQ(failure("M)"), (Failure{1, "unexpected ')' after the expression"}));
    EXPECT_EQ(failure("1 + value#300"), (Failure{4, "value#300 names no data dimension"}));
    EXPECT_EQ(failure("size#"), (Failure{5, "'size#' needs a dimension id"}));
    EXPECT_EQ(failure("foo#3"),
              (Failure{0, "unknown graph leaf 'foo#' (size#, stride#, index#, value#)"}));
    EXPECT_EQ(failure("99999999999999999999"),
              (Failure{0, "integer literal is too large for i64"}));
    EXPECT_EQ(failure("9223372036854775808"), (Failure{0, "integer literal is too large for i64"}));
    // Only a '-' right before it makes 2^63 a literal; a subtraction or parentheses do not.
    EXPECT_EQ(failure("1 - 9223372036854775808"),
              (Failure{4, "integer literal is too large for i64"}));
    EXPECT_EQ(failure("- 9223372036854775808"),
              (Failure{2, "integer literal is too large for i64"}));
    EXPECT_EQ(failure("-(9223372036854775808)"),
              (Failure{2, "integer literal is too large for i64"}));
    EXPECT_EQ(failure("1 + 0x"), (Failure{4, "'0x' needs hexadecimal digits"}));
    EXPECT_EQ(failure("0x10000000000000000"), (Failure{0, "integer literal is too large"}));
}

// Random integer expressions: the printed text parses back to the same tree, with the same value.
TEST(ExpressionText, RandomExpressionsRoundTrip) {
    std::mt19937 random(20240611);
    auto const pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
    BinaryOp const ops[] = {
        BinaryOp::Add,       BinaryOp::Subtract,   BinaryOp::Multiply,   BinaryOp::Divide,
        BinaryOp::Modulo,    BinaryOp::CeilDivide, BinaryOp::Min,        BinaryOp::Max,
        BinaryOp::ShiftLeft, BinaryOp::BitwiseAnd, BinaryOp::BitwiseOr,  BinaryOp::BitwiseXor,
        BinaryOp::Less,      BinaryOp::Equal,      BinaryOp::LogicalAnd, BinaryOp::LogicalOr};
    std::function<ExprPtr(int)> make = [&](int depth) -> ExprPtr {
        if (depth == 0 || pick(4) == 0) {
            switch (pick(3)) {
            case 0:
                return literal(pick(21) - 10);
            case 1:
                return argument(std::string(1, "MNK"[pick(3)]), DT::I64);
            default:
                return literal(pick(5));
            }
        }
        switch (pick(8)) {
        case 0:
            return unary(pick(2) ? UnaryOp::Negate : UnaryOp::BitwiseNot, make(depth - 1));
        case 1:
            return select(make(depth - 1), make(depth - 1), make(depth - 1));
        default: {
            BinaryOp const op = ops[pick(std::size(ops))];
            ExprPtr rhs = make(depth - 1);
            if (op == BinaryOp::ShiftLeft)
                rhs = literal(pick(8));
            return binary(op, make(depth - 1), rhs);
        }
        }
    };
    auto const valueOf = [](ExprPtr const& e) -> std::optional<std::int64_t> {
        try {
            return evaluate(*e, Sizes{}).asInt();
        } catch (UserError const&) {
            return std::nullopt; // division by zero: both must fail
        }
    };
    for (int n = 0; n < 2000; ++n) {
        ExprPtr const e = make(5);
        std::string const text = toString(e);
        ExprPtr parsed;
        ASSERT_NO_THROW(parsed = parse(text)) << text;
        EXPECT_TRUE(equal(parsed, e)) << text << " parsed as " << toString(parsed);
        EXPECT_EQ(valueOf(parsed), valueOf(e)) << text;
    }
}

} // namespace
} // namespace kiln

TEST(ExpressionText, TextTooLargeOrTooDeepForTheWalksIsRefused) {
    std::string sum = "1";
    for (int i = 0; i < kiln::kMaxExpressionNodes; ++i)
        sum += " + 1";
    std::string nested(1000, '(');
    nested += "1" + std::string(1000, ')');
    auto message = [](std::string const& text) {
        try {
            kiln::parseExpression(text);
        } catch (kiln::ExpressionError const& e) {
            return e.message();
        }
        return std::string("parsed");
    };
    EXPECT_EQ(message(sum), "expression has more than 4096 operands and operators");
    EXPECT_EQ(message(nested), "expression nests deeper than 512 levels");
    EXPECT_EQ(message("((((1))))"), "parsed");
}
