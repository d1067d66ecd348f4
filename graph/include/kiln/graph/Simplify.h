// Simplify.h: algebraic simplification of Expressions.
//
// Folds constant subtrees, applies exact identities (x + 0, x * 1, x * 0 and x - x on integers,
// x / 1, ceildiv(x, 1), min(x, x), x == x and the other comparisons of an integer
// expression with itself, select on a constant), drops conversions to the type a value
// already has, moves literals to the right of commutative operators and gathers them, so that
// ((i * 4) * 2) + 1 + 3 becomes i * 8 + 4. Every rewrite preserves the value for all inputs.
#pragma once

#include "kiln/graph/Expression.h"

namespace kiln {

ExprPtr simplify(ExprPtr const& e);

} // namespace kiln
