// Simplify.h: algebraic simplification of Expressions.
//
// Folds constant subtrees, applies exact identities (x + 0, x * 1, x * 0 and x - x on integers,
// x / 1, ceildiv(x, 1), min(x, x), x == x and the other comparisons of an integer
// expression with itself, select on a constant, false && x and true || x), drops conversions to the
// type a value already has, moves literals to the right of commutative operators and gathers them,
// so that
// ((i * 4) * 2) + 1 + 3 becomes i * 8 + 4, and divides exact multiples in 64 bits (N * 4 / 4 is
// N). Every rewrite preserves the value for all inputs.
#pragma once

#include "kiln/graph/Expression.h"

namespace kiln {

ExprPtr simplify(ExprPtr const& e);

/// The first integer division, modulo or ceildiv in `e` whose divisor is the constant 0 and that
/// every evaluation of `e` reaches (not behind && or || or in a branch of a select), or null.
/// Such a node fails for every input, so the places that take expressions from users (loaders,
/// rule arithmetic) refuse it where it is written; call it on a simplified expression, so that
/// N % (N - N) is found too.
ExprPtr divisionByZero(ExprPtr const& e);

} // namespace kiln
