// ExpressionTest.cpp: expression codegen for every type and target, assembled and read back.
#include "AmdTestSupport.h"
#include "kiln/amdgcn/ExpressionGenerator.h"

#include <gtest/gtest.h>

namespace kiln::amdgcn {
namespace {

using Body = std::function<ExprPtr(ExprPtr, ExprPtr)>;

struct Case {
    std::string name;
    DataType type;
    Body body;
};

ExprPtr bin(BinaryOp op, ExprPtr a, ExprPtr b) {
    return binary(op, std::move(a), std::move(b));
}

ExprPtr operator^(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::BitwiseXor, std::move(a), std::move(b));
}
ExprPtr operator|(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::BitwiseOr, std::move(a), std::move(b));
}
ExprPtr operator&(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::BitwiseAnd, std::move(a), std::move(b));
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (DataType t : {DataType::I32, DataType::I64, DataType::F32, DataType::F64, DataType::F16,
                       DataType::BF16}) {
        std::string const n(name(t));
        out.push_back({n + "_arith", t, [](ExprPtr a, ExprPtr b) {
                           return (a + b) * (a - b) + bin(BinaryOp::Min, a, b) -
                                  bin(BinaryOp::Max, a, literal(3));
                       }});
        out.push_back({n + "_select", t, [](ExprPtr a, ExprPtr b) {
                           return select(bin(BinaryOp::LogicalAnd, bin(BinaryOp::Less, a, b),
                                             bin(BinaryOp::NotEqual, a, literal(0))),
                                         a, b);
                       }});
        out.push_back({n + "_divide", t, [](ExprPtr a, ExprPtr) {
                           return a / literal(7) + a % literal(8) + ceilDivide(a, literal(3));
                       }});
        out.push_back({n + "_convert", t, [](ExprPtr a, ExprPtr) {
                           return convert(DataType::F32, a) * convert(DataType::F32, a) +
                                  convert(DataType::F64, a) + convert(DataType::I32, a) +
                                  convert(DataType::I64, a);
                       }});
        if (isFloat(t)) {
            out.push_back({n + "_unary", t, [](ExprPtr a, ExprPtr b) {
                               return unary(UnaryOp::Exp, a) + unary(UnaryOp::Log, b) +
                                      unary(UnaryOp::Sqrt, a) * unary(UnaryOp::Tanh, b) -
                                      unary(UnaryOp::Abs, a) + unary(UnaryOp::Negate, b) + a / b;
                           }});
        } else {
            out.push_back({n + "_bits", t, [](ExprPtr a, ExprPtr b) {
                               ExprPtr const mixed = (bin(BinaryOp::ShiftLeft, a, literal(3)) ^ b) |
                                                     (bin(BinaryOp::ShiftRight, b, literal(2)) &
                                                      unary(UnaryOp::BitwiseNot, a));
                               return mixed + unary(UnaryOp::Abs, a) + unary(UnaryOp::Negate, b) +
                                      a * literal(1000);
                           }});
        }
    }
    // i32 division by a value known only in the kernel.
    out.push_back({"i32_divide_runtime", DataType::I32,
                   [](ExprPtr a, ExprPtr b) { return a / b + a % b + ceilDivide(a, b); }});
    // i64 division by a value known only in the kernel (an f64 quotient and one correction).
    // One per kernel: the test's kernels keep a whole expression's registers until it ends.
    out.push_back(
        {"i64_divide_runtime", DataType::I64, [](ExprPtr a, ExprPtr b) { return a / b; }});
    out.push_back(
        {"i64_modulo_runtime", DataType::I64, [](ExprPtr a, ExprPtr b) { return a % b; }});
    out.push_back({"i64_ceildiv_runtime", DataType::I64,
                   [](ExprPtr a, ExprPtr b) { return ceilDivide(a, b); }});
    // i64 division by large and negative constants (the 64-bit multiply-high).
    out.push_back({"i64_divide_large", DataType::I64, [](ExprPtr a, ExprPtr) {
                       return a / literal(1000000007) + a / literal(-12) + a / literal(64);
                   }});
    return out;
}

class ExpressionCodegen : public ::testing::TestWithParam<std::string> {};

TEST_P(ExpressionCodegen, AssemblesAndDisassemblesToTheSameInstructions) {
    std::string const target = GetParam();
    for (Case const& c : cases()) {
        SCOPED_TRACE(c.name + " on " + target);
        test::TestKernel const k = test::elementwiseKernel(target, "expr_" + c.name, c.type, c.body,
                                                           2, SchedulerKind::RoundRobin);
        std::string why;
        std::string const code = test::assemble(k.assembly, target, why);
        if (code.empty()) {
            if (why == "assembly failed")
                FAIL() << k.assembly;
            GTEST_SKIP() << why;
        }
        std::vector<std::string> const back = test::disassemble(code, target, why);
        if (back.empty())
            GTEST_SKIP() << why;
        test::expectSameInstructions(back, test::instructionsOf(k.assembly));
        Target const t = Target::named(target);
        EXPECT_LE(k.vgprs, t.vgprs());
        EXPECT_LE(k.sgprs, t.sgprs());
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, ExpressionCodegen, ::testing::ValuesIn(test::kTargets));

TEST(ExpressionCodegen, DivisionByAConstantMultipliesInsteadOfDividing) {
    test::TestKernel const k = test::elementwiseKernel(
        "gfx90a", "div7", DataType::I32, [](ExprPtr a, ExprPtr) { return a / literal(7); });
    EXPECT_NE(k.assembly.find("v_mul_hi_i32"), std::string::npos);
    EXPECT_EQ(k.assembly.find("v_rcp"), std::string::npos);
    test::TestKernel const p = test::elementwiseKernel(
        "gfx90a", "div8", DataType::I32, [](ExprPtr a, ExprPtr) { return a / literal(8); });
    EXPECT_EQ(p.assembly.find("v_mul_hi"), std::string::npos);
    EXPECT_NE(p.assembly.find("v_ashrrev_i32 v"), std::string::npos);
}

TEST(ExpressionCodegen, LiteralsFold) {
    Context c = test::makeContext("gfx90a");
    Stream s;
    Builder b(c, s);
    ExpressionGenerator g(b, {});
    Value const v = g.generate(literal(6) * literal(7) + literal(1));
    EXPECT_TRUE(v.isLiteral());
    EXPECT_EQ(v.literalValue(), 43);
    EXPECT_TRUE(s.empty());
}

TEST(ExpressionCodegen, UnsupportedSaysWhat) {
    EXPECT_THROW(
        test::elementwiseKernel("gfx90a", "gcd", DataType::I32,
                                [](ExprPtr a, ExprPtr b) { return binary(BinaryOp::Gcd, a, b); }),
        UserError);
}

} // namespace
} // namespace kiln::amdgcn
