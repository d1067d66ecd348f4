// Evaluate.h: computing the value of an Expression.
//
// The leaves an expression may read (arguments, sizes, strides, indices, data values, tags) come
// from an Environment; each default answer is a UserError naming what was missing, so that a
// translate-time evaluation of a launch-time expression says what it lacked instead of crashing.
#pragma once

#include "kiln/graph/Expression.h"

namespace kiln {

/// Answers the leaves of an expression. Override what the evaluation can know.
class Environment {
public:
    virtual ~Environment() = default;
    virtual Value argument(expr::Argument const& a) const;
    virtual Value tag(expr::Tag const& t) const;
    virtual Value dimensionSize(Id dimension) const;
    virtual Value dimensionStride(Id dimension) const;
    virtual Value index(Id dimension) const;
    virtual Value dataValue(expr::DataValue const& d) const;
};

/// The value of `e`, of type resultType(e).
Value evaluate(Expression const& e, Environment const& env = Environment{});

/// evaluate(e) as an integer, for sizes and indices.
std::int64_t evaluateInt(Expression const& e, Environment const& env = Environment{});

} // namespace kiln
