// Expression.h: the small, total expression language of KernelGraphs.
//
// An Expression is an immutable std::variant tree: literals, Command arguments, sizes and strides
// of dimensions, indices of coordinates, values held by data dimensions, and unary, binary,
// select and conversion nodes over them. Sizes, guards, loop bounds, element-wise bodies and
// (after lowering) addresses are all Expressions. Each knows when it can first be evaluated
// (EvaluationTime): when the graph is translated, when the kernel is launched, or only inside it.
#pragma once

#include "kiln/graph/DataType.h"
#include "kiln/graph/ElementwiseFunctions.h"
#include "kiln/graph/Id.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

namespace kiln {

/// A number an expression evaluates to: an integer (integer and bool types) or a float.
struct Value {
    DataType type = DataType::I64;
    std::int64_t i = 0;
    double f = 0;

    static Value integer(std::int64_t v, DataType type = DataType::I64) { return {type, v, 0}; }
    static Value real(double v, DataType type = DataType::F64) { return {type, 0, v}; }
    static Value boolean(bool v) { return {DataType::Bool, v ? 1 : 0, 0}; }

    bool isFloat() const { return kiln::isFloat(type); }
    std::int64_t asInt() const { return isFloat() ? static_cast<std::int64_t>(f) : i; }
    double asDouble() const { return isFloat() ? f : static_cast<double>(i); }
    bool asBool() const { return isFloat() ? f != 0 : i != 0; }
    bool operator==(Value const&) const = default;
};

struct Expression;
using ExprPtr = std::shared_ptr<Expression const>;

enum class BinaryOp : std::uint8_t {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    CeilDivide,
    Min,
    Max,
    Gcd,
    ShiftLeft,
    ShiftRight,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    LogicalAnd,
    LogicalOr
};

namespace expr {

/// A constant. Integer literals are i64 and float literals f64 unless converted; both adapt to
/// the type of the other operand of a binary node ("weak" literals, as in C++ templates). A
/// literal of any other type (what simplify() folds i32(5) into) is not weak: it keeps its type.
struct Literal {
    Value value;
};
/// A Command argument (a scalar the user passes at launch, or a tensor's size or stride).
struct Argument {
    std::string name;
    DataType type;
};
/// A value the Command names with a tag; translate replaces these with DataValue.
struct Tag {
    std::string name;
    DataType type;
};
/// The size of a coordinate dimension (known at launch).
struct DimensionSize {
    Id dimension;
};
/// The stride of a coordinate dimension (known at launch).
struct DimensionStride {
    Id dimension;
};
/// The current index of a coordinate dimension (known inside the kernel).
struct Index {
    Id dimension;
};
/// The element a data dimension holds at the current index (known inside the kernel).
struct DataValue {
    Id dimension;
    DataType type;
};
struct Unary {
    UnaryOp op;
    ExprPtr arg;
};
struct Binary {
    BinaryOp op;
    ExprPtr lhs, rhs;
};
struct Select {
    ExprPtr condition, ifTrue, ifFalse;
};
struct Convert {
    DataType type;
    ExprPtr arg;
};

} // namespace expr

/// The type a node computes in, by C-like promotion with weak literals, and whether it is weak:
/// built of i64 and f64 literals only, so that it adapts to the other operand's type.
struct Typing {
    DataType type = DataType::I64;
    bool weak = false;
};

struct Expression;
namespace expr {
/// Types a node from its children's typing (what Expression's constructor records).
Typing typeNode(Expression const& e);
} // namespace expr

/// A node. Its typing is computed once, when it is built, from its children's: code generation
/// asks for the types of large shared trees over and over, and walking them each time costs
/// time quadratic in their depth.
struct Expression : std::variant<expr::Literal, expr::Argument, expr::Tag, expr::DimensionSize,
                                 expr::DimensionStride, expr::Index, expr::DataValue, expr::Unary,
                                 expr::Binary, expr::Select, expr::Convert> {
    template <class Node>
    requires(!std::is_base_of_v<variant, std::remove_cvref_t<Node>>)
        Expression(Node&& node) // NOLINT(google-explicit-constructor): a node is an Expression
        : variant(std::forward<Node>(node))
        , typing_(expr::typeNode(*this)) {}

    Typing typing() const { return typing_; }

private:
    Typing typing_;
};

/// When an expression can first be evaluated; ordered, a node is as late as its latest child.
enum class EvaluationTime : std::uint8_t { Translate, KernelLaunch, KernelExecute };

// Builders. They do not simplify; see simplify().
ExprPtr literal(std::int64_t value);
ExprPtr literal(Value value);
ExprPtr argument(std::string name, DataType type);
ExprPtr tag(std::string name, DataType type);
ExprPtr dimensionSize(Id dimension);
ExprPtr dimensionStride(Id dimension);
ExprPtr index(Id dimension);
ExprPtr dataValue(Id dimension, DataType type);
ExprPtr unary(UnaryOp op, ExprPtr arg);
ExprPtr binary(BinaryOp op, ExprPtr lhs, ExprPtr rhs);
ExprPtr select(ExprPtr condition, ExprPtr ifTrue, ExprPtr ifFalse);
ExprPtr convert(DataType type, ExprPtr arg);

ExprPtr operator+(ExprPtr a, ExprPtr b);
ExprPtr operator-(ExprPtr a, ExprPtr b);
ExprPtr operator*(ExprPtr a, ExprPtr b);
ExprPtr operator/(ExprPtr a, ExprPtr b);
ExprPtr operator%(ExprPtr a, ExprPtr b);
ExprPtr ceilDivide(ExprPtr a, ExprPtr b);

std::string_view name(UnaryOp op);
std::string_view name(BinaryOp op);

/// The latest child's time: literals at Translate; arguments, sizes and strides at KernelLaunch;
/// indices, tags and data values at KernelExecute.
EvaluationTime evaluationTime(Expression const& e);

/// The type the expression computes in, by C-like promotion with weak literals.
DataType resultType(Expression const& e);

/// Whether `e` is weak like a literal (it adapts to the other operand's type): true when it is
/// built of i64 and f64 literals only. Rewrites that keep the value must keep this too.
bool isWeak(Expression const& e);

/// Structural equality.
bool equal(ExprPtr const& a, ExprPtr const& b);

/// `e` with the indices in `values` replaced by their expressions (not simplified).
ExprPtr substitute(ExprPtr const& e, std::map<Id, ExprPtr> const& values);

/// `e` with `f` applied to each of its operands (`e` itself where none changes): the one visit
/// over a node's operands that a rewrite of an expression tree needs.
template <class F>
ExprPtr mapOperands(ExprPtr const& e, F const& f) {
    return std::visit(
        [&](auto const& node) -> ExprPtr {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Binary>) {
                ExprPtr const lhs = f(node.lhs), rhs = f(node.rhs);
                return lhs == node.lhs && rhs == node.rhs ? e : binary(node.op, lhs, rhs);
            } else if constexpr (std::is_same_v<T, expr::Unary>) {
                ExprPtr const arg = f(node.arg);
                return arg == node.arg ? e : unary(node.op, arg);
            } else if constexpr (std::is_same_v<T, expr::Convert>) {
                ExprPtr const arg = f(node.arg);
                return arg == node.arg ? e : convert(node.type, arg);
            } else if constexpr (std::is_same_v<T, expr::Select>) {
                ExprPtr const c = f(node.condition), t = f(node.ifTrue), x = f(node.ifFalse);
                return c == node.condition && t == node.ifTrue && x == node.ifFalse
                           ? e
                           : select(c, t, x);
            } else {
                return e;
            }
        },
        static_cast<Expression::variant const&>(*e));
}

/// The integer value of a literal, if `e` is one.
std::optional<std::int64_t> literalInt(ExprPtr const& e);

/// `e` times `s` with `s` taken into its literals, so that the product costs no multiply: a
/// literal scaled, a product with one factor scaled, a sum or difference with both terms scaled,
/// a quotient's numerator, a negation's operand; null where `e` has no such form. The approximate
/// exp of both targets, 2^(e log2 e), takes log2 e so: into the one literal of `c * y`, or into
/// both of a factored polynomial's (`x (c + d x^2)`, lowering's forPrecision()).
ExprPtr scaledByLiteral(ExprPtr const& e, double s);

/// Applies one operator to values: integer arithmetic with floor semantics for division and
/// modulo of non-negative numbers and C semantics otherwise, float arithmetic in double.
/// Division or modulo by zero is a UserError.
Value apply(UnaryOp op, Value a);
Value apply(BinaryOp op, Value a, Value b);
Value convertValue(DataType type, Value v);

} // namespace kiln
