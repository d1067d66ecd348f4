// ElementwiseFunctions.h: the unary operators and one-argument functions of expressions, one row
// each.
//
// A row says everything Kiln knows about a function that is not a target's instruction
// selection: its spelling, whether it is written as a call (`exp(x)`) or a prefix operator
// (`-x`), its type, its value on the host (what the interpreter, the reference and constant
// folding compute) and, for a function that no code generator has instructions of its own for,
// its definition in terms of other expressions, which both code generators emit instead. The
// parser, the printer, typing and evaluation read this table; so adding a function that is
// defined by an expansion is one row here (see docs/architecture.md). Two-argument functions
// (min, max, ceildiv, gcd) are BinaryOps (Expression.h).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace kiln {

/// How a kernel computes floating-point functions (tanh, exp, a quotient) of an Assign: with the
/// sequences whose f32 results stay within the 1e-5 the checks allow f32 (Exact), or with the
/// fast approximate instructions, whose error is of the order of one 16-bit rounding
/// (Approximate: tanh.approx.f32 and rcp.approx on PTX; v_exp_f32 / v_rcp_f32 sequences on
/// AMDGCN). Which Assigns may be approximate is decided in one place for every target,
/// lowering/Precision.h; docs/codegen.md ("Precision") says what each form is.
enum class Precision : std::uint8_t { Exact, Approximate };

/// The operator of an expr::Unary node; the order of the rows of unaryOps below.
enum class UnaryOp : std::uint8_t {
    Negate,
    LogicalNot,
    BitwiseNot,
    Abs,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
    Rsqrt,
};

/// One unary operator or function.
struct UnaryOpInfo {
    UnaryOp op;
    /// How the text writes it: the operator's symbol, or the function's name.
    std::string_view name;
    /// Written as a call `name(x)` (a function), not as a prefix operator.
    bool call;
    /// The result is a bool, whatever the operand (`!`); otherwise it has the operand's type.
    bool boolean;
    /// The value of a float operand, computed in double (then rounded to the operand's type);
    /// nullptr where a float operand is an error.
    double (*onFloat)(double);
    /// The value of an integer operand, as 64 bits that wrap to the operand's type; nullptr
    /// where the function is computed on the operand converted to f64, giving an f64.
    std::uint64_t (*onInteger)(std::uint64_t);
    /// Expression text over `x` that defines the function where no code generator has
    /// instructions of its own for it (empty where they have); code generation emits this
    /// instead. Weak literals (1.0) take the operand's type.
    std::string_view expansion = {};
    /// The largest relative error of the function's Precision::Approximate form, where it is
    /// larger than the exact form's (0: no larger, except that PTX's approximate exp flushes
    /// results below f32's normal range, 2^-126, to zero).
    /// Tests hold the approximate form to it (tanh: 2^-11, the PTX ISA's bound of
    /// tanh.approx.f32, which AMDGCN's form meets by construction).
    double approximateError = 0;
};

inline constexpr std::array unaryOps = {
    UnaryOpInfo{UnaryOp::Negate, "-", false, false, [](double x) { return -x; },
                [](std::uint64_t x) { return 0 - x; }},
    UnaryOpInfo{UnaryOp::LogicalNot, "!", false, true, nullptr, nullptr},
    UnaryOpInfo{UnaryOp::BitwiseNot, "~", false, false, nullptr,
                [](std::uint64_t x) { return ~x; }},
    UnaryOpInfo{UnaryOp::Abs, "abs", true, false, [](double x) { return std::fabs(x); },
                [](std::uint64_t x) { return static_cast<std::int64_t>(x) < 0 ? 0 - x : x; }},
    UnaryOpInfo{UnaryOp::Exp, "exp", true, false, [](double x) { return std::exp(x); }, nullptr},
    UnaryOpInfo{UnaryOp::Log, "log", true, false, [](double x) { return std::log(x); }, nullptr},
    UnaryOpInfo{UnaryOp::Sqrt, "sqrt", true, false, [](double x) { return std::sqrt(x); }, nullptr},
    UnaryOpInfo{UnaryOp::Tanh,
                "tanh",
                true,
                false,
                [](double x) { return std::tanh(x); },
                nullptr,
                {},
                0x1p-11},
    UnaryOpInfo{UnaryOp::Sigmoid, "sigmoid", true, false,
                [](double x) { return 1 / (1 + std::exp(-x)); }, nullptr, "1.0 / (1.0 + exp(-x))"},
    // rsqrt: a normalization's 1 / sqrt(variance + eps) (layer norm, RMS norm), written as that
    // quotient so that every target computes it with its exact square root and division.
    UnaryOpInfo{UnaryOp::Rsqrt, "rsqrt", true, false, [](double x) { return 1 / std::sqrt(x); },
                nullptr, "1.0 / sqrt(x)"},
};

static_assert(
    [] {
        for (std::size_t k = 0; k < unaryOps.size(); ++k)
            if (static_cast<std::size_t>(unaryOps[k].op) != k)
                return false;
        return true;
    }(),
    "the rows of unaryOps are in the order of UnaryOp");

/// The row of `op`.
constexpr UnaryOpInfo const& info(UnaryOp op) {
    return unaryOps[static_cast<std::size_t>(op)];
}

} // namespace kiln
