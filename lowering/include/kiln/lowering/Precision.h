// Precision.h: which Assigns of a kernel may compute their functions with fast approximate
// instructions, decided once for every target.
//
// A value rounded to a 16-bit float is checked within 1e-2 (the semantic check, `kiln run`, the
// GPU tests), so the error of tanh.approx.f32 (2^-11 relative, one f16 rounding) or of an
// approximate reciprocal is lost in that rounding; an f32 result is checked within 1e-5 and
// keeps the exact sequences. The rule follows the value to what becomes of it: an Assign is
// approximate when its value is f16/bf16, or an f32 value that only element-wise Assigns read,
// each approximate by the same rule (the f32 intermediates of an epilogue that ends in a cast to
// f16). A value stored as f32, reduced, multiplied, assigned more than once (an accumulator,
// initialized and then updated from itself) or read by anything else stays exact. Both code
// generators read the result (KernelWalker::assign), and write the approximate form of each
// function the instruction sets have (ElementwiseFunctions.h, docs/codegen.md "Precision").
#pragma once

#include "kiln/graph/ElementwiseFunctions.h"
#include "kiln/graph/KernelGraph.h"

namespace kiln::lowering {

/// The precision Assign `op` (an operation of `graph`) computes its value's elements in.
Precision assignPrecision(KernelGraph const& graph, Id op);

/// `e` as a kernel computes it at `precision`. Approximate rewrites `1 + tanh(u)` (either
/// order) into `2 / (1 + exp(-2 u))` and `1 - tanh(u)` into `2 / (1 + exp(2 u))`, the same
/// values: where tanh(u) nears -1 (1 for the difference) the sum cancels, and the approximate
/// tanh's error, 2^-11 of |tanh(u)|, would become all of it (a tanh-GELU, 0.5 h (1 + tanh(u)),
/// off by up to 2.4e-4 |h| where it is nearly 0), while the quotient keeps the approximate
/// exp's and reciprocal's relative error, about 2^-21; then folds the literal factors
/// (foldFactors()), and writes a literal times a polynomial without constant term in x as x
/// times a polynomial one degree lower (c (x + a x^3) -> x (c + c a x^2): one multiply an element
/// fewer, and one rounding of x fewer). Exact returns `e` unchanged.
ExprPtr forPrecision(ExprPtr const& e, Precision precision);

/// `e` with the literal factors of each f32 product multiplied into one, in double, where there
/// are two or more: a literal numerator counts as one (`c / d` is `c * (1 / d)`), a negation as
/// -1. The tanh-GELU rewritten above, `0.5 * h * (2 / (1 + exp(-2 * (0.7978845608 * x))))`,
/// becomes `h * (1 / (1 + exp(-1.5957691216 * x)))`: a reciprocal and one multiply by h, one
/// multiply before the exp (whose log2(e) the approximate exp folds in as well), instead of six
/// multiplies an element. Each folded product rounds once where it rounded at each factor, so
/// the value moves by an f32 rounding or two: only for approximate Assigns.
ExprPtr foldFactors(ExprPtr const& e);

} // namespace kiln::lowering
