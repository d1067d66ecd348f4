// A reduced value broadcast back along its row (docs/command.md, Execute): softmax, layer norm
// and RMS norm written as Commands, run by the reference interpreter on the translated graph and
// by the direct Command semantics, against values computed by hand from their formulas.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"
#include "kiln/graph/Translate.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace kiln;

namespace {

// An f32 Command over an M x N matrix X into Y of the same shape, with `arguments` besides and
// `operations` between the load of x and the store of y.
Command rowCommand(std::string const& arguments, std::string const& operations) {
    std::string const head = R"j({"command": "rows", "arguments": {
        "X": {"tensor": "f32", "shape": ["M", "N"]}, "Y": {"tensor": "f32", "shape": ["M", "N"]})j";
    std::string const load =
        R"j(}, "operations": [{"op": "LoadTiled", "tag": "x", "tensor": "X"}, )j";
    std::string const store = R"j(, {"op": "StoreTiled", "tensor": "Y", "value": "y"}]})j";
    return parseCommand(head + arguments + load + operations + store, "rows.json");
}

Command softmax() {
    return rowCommand("", R"j({"op": "Reduce", "tag": "m", "value": "x", "combine": "max"},
        {"op": "Execute", "tag": "e", "expr": "exp(x - m)"},
        {"op": "Reduce", "tag": "s", "value": "e"},
        {"op": "Execute", "tag": "y", "expr": "e / s"})j");
}

HostTensor matrix(std::int64_t m, std::int64_t n, std::vector<double> values) {
    return {DataType::F32, {m, n}, {n, 1}, std::move(values)};
}

// A per-column vector read as an M x N matrix (strides 0, 1).
HostTensor columns(std::int64_t m, std::vector<double> values) {
    auto const n = static_cast<std::int64_t>(values.size());
    return {DataType::F32, {m, n}, {0, 1}, std::move(values)};
}

Bindings bindings(std::int64_t m, std::int64_t n, std::vector<double> x) {
    Bindings b;
    b.sizes = {{"M", m}, {"N", n}};
    b.tensors["X"] = matrix(m, n, std::move(x));
    b.tensors["Y"] = matrix(m, n, std::vector<double>(static_cast<std::size_t>(m * n)));
    return b;
}

// Y as computed by the interpreter on the translated graph and by the reference.
std::pair<std::vector<double>, std::vector<double>> run(Command const& c, Bindings const& b) {
    Bindings interpreted = b, reference = b;
    interpret(translate(c), interpreted);
    runReference(c, reference);
    return {interpreted.tensors.at("Y").data, reference.tensors.at("Y").data};
}

void expectNear(std::vector<double> const& actual, std::vector<double> const& expected,
                double tolerance, std::string_view what) {
    ASSERT_EQ(actual.size(), expected.size()) << what;
    for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(actual[i], expected[i], tolerance) << what << ", element " << i;
}

} // namespace

TEST(Broadcast, AReducedValueOfOneAxisFewerGivesTheFullShape) {
    Command c = rowCommand("", R"j({"op": "Reduce", "tag": "s", "value": "x"},
        {"op": "Execute", "tag": "y", "expr": "s + x"})j");
    auto const& y = c.values().at("y");
    ASSERT_EQ(y.shape.size(), 2u);
    EXPECT_EQ(toString(y.shape[0]), "M");
    EXPECT_EQ(toString(y.shape[1]), "N");
}

TEST(Broadcast, SoftmaxOfEachRow) {
    // Rows whose softmax is known: [0, ln 2, ln 3] gives [1, 2, 3] / 6, equal elements 1/3 each,
    // and so do large ones, whose exp alone overflows f32 (e^100 > 3.4e38).
    double const l2 = std::log(2.0), l3 = std::log(3.0);
    Bindings const b = bindings(3, 3, {0, l2, l3, 5, 5, 5, 100, 100, 100});
    std::vector<double> const expected{1 / 6.0, 2 / 6.0, 3 / 6.0, 1 / 3.0, 1 / 3.0,
                                       1 / 3.0, 1 / 3.0, 1 / 3.0, 1 / 3.0};
    auto const [interpreted, reference] = run(softmax(), b);
    expectNear(interpreted, expected, 1e-6, "interpreter");
    expectNear(reference, expected, 1e-6, "reference");

    // The same rows without the max subtracted: the last row is not a number.
    Command naive = rowCommand("", R"j({"op": "Execute", "tag": "e", "expr": "exp(x)"},
        {"op": "Reduce", "tag": "s", "value": "e"},
        {"op": "Execute", "tag": "y", "expr": "e / s"})j");
    EXPECT_TRUE(std::isnan(run(naive, b).first[8]));
}

TEST(Broadcast, LayerNormOfEachRow) {
    Command c = rowCommand(R"j(, "G": {"tensor": "f32", "shape": ["M", "N"], "strides": ["0", "1"]},
        "B": {"tensor": "f32", "shape": ["M", "N"], "strides": ["0", "1"]},
        "eps": {"scalar": "f32"})j",
                           R"j({"op": "Reduce", "tag": "mean", "value": "x", "combine": "mean"},
        {"op": "Execute", "tag": "d", "expr": "x - mean"},
        {"op": "Execute", "tag": "dd", "expr": "d * d"},
        {"op": "Reduce", "tag": "var", "value": "dd", "combine": "mean"},
        {"op": "LoadTiled", "tag": "gamma", "tensor": "G"},
        {"op": "LoadTiled", "tag": "beta", "tensor": "B"},
        {"op": "Execute", "tag": "y", "expr": "d * rsqrt(var + eps) * gamma + beta"})j");
    // Row [1, 2, 3, 4]: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25. Row [-2, -2,
    // 2, 2]: mean 0, variance 4.
    Bindings b = bindings(2, 4, {1, 2, 3, 4, -2, -2, 2, 2});
    b.tensors["G"] = columns(2, {1, 2, 0.5, -1});
    b.tensors["B"] = columns(2, {0, 0, 1, 10});
    double const eps = 0.25;
    b.scalars["eps"] = Value::real(eps, DataType::F32);
    std::vector<double> const gamma{1, 2, 0.5, -1}, beta{0, 0, 1, 10};
    std::vector<double> expected;
    for (double x : {1.0, 2.0, 3.0, 4.0})
        expected.push_back((x - 2.5) / std::sqrt(1.25 + eps));
    for (double x : {-2.0, -2.0, 2.0, 2.0})
        expected.push_back(x / std::sqrt(4 + eps));
    for (std::size_t i = 0; i < expected.size(); ++i)
        expected[i] = expected[i] * gamma[i % 4] + beta[i % 4];
    auto const [interpreted, reference] = run(c, b);
    expectNear(interpreted, expected, 1e-6, "interpreter");
    expectNear(reference, expected, 1e-6, "reference");
}

TEST(Broadcast, RmsNormOfEachRow) {
    Command c = rowCommand(R"j(, "G": {"tensor": "f32", "shape": ["M", "N"], "strides": ["0", "1"]},
        "eps": {"scalar": "f32"})j",
                           R"j({"op": "Execute", "tag": "squares", "expr": "x * x"},
        {"op": "Reduce", "tag": "ms", "value": "squares", "combine": "mean"},
        {"op": "LoadTiled", "tag": "gamma", "tensor": "G"},
        {"op": "Execute", "tag": "y", "expr": "x * rsqrt(ms + eps) * gamma"})j");
    // Row [3, 4]: mean square 12.5; row [1, -1]: 1.
    Bindings b = bindings(2, 2, {3, 4, 1, -1});
    b.tensors["G"] = columns(2, {2, 0.5});
    double const eps = 0.5;
    b.scalars["eps"] = Value::real(eps, DataType::F32);
    std::vector<double> const expected{3 / std::sqrt(13.0) * 2, 4 / std::sqrt(13.0) * 0.5,
                                       1 / std::sqrt(1.5) * 2, -1 / std::sqrt(1.5) * 0.5};
    auto const [interpreted, reference] = run(c, b);
    expectNear(interpreted, expected, 1e-6, "interpreter");
    expectNear(reference, expected, 1e-6, "reference");
}

// The shipped f16 Commands: the interpreter on the translated graph agrees with the reference at
// odd sizes, and each softmax row sums to 1 within f16's rounding of its elements.
TEST(Broadcast, ShippedNormalizationsAgreeWithTheReference) {
    for (std::string const name : {"softmax-f16", "layernorm-f16", "rmsnorm-f16"}) {
        Command const c = loadCommand(KILN_SOURCE_DIR "/examples/" + name + ".json");
        Bindings interpreted = randomBindings(c, {{"M", 7}, {"N", 33}, {"eps", 1e-5}}, 11);
        Bindings reference = interpreted;
        interpret(translate(c), interpreted);
        runReference(c, reference);
        EXPECT_LE(maxRelativeError(interpreted.tensors.at("Y"), reference.tensors.at("Y")), 1e-3)
            << name;
        if (name == "softmax-f16")
            for (std::size_t row = 0; row < 7; ++row) {
                double sum = 0;
                for (std::size_t j = 0; j < 33; ++j)
                    sum += reference.tensors.at("Y").data[row * 33 + j];
                EXPECT_NEAR(sum, 1.0, 33 * 1e-3) << "row " << row;
            }
    }
}
