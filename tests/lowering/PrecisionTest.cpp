// PrecisionTest.cpp: the rule of lowering/Precision.h (which Assigns may use fast approximate
// instructions), the rewrite of 1 +- tanh, the instructions each precision writes, and, on the
// CPU, the approximate forms' documented error bounds carried through a tanh-GELU and a tanh to
// the f16 result and the comparison the checks make (maxRelativeError: relative to
// max(|reference|, 1e-2 * the largest |reference|), within 1e-2 for 16-bit results).
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R PrecisionGolden   (then review the diff)
#include "kiln/lowering/Precision.h"

#include "../GoldenFile.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/Bindings.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace kiln::test {
namespace {

Command precisionCommand() {
    return loadCommand(sourcePath("tests/lowering/commands/tanh-f16-and-f32.json"));
}

// The precision of each Assign of `graph`, by the name of the value it computes.
std::map<std::string, Precision> precisions(KernelGraph const& graph) {
    std::map<std::string, Precision> out;
    for (Id op : graph.control.nodes())
        if (graph.control.node(op).kind == OperationKind::Assign) {
            auto const dest = graph.mapping.find(op, role::dest);
            if (!dest || !graph.coordinates.node(*dest).dtype)
                continue;
            std::string const name = graph.coordinates.node(*dest).name;
            Precision const p = lowering::assignPrecision(graph, op);
            // Several Assigns of one value (a loop's): the value is exact if any is.
            if (auto [it, fresh] = out.emplace(name, p); !fresh && p == Precision::Exact)
                it->second = p;
        }
    return out;
}

TEST(PrecisionRule, SixteenBitValuesAreApproximateF32ResultsExact) {
    auto const p = precisions(translate(precisionCommand()));
    EXPECT_EQ(p.at("h"), Precision::Approximate); // f16
    EXPECT_EQ(p.at("f"), Precision::Exact);       // stored as f32
    EXPECT_EQ(p.at("g"), Precision::Approximate);
}

Command chain(std::string const& stores) {
    return parseCommand(R"json({"command": "chain",
  "arguments": {"X": {"tensor": "f32", "shape": ["N"]}, "Y": {"tensor": "f16", "shape": ["N"]},
                "Z": {"tensor": "f32", "shape": ["N"]}, "W": {"tensor": "f16", "shape": ["N"]}},
  "operations": [
    {"op": "LoadLinear", "tag": "x", "tensor": "X"},
    {"op": "Execute", "tag": "s", "expr": "tanh(x) / (1.0 + x * x)"},
    {"op": "Execute", "tag": "y", "dtype": "f16", "expr": "s * 2.0"},
    {"op": "StoreLinear", "tensor": "Y", "value": "y"})json" +
                            stores + "]}",
                        "chain.json");
}

TEST(PrecisionRule, AnF32IntermediateFollowsWhatBecomesOfIt) {
    // Read only by an f16 Assign: approximate.
    EXPECT_EQ(precisions(translate(chain(""))).at("s"), Precision::Approximate);
    // Also stored into an f16 tensor: still approximate.
    EXPECT_EQ(
        precisions(translate(chain(R"(, {"op": "StoreLinear", "tensor": "W", "value": "s"})")))
            .at("s"),
        Precision::Approximate);
    // Also stored as f32: exact, and so is nothing else that depends on it (y is f16).
    auto const stored =
        precisions(translate(chain(R"(, {"op": "StoreLinear", "tensor": "Z", "value": "s"})")));
    EXPECT_EQ(stored.at("s"), Precision::Exact);
    EXPECT_EQ(stored.at("y"), Precision::Approximate);
    // Read by an f32 Assign that is stored as f32: exact.
    EXPECT_EQ(precisions(translate(chain(R"(, {"op": "Execute", "tag": "z", "expr": "s + x"},
        {"op": "StoreLinear", "tensor": "Z", "value": "z"})")))
                  .at("s"),
              Precision::Exact);
}

TEST(PrecisionRule, AccumulatorsAndProductsStayExact) {
    // The fused GEMM epilogue: h = ab + bias (f32) read only by the f16 GELU: approximate; the
    // K loop's accumulator (ab = ab + product, an Assign into itself) and the product: exact.
    KernelGraph const graph = lowered("gemm-bias-gelu-f16.json", "gemm.pipeline.json");
    auto const p = precisions(graph);
    EXPECT_EQ(p.at("h"), Precision::Approximate);
    EXPECT_EQ(p.at("g"), Precision::Approximate);
    std::size_t exact = 0;
    for (auto const& [name, precision] : p)
        exact += precision == Precision::Exact;
    EXPECT_GE(exact, 1u) << "the accumulator's Assign";
    // A value reduced in f32 is exact though its result is f16 further on.
    Command const reduced = parseCommand(R"json({"command": "reduced",
  "arguments": {"X": {"tensor": "f32", "shape": ["M", "N"]}, "Y": {"tensor": "f16", "shape": ["M"]}},
  "operations": [
    {"op": "LoadTiled", "tag": "x", "tensor": "X"},
    {"op": "Execute", "tag": "t", "expr": "tanh(x)"},
    {"op": "Reduce", "tag": "r", "value": "t"},
    {"op": "Execute", "tag": "y", "dtype": "f16", "expr": "r"},
    {"op": "StoreTiled", "tensor": "Y", "value": "y"}]})json",
                                         "reduced.json");
    EXPECT_EQ(precisions(translate(reduced)).at("t"), Precision::Exact);
}

// `text` over x, at x = v, in double.
double valueAt(std::string const& text, double v, Precision precision) {
    struct X : NameResolver {
        ExprPtr x;
        ExprPtr name(std::string_view n) const override { return n == "x" ? x : nullptr; }
    } names;
    names.x = literal(Value::real(v, DataType::F64));
    ExprPtr const e = lowering::forPrecision(parseExpression(text, names), precision);
    return evaluate(*e, Environment{}).f;
}

TEST(PrecisionRewrite, OnePlusOrMinusTanhBecomesAQuotientOfTheSameValue) {
    struct X : NameResolver {
        ExprPtr name(std::string_view n) const override {
            return n == "u" ? argument("u", DataType::F32) : nullptr;
        }
    } names;
    auto const rewritten = [&](std::string const& text) {
        return toString(
            lowering::forPrecision(parseExpression(text, names), Precision::Approximate));
    };
    // The literal factors folded too (foldFactors): 0.5 * 2 and -2 * 0.5.
    EXPECT_EQ(rewritten("0.5 * u * (1.0 + tanh(0.5 * u))"), "u * (1.0 / (1.0 + exp(-1.0 * u)))");
    EXPECT_EQ(rewritten("tanh(u) + 1.0"), "2.0 / (1.0 + exp(-2.0 * u))");
    EXPECT_EQ(rewritten("1.0 - tanh(u)"), "2.0 / (1.0 + exp(2.0 * u))");
    EXPECT_EQ(rewritten("tanh(u) - 1.0"), "tanh(u) - 1.0"); // not a sum that cancels near -1
    ExprPtr const e = parseExpression("1.0 + tanh(u)", names);
    EXPECT_EQ(lowering::forPrecision(e, Precision::Exact), e);
    for (std::string const text :
         {"1.0 + tanh(x)", "tanh(x) + 1.0", "1.0 - tanh(x)",
          "0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))"})
        for (double v : {-40.0, -6.0, -1.5, -0.01, 0.0, 0.3, 2.0, 9.0, 40.0}) {
            // The original cancels where tanh nears -1 (1): compare against the size of its
            // terms, 1 (the GELU's: |x|).
            double const exact = valueAt(text, v, Precision::Exact);
            EXPECT_NEAR(valueAt(text, v, Precision::Approximate), exact,
                        1e-15 * std::max(1.0, std::abs(v)))
                << text << " at " << v;
        }
}

TEST(PrecisionRewrite, ALiteralTimesAPolynomialInXIsXTimesOneOfADegreeLess) {
    struct Names : NameResolver {
        ExprPtr name(std::string_view n) const override {
            return n == "u" ? argument("u", DataType::F32)
                            : (n == "v" ? argument("v", DataType::F32) : nullptr);
        }
    } names;
    auto const approximate = [&](std::string const& text) {
        return toString(
            lowering::forPrecision(parseExpression(text, names), Precision::Approximate));
    };
    // The tanh-GELU's exponent: c (u + a u^3) -> u (c + c a u^2).
    EXPECT_EQ(approximate("exp(-2.0 * (u + 0.5 * u * u * u))"), "exp(u * (-2.0 + -1.0 * (u * u)))");
    EXPECT_EQ(approximate("3.0 * (u * u - 2.0 * u)"), "u * (3.0 * u + -6.0)");
    // Not a polynomial without a constant term in one x, or of degree 1: as foldFactors left it.
    for (std::string const text : {"3.0 * (u + 1.0)", "3.0 * (u + v * v)", "3.0 * (u + u)",
                                   "2.0 * (u * u)", "1e30 * (u + 1e20 * u * u)"})
        EXPECT_EQ(approximate(text), toString(lowering::foldFactors(parseExpression(text, names))))
            << text;
}

TEST(PrecisionRewrite, LiteralFactorsOfAnF32ProductFoldIntoOne) {
    struct Names : NameResolver {
        ExprPtr name(std::string_view n) const override {
            return n == "u"   ? argument("u", DataType::F32)
                   : n == "i" ? argument("i", DataType::I64)
                   : n == "h" ? argument("h", DataType::F16)
                              : nullptr;
        }
    } names;
    auto const folded = [&](std::string const& text) {
        return toString(lowering::foldFactors(parseExpression(text, names)));
    };
    EXPECT_EQ(folded("2.0 * (3.0 * u)"), "6.0 * u");
    EXPECT_EQ(folded("0.5 * u * (2.0 / (u + 1.0))"), "u * (1.0 / (u + 1.0))");
    EXPECT_EQ(folded("-(0.25 * u) * u"), "-0.25 * (u * u)");
    EXPECT_EQ(folded("exp(-2.0 * (0.5 * u)) + 1.0"), "exp(-1.0 * u) + 1.0");
    // One literal factor: nothing to fold, the same expression.
    ExprPtr const one = parseExpression("2.0 * u / (u + 3.0)", names);
    EXPECT_EQ(lowering::foldFactors(one), one);
    // Integers, 16-bit products (rounded at each step) and a factor 0 stay as they are.
    for (std::string const text : {"2 * (3 * i)", "2.0 * (3.0 * h)", "0.0 * (2.0 * u)"}) {
        ExprPtr const e = parseExpression(text, names);
        EXPECT_EQ(toString(lowering::foldFactors(e)), toString(e)) << text;
    }
}

// `text` over x, at x = v, in f32.
double valueInF32At(std::string const& text, float v, Precision precision) {
    struct X : NameResolver {
        ExprPtr x;
        ExprPtr name(std::string_view n) const override { return n == "x" ? x : nullptr; }
    } names;
    names.x = literal(Value::real(v, DataType::F32));
    ExprPtr const e = lowering::forPrecision(parseExpression(text, names), precision);
    return evaluate(*e, Environment{}).f;
}

TEST(PrecisionRewrite, FoldedFactorsMoveAnF32GeluByRoundingsOnly) {
    // The GELU in f32, rewritten and folded, against the same in f32 as written: apart where
    // the written one cancels (tanh near -1: its error is of the size of its terms, |x|), within
    // a few f32 roundings of |x|.
    std::string const gelu = "0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))";
    for (float v : {-40.0f, -6.0f, -1.5f, -0.01f, 0.0f, 0.3f, 2.0f, 9.0f, 40.0f})
        EXPECT_NEAR(valueInF32At(gelu, v, Precision::Approximate),
                    valueInF32At(gelu, v, Precision::Exact), 1e-6 * std::max(1.0f, std::abs(v)))
            << v;
}

lowering::EmittedKernel emitted(std::string const& target) {
    KernelGraph graph = translate(precisionCommand());
    rules::Pipeline const pipeline =
        rules::loadPipeline(sourcePath("rules/elementwise.pipeline.json"));
    rules::lower(pipeline, graph, {.arch = rules::archFacts(target)});
    return lowering::emitKernel(graph, {.target = target, .schedule = pipeline.defaults});
}

std::size_t count(std::string const& text, std::string const& what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size())
        ++n;
    return n;
}

TEST(PrecisionKernel, PtxWritesTheApproximateInstructionsForTheF16ResultsOnly) {
    std::string const ptx = emitted("sm_90a").code;
    // Each workitem computes 4 elements of each value: h and f with tanh and a quotient, g (the
    // GELU, rewritten) with an exponential and a reciprocal.
    EXPECT_EQ(count(ptx, "tanh.approx.f32"), 4u) << ptx;
    EXPECT_EQ(count(ptx, "div.full.f32"), 4u) << ptx;
    EXPECT_EQ(count(ptx, "rcp.approx.ftz.f32"), 4u) << ptx;
    EXPECT_EQ(count(ptx, "ex2.approx.ftz.f32"), 4u) << ptx;
    // f: the exact tanh (ex2, a correctly rounded reciprocal) and a correctly rounded quotient.
    EXPECT_EQ(count(ptx, "rcp.rn.f32"), 4u) << ptx;
    EXPECT_EQ(count(ptx, "div.rn.f32"), 4u) << ptx;
    for (std::string const target : {"sm_80", "sm_90a"}) {
        auto const assembled = runtime::assemblePtx(emitted(target).code, target);
        if (!assembled.ok() && !runtime::findPtxas().ok())
            GTEST_SKIP() << "no ptxas on this machine";
        EXPECT_TRUE(assembled.ok()) << target << ": " << assembled.error().message();
    }
}

TEST(PrecisionGolden, Ptx) {
    expectGoldenFile("tests/golden/ptx/tanh_f16_and_f32.sm_90a.ptx", emitted("sm_90a").code);
}

// ---- The error bounds, emulated on the CPU ----------------------------------------------------

constexpr double kF32Ulp = 0x1p-23; // the relative size of one ulp, at most

// f32 arithmetic, rounded as the GPU rounds it.
float f32(double v) {
    return static_cast<float>(v);
}

// An approximate instruction's result: the correctly rounded value moved by `ulps` ulps (signed).
float off(double exact, double ulps) {
    return f32(exact * (1 + ulps * kF32Ulp));
}

// The comparison the checks make, on f16 results.
double comparison(std::vector<double> const& actual, std::vector<double> const& expected) {
    auto const n = static_cast<std::int64_t>(expected.size());
    HostTensor a{DataType::F16, {n}, {1}, actual}, r{DataType::F16, {n}, {1}, expected};
    return maxRelativeError(a, r);
}

double gelu(double h) {
    return 0.5 * h * (1 + std::tanh(0.7978845608 * (h + 0.044715 * h * h * h)));
}

// The GELU's argument of tanh as the kernel computes it in f32.
float geluArgument(float h) {
    return f32(f32(0.7978845608) * f32(h + f32(f32(f32(0.044715f * h) * h) * h)));
}

// The argument of the GELU's ex2, c (h + 0.044715 h^3) log2 e, as the kernel computes it in f32
// since factorPolynomials: h (k1 + k2 (h h)), k1 = c log2 e and k2 = 0.044715 k1 f32 literals, the
// sum an fma (ptxas contracts it: one rounding), c = -2 * 0.7978845608.
float geluExponent(float h) {
    double const k1 = -2.0 * 0.7978845608 * 1.4426950408889634;
    float const k2 = f32(0.044715 * k1);
    return f32(h * f32(double(k2) * double(f32(h * h)) + double(f32(k1))));
}

// Inputs as `kiln run` draws them for a GEMM (sums of K products of values in [-1, 1]) are
// symmetric about 0; a grid from -H to H with H the largest |h| is the worst such data for the
// GELU (the most negative h next to the largest result), at several scales.
std::vector<float> symmetricInputs(float largest) {
    std::vector<float> h;
    for (int k = -20000; k <= 20000; ++k)
        h.push_back(f32(largest * k / 20000.0));
    return h;
}

TEST(PrecisionBound, RewrittenGeluStaysWithinTheF16ToleranceAtTheWorstErrors) {
    // As the kernels compute it since foldFactors and factorPolynomials: h / (1 + 2^s),
    // s = geluExponent(h), with ex2.approx (2 ulp), rcp.approx (1 ulp), each at either end of
    // its bound; AMDGCN's v_exp_f32 and v_rcp_f32 are within the same, of the same exponent
    // (log2 e in its literals on both targets: scaledByLiteral).
    for (float largest : {2.0f, 6.0f, 30.0f, 120.0f}) {
        std::vector<float> const inputs = symmetricInputs(largest);
        std::vector<double> expected;
        for (float h : inputs)
            expected.push_back(roundTo(DataType::F16, gelu(h)));
        double worst = 0;
        for (double ex2Ulps : {-2.0, 2.0})
            for (double rcpUlps : {-1.0, 1.0}) {
                std::vector<double> actual;
                for (float h : inputs) {
                    float const e = off(std::exp2(double(geluExponent(h))), ex2Ulps);
                    float const q = off(1.0 / double(f32(1.0f + e)), rcpUlps);
                    actual.push_back(roundTo(DataType::F16, f32(h * q)));
                }
                worst = std::max(worst, comparison(actual, expected));
            }
        // One f16 rounding flipped is 2^-10 relative; the tolerance is 1e-2.
        EXPECT_LE(worst, 0x1p-10 + 1e-6) << "|h| up to " << largest;
    }
}

TEST(PrecisionBound, TanhApproxAloneWouldNotBeSafeInAGelu) {
    // Why 1 + tanh is rewritten: with tanh.approx.f32 at its documented bound (2^-11 of
    // |tanh(u)|) the sum near tanh = -1 is off by up to 2^-11 (0.5 |h|), over the 1e-4 of the
    // largest result that the comparison allows there when the inputs are symmetric.
    std::vector<float> const inputs = symmetricInputs(30.0f);
    std::vector<double> expected, actual;
    for (float h : inputs) {
        expected.push_back(roundTo(DataType::F16, gelu(h)));
        double const t = std::tanh(double(geluArgument(h)));
        float const approx = f32(t * (1 + (t < 0 ? 0x1p-11 : -0x1p-11))); // towards -1 - ...
        actual.push_back(roundTo(DataType::F16, f32(f32(0.5f * h) * f32(1.0f + approx))));
    }
    EXPECT_GT(comparison(actual, expected), 1e-2);
}

TEST(PrecisionBound, TanhApproxStoredAsF16IsWithinTheToleranceWithoutTheFloor) {
    // A bare tanh: 2^-11 relative is within 1e-2 relative for every value, however small (no
    // help from the comparison's floor: the reference is scaled down to 1e-30 .. 1e-3).
    std::vector<double> expected, low, high;
    for (int k = 0; k <= 40000; ++k) {
        double const x = (k % 2 ? -1 : 1) * std::pow(10.0, -30 + 33.0 * k / 40000.0) * 1000;
        double const t = std::tanh(double(f32(x)));
        expected.push_back(roundTo(DataType::F16, t));
        low.push_back(roundTo(DataType::F16, f32(t * (1 - 0x1p-11))));
        high.push_back(roundTo(DataType::F16, f32(t * (1 + 0x1p-11))));
    }
    // f16 subnormals (below 6.1e-5) have fewer bits: there the floor of the comparison, 1e-2
    // of the largest value (1), is what holds them, as it does for the exact tanh.
    EXPECT_LE(comparison(low, expected), 1e-2);
    EXPECT_LE(comparison(high, expected), 1e-2);
}

// AMDGCN's tanh as ExpressionGenerator writes it: away from 0, sign(x) (1 - 2 / (2^(2|x|
// log2 e) + 1)) with v_exp_f32 and v_rcp_f32 at `ulps` each; near 0 the odd series (Exact,
// below 0.125) or x itself (Approximate, below 2^-5).
float amdTanh(float x, Precision precision, double ulps) {
    float const a = std::abs(x);
    bool const approximate = precision == Precision::Approximate;
    if (a < (approximate ? 0.03125f : 0.125f)) {
        if (approximate)
            return x;
        float const x2 = f32(x * x);
        float p =
            std::fma(x2, std::bit_cast<float>(0xBD5D0DD1u), std::bit_cast<float>(0x3E088889u));
        p = std::fma(p, x2, std::bit_cast<float>(0xBEAAAAABu));
        p = f32(p * x2);
        return std::fma(p, x, x);
    }
    float const s = f32(a * 2.88539008f);
    float const e = off(std::exp2(double(s)), ulps);
    float const q = off(1.0 / double(f32(1.0f + e)), ulps);
    return std::copysign(std::fma(q, -2.0f, 1.0f), x);
}

TEST(PrecisionBound, AmdgcnTanhFormsMeetTheirBounds) {
    // Relative error against tanh in double: the approximate form within tanh.approx.f32's
    // 2^-11, the exact one within the 1e-5 that f32 results are checked to.
    std::mt19937 rng(19);
    std::uniform_real_distribution<double> exponent(-30, 1.7);
    for (Precision p : {Precision::Approximate, Precision::Exact}) {
        double worst = 0;
        for (int k = 0; k < 200000; ++k) {
            float const x = f32((k % 2 ? -1 : 1) * std::pow(10.0, exponent(rng)));
            double const t = std::tanh(double(x));
            for (double ulps : {-2.0, 2.0})
                worst = std::max(worst, std::abs(amdTanh(x, p, ulps) - t) / std::abs(t));
        }
        EXPECT_LE(worst, p == Precision::Approximate ? info(UnaryOp::Tanh).approximateError : 1e-5)
            << (p == Precision::Approximate ? "approximate" : "exact");
        EXPECT_GT(worst, 0.0);
    }
}

} // namespace
} // namespace kiln::test
