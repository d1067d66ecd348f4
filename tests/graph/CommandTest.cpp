// The Command C++ API: declared arguments, shapes and default strides, the type and shape of
// every tag, and each validation error of Command::add with its exact message.
#include "kiln/graph/Command.h"

#include "kiln/graph/ExpressionText.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using DT = DataType;

std::vector<std::string> texts(std::vector<ExprPtr> const& list) {
    std::vector<std::string> out;
    for (auto const& e : list)
        out.push_back(toString(e));
    return out;
}
using Texts = std::vector<std::string>;

// A [M, K] f16, B [K, N] f16, C [M, N] f32, x [N] f32, alpha f32; loaded as tags a, b, c and
// x1 ("x" is taken by the tensor).
struct Fixture {
    Command c{"fixture"};
    Fixture() {
        ExprPtr const m = c.size("M"), n = c.size("N"), k = c.size("K");
        c.tensor("A", DT::F16, {m, k})
            .tensor("B", DT::F16, {k, n})
            .tensor("C", DT::F32, {m, n})
            .tensor("x", DT::F32, {n})
            .scalar("alpha", DT::F32);
        c.loadTiled("A");
        c.loadTiled("B");
        c.loadTiled("C");
        c.loadTiled("x");
    }
};

// The message of the UserError `f` throws ("" if none).
template <class F>
std::string error(F&& f) {
    try {
        f();
    } catch (UserError const& e) {
        return e.message();
    }
    return "";
}

TEST(Command, DeclaresArguments) {
    Fixture const f;
    EXPECT_EQ(f.c.sizes(), (std::vector<std::string>{"M", "N", "K"}));
    ASSERT_EQ(f.c.tensors().size(), 4u);
    EXPECT_EQ(f.c.findTensor("B")->dtype, DT::F16);
    EXPECT_EQ(texts(f.c.findTensor("B")->shape), (Texts{"K", "N"}));
    EXPECT_EQ(f.c.findScalar("alpha")->dtype, DT::F32);
    EXPECT_EQ(f.c.findTensor("alpha"), nullptr);
    EXPECT_TRUE(f.c.isSize("K"));
    EXPECT_FALSE(f.c.isSize("A"));
    Command c;
    c.size("M");
    c.size("M");
    EXPECT_EQ(c.sizes().size(), 1u); // declared once
}

TEST(Command, DefaultStridesAreRowMajor) {
    Command c;
    ExprPtr const m = c.size("M"), n = c.size("N"), k = c.size("K");
    c.tensor("T", DT::F32, {m, n, k});
    EXPECT_EQ(texts(c.findTensor("T")->strides), (Texts{"K * N", "K", "1"}));
    c.tensor("U", DT::F32, {m, n}, {literal(1), m}); // column-major, given
    EXPECT_EQ(texts(c.findTensor("U")->strides), (Texts{"1", "M"}));
}

TEST(Command, TagsHaveTypesAndShapes) {
    Fixture f;
    auto const& values = f.c.values();
    EXPECT_EQ(values.at("a").dtype, DT::F16);
    EXPECT_EQ(texts(values.at("a").shape), (Texts{"M", "K"}));
    std::string const ab = f.c.multiply("a", "b");
    EXPECT_EQ(ab, "mm");
    EXPECT_EQ(values.at(ab).dtype, DT::F32); // half inputs accumulate in f32
    EXPECT_EQ(texts(values.at(ab).shape), (Texts{"M", "N"}));
    std::string const abT = f.c.multiply("b", "a", /*transposeA=*/true, /*transposeB=*/true);
    EXPECT_EQ(texts(values.at(abT).shape), (Texts{"N", "M"}));
    std::string const e = f.c.execute("alpha * mm + c");
    EXPECT_EQ(values.at(e).dtype, DT::F32);
    std::string const mask = f.c.execute("c < 0");
    EXPECT_EQ(values.at(mask).dtype, DT::I32); // no bool tensors
    std::string const half = f.c.execute("c * 2", DT::F16);
    EXPECT_EQ(values.at(half).dtype, DT::F16);
    std::string const r = f.c.reduce(e, Combine::Max);
    EXPECT_EQ(texts(values.at(r).shape), Texts{"M"});
    std::string const flat = f.c.loadLinear("C");
    EXPECT_EQ(texts(values.at(flat).shape), Texts{"M * N"});
    EXPECT_EQ(f.c.loadTiled("A"), "a1"); // fresh tags
    EXPECT_EQ(f.c.operations().size(), 12u);
    EXPECT_EQ(f.c.operations()[4].kind, CommandOpKind::Multiply);
    EXPECT_EQ(f.c.operations()[9].combine, Combine::Max);
}

TEST(Command, ArgumentErrors) {
    Command c;
    ExprPtr const m = c.size("M");
    c.tensor("A", DT::F32, {m});
    EXPECT_EQ(error([&] { c.tensor("1x", DT::F32, {m}); }), "'1x' is not a valid argument name");
    EXPECT_EQ(error([&] { c.scalar("a-b", DT::F32); }), "'a-b' is not a valid argument name");
    EXPECT_EQ(error([&] { c.tensor("A", DT::F32, {m}); }), "argument 'A' is declared twice");
    EXPECT_EQ(error([&] { c.scalar("M", DT::F32); }), "argument 'M' is declared twice");
    EXPECT_EQ(error([&] { c.tensor("T", DT::F32, {}); }), "tensor 'T' needs at least one axis");
    EXPECT_EQ(error([&] {
                  c.tensor("T", DT::F32, {m, m}, {literal(1)});
              }),
              "tensor 'T' has 2 axes but 1 strides");
    try {
        c.tensor("A", DT::F32, {m}, {}, SourceLocation{.file = "cmd.json", .line = 3, .column = 5});
        FAIL();
    } catch (UserError const& e) {
        EXPECT_EQ(std::string(e.what()), "cmd.json:3:5: error: argument 'A' is declared twice");
    }
}

TEST(Command, OperationErrors) {
    Fixture f;
    auto const add = [&](CommandOperation op) { return error([&] { f.c.add(std::move(op)); }); };
    using K = CommandOpKind;
    EXPECT_EQ(add({.kind = K::LoadTiled, .tag = "9x", .tensor = "A"}),
              "'9x' is not a valid tag (letters, digits and '_')");
    EXPECT_EQ(add({.kind = K::LoadTiled, .tag = "a", .tensor = "A"}), "tag 'a' is defined twice");
    EXPECT_EQ(add({.kind = K::LoadTiled, .tag = "alpha", .tensor = "A"}),
              "tag 'alpha' has the name of an argument");
    EXPECT_EQ(add({.kind = K::LoadTiled, .tag = "q", .tensor = "Q"}),
              "LoadTiled of unknown tensor 'Q'");
    EXPECT_EQ(add({.kind = K::LoadLinear, .tag = "q"}), "LoadLinear needs a tensor");
    EXPECT_EQ(add({.kind = K::StoreTiled, .tensor = "C"}), "StoreTiled needs a value");
    EXPECT_EQ(add({.kind = K::StoreTiled, .tensor = "C", .inputs = {"zz"}}),
              "StoreTiled value 'zz' is not defined by an earlier operation");
    EXPECT_EQ(add({.kind = K::StoreTiled, .tensor = "C", .inputs = {"a"}}),
              "StoreTiled of 'a' (M x K) into tensor 'C' (M x N)");
    EXPECT_EQ(add({.kind = K::StoreLinear, .tensor = "x", .inputs = {"c"}}),
              "StoreLinear of 'c' (M x N) into tensor 'x' (N)");
    EXPECT_EQ(add({.kind = K::Execute, .tag = "e"}), "Execute needs an expression");
    EXPECT_EQ(error([&] { f.c.execute("alpha * 2"); }),
              "Execute needs at least one tensor value in its expression");
    EXPECT_EQ(error([&] { f.c.execute("a + c"); }),
              "Execute mixes shapes: 'a' is M x K but 'c' is M x N");
    EXPECT_EQ(error([&] { f.c.execute("c + "); }),
              "in 'c + ' at offset 4: expression ends too soon");
    EXPECT_EQ(error([&] { f.c.execute("c + q"); }), "in 'c + q' at offset 4: unknown name 'q'");
    EXPECT_EQ(
        error([&] { f.c.execute("c * M"); }),
        "in 'c * M' at offset 4: 'M' is a size; element-wise expressions use values and scalars");
    EXPECT_EQ(error([&] { f.c.execute("C * 2"); }),
              "in 'C * 2' at offset 0: 'C' is a tensor; load it and use the load's tag");
    EXPECT_EQ(
        add({.kind = K::Execute, .tag = "e", .expression = tag("zz", DT::F32) + tag("c", DT::F32)}),
        "Execute uses 'zz', which no earlier operation defines");
    EXPECT_EQ(error([&] { f.c.multiply("a", "c"); }),
              "Multiply of f16 by f32: lhs and rhs need one type");
    EXPECT_EQ(error([&] { f.c.multiply("x1", "c"); }),
              "Multiply needs matrices: lhs 'x1' is N, rhs 'c' is M x N");
    EXPECT_EQ(error([&] { f.c.multiply("a", "a"); }),
              "Multiply: inner sizes differ: lhs 'a' gives M x K, rhs 'a' gives M x K");
    EXPECT_EQ(error([&] { f.c.multiply("a", "b", false, true); }),
              "Multiply: inner sizes differ: lhs 'a' gives M x K, rhs 'b' gives N x K");
    EXPECT_EQ(add({.kind = K::Multiply, .tag = "p", .inputs = {"a"}}), "Multiply needs a rhs");
    EXPECT_EQ(add({.kind = K::Multiply, .tag = "p", .inputs = {"a", "b", "c"}}),
              "Multiply takes exactly two inputs: lhs and rhs");
    EXPECT_EQ(error([&] { f.c.reduce("x1"); }),
              "Reduce of 'x1' (N): it reduces the last axis, so it needs at least two");
    EXPECT_EQ(error([&] { f.c.reduce("nothing"); }),
              "Reduce value 'nothing' is not defined by an earlier operation");
    // Nothing of the rejected operations was kept.
    EXPECT_EQ(f.c.operations().size(), 4u);
    EXPECT_EQ(f.c.values().size(), 4u);
}

TEST(Command, ErrorsCarryTheOperationsLocation) {
    Fixture f;
    try {
        f.c.add(
            {.kind = CommandOpKind::LoadTiled,
             .tag = "q",
             .tensor = "Q",
             .where = {.file = "cmd.json", .line = 9, .column = 7, .pointer = "/operations/4"}});
        FAIL();
    } catch (UserError const& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cmd.json:9:7: error: LoadTiled of unknown tensor 'Q' [at /operations/4]");
    }
}

TEST(Command, MultiplyResultType) {
    EXPECT_EQ(multiplyResultType(DT::F16, DT::F16), DT::F32);
    EXPECT_EQ(multiplyResultType(DT::BF16, DT::BF16), DT::F32);
    EXPECT_EQ(multiplyResultType(DT::F32, DT::F32), DT::F32);
    EXPECT_EQ(multiplyResultType(DT::F64, DT::F64), DT::F64);
    EXPECT_EQ(multiplyResultType(DT::I32, DT::I32), DT::I32);
}

} // namespace
} // namespace kiln
