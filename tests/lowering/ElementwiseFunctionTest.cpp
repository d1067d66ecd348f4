// ElementwiseFunctionTest.cpp: every function of ElementwiseFunctions.h, end to end: a Command
// that calls it is accepted, the interpreter and the direct Command semantics compute the row's
// host value, and its kernel is emitted for NVIDIA (assembled by ptxas) and AMD (assembled by the
// build's assembler). A new row is tested here without a new test.
#include "LoweringTestSupport.h"
#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Ptxas.h"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <regex>

namespace kiln::test {
namespace {

Command commandCalling(std::string_view function) {
    std::string const text = R"json({"command": "call",
  "arguments": {"X": {"tensor": "f32", "shape": ["N"]}, "Y": {"tensor": "f32", "shape": ["N"]}},
  "operations": [
    {"op": "LoadLinear", "tag": "x", "tensor": "X"},
    {"op": "Execute", "tag": "y", "expr": "FUNCTION(x)"},
    {"op": "StoreLinear", "tensor": "Y", "value": "y"}
  ]})json";
    std::string const call =
        std::regex_replace(text, std::regex("FUNCTION"), std::string(function));
    return parseCommand(call, "call.json");
}

// Positive inputs (log and sqrt are defined there), as f32 values.
Bindings inputs(std::int64_t n) {
    Bindings b;
    b.sizes["N"] = n;
    std::vector<double> x;
    for (std::int64_t i = 0; i < n; ++i)
        x.push_back(roundTo(DataType::F32, 0.125 + 0.375 * static_cast<double>(i)));
    b.tensors["X"] = {DataType::F32, {n}, {1}, x};
    b.tensors["Y"] = {DataType::F32, {n}, {1}, std::vector<double>(static_cast<std::size_t>(n))};
    return b;
}

class ElementwiseFunction : public ::testing::TestWithParam<UnaryOpInfo> {};

TEST_P(ElementwiseFunction, InterpretedAndReferenceGiveTheHostValue) {
    UnaryOpInfo const& f = GetParam();
    Command const command = commandCalling(f.name);
    Bindings interpreted = inputs(20), reference = inputs(20);
    interpret(translate(command), interpreted);
    runReference(command, reference);
    for (std::size_t i = 0; i < 20; ++i) {
        double const x = reference.tensors.at("X").data[i];
        double const expected = roundTo(DataType::F32, f.onFloat(x));
        EXPECT_EQ(reference.tensors.at("Y").data[i], expected) << f.name << "(" << x << ")";
        EXPECT_EQ(interpreted.tensors.at("Y").data[i], expected) << f.name << "(" << x << ")";
    }
}

TEST_P(ElementwiseFunction, AnExpansionComputesTheHostValue) {
    UnaryOpInfo const& f = GetParam();
    if (f.expansion.empty())
        GTEST_SKIP() << f.name << " has instructions in each code generator";
    for (double x : {-30.0, -2.5, -0.5, 0.0, 0.25, 1.0, 3.0, 30.0}) {
        double const written = evaluate(*expansion(f.op, literal(Value::real(x))), Environment{}).f;
        double const host = f.onFloat(x);
        if (!std::isfinite(host)) { // outside the domain (rsqrt of 0 or less): the same inf, NaN
            EXPECT_TRUE(std::isnan(host) ? std::isnan(written) : written == host)
                << f.name << "(" << x << ") = " << written << ", not " << host;
            continue;
        }
        EXPECT_NEAR(written, host, 1e-12 * std::max(1.0, std::abs(host)))
            << f.name << "(" << x << ")";
    }
}

TEST_P(ElementwiseFunction, KernelsAssembleForNvidiaAndAmd) {
    UnaryOpInfo const& f = GetParam();
    Command const command = commandCalling(f.name);
    rules::Pipeline const pipeline =
        rules::loadPipeline(sourcePath("rules/elementwise.pipeline.json"));
    for (std::string const target : {"sm_80", "gfx942"}) {
        SCOPED_TRACE(target);
        KernelGraph graph = translate(command);
        rules::lower(pipeline, graph, {.arch = rules::archFacts(target)});
        auto const kernel =
            lowering::emitKernel(graph, {.target = target, .schedule = pipeline.defaults});
        if (lowering::targetVendor(target) == arch::Vendor::Nvidia) {
            auto const assembled = runtime::assemblePtx(kernel.code, target);
            if (!assembled.ok() && !runtime::findPtxas().ok())
                continue; // no ptxas on this machine
            EXPECT_TRUE(assembled.ok()) << assembled.error().message() << kernel.code;
        } else {
            auto assembler = runtime::assemblerFor(target);
            if (!assembler.ok())
                continue; // no AMDGCN assembler in this build
            auto const code = (*assembler)->assemble(kernel.code, target, kernel.entry + ".s");
            EXPECT_TRUE(code.ok()) << code.error().message() << kernel.code;
        }
    }
}

std::vector<UnaryOpInfo> functions() {
    std::vector<UnaryOpInfo> out;
    for (auto const& f : unaryOps)
        if (f.call)
            out.push_back(f);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Table, ElementwiseFunction, ::testing::ValuesIn(functions()),
                         [](auto const& row) { return std::string(row.param.name); });

TEST(ElementwiseFunction, SigmoidValues) {
    auto const sigmoid = [](double x) {
        return apply(UnaryOp::Sigmoid, Value::real(x, DataType::F32)).f;
    };
    EXPECT_EQ(sigmoid(0), 0.5);
    EXPECT_EQ(sigmoid(2), roundTo(DataType::F32, 0.8807970779778823));
    EXPECT_EQ(sigmoid(-2), roundTo(DataType::F32, 0.11920292202211755));
    EXPECT_EQ(sigmoid(-200), 0.0);
    EXPECT_EQ(toString(parseExpression("sigmoid(1.5) * 2")), "sigmoid(1.5) * 2");
}

} // namespace
} // namespace kiln::test
