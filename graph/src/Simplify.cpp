#include "kiln/graph/Simplify.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"

#include <cmath>
#include <limits>
#include <optional>

namespace kiln {

using namespace expr;

namespace {

// A literal, or a literal converted to a type (a strong constant such as i64(0)): a constant to
// fold.
bool isLiteral(ExprPtr const& e) {
    if (auto const* c = std::get_if<Convert>(e.get()))
        return std::holds_alternative<Literal>(*c->arg);
    return std::holds_alternative<Literal>(*e);
}

bool isIntLiteral(ExprPtr const& e, std::int64_t v) {
    auto n = literalInt(e);
    return n && *n == v;
}

bool isCommutative(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Multiply:
    case BinaryOp::Min:
    case BinaryOp::Max:
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor:
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
        return true;
    default:
        return false;
    }
}

bool isIntegerExpr(ExprPtr const& e) {
    return isInteger(resultType(*e));
}

// A constant typed as the node it replaces: i64 and f64 literals are weak, so a strong one
// (e.g. from index * 0) stays a conversion, i64(0), or it would adapt to its neighbours.
ExprPtr constant(Value v, bool weak) {
    bool const defaultType = v.type == (v.isFloat() ? DataType::F64 : DataType::I64);
    return defaultType && !weak ? convert(v.type, literal(v)) : literal(v);
}

// Evaluates an all-literal node; keeps it when evaluation fails (e.g. 1 / 0 stays visible).
ExprPtr fold(ExprPtr const& e) {
    try {
        return constant(evaluate(*e), isWeak(*e));
    } catch (UserError const&) {
        return e;
    }
}

// Whether `a` can replace `b`: the same type, and as weak, so that it combines with its
// neighbours as `b` did.
bool sameTyping(ExprPtr const& a, ExprPtr const& b) {
    return resultType(*a) == resultType(*b) && isWeak(*a) == isWeak(*b);
}

// The zero of the type `op` computes in.
ExprPtr zero(BinaryOp op, ExprPtr const& lhs, ExprPtr const& rhs) {
    ExprPtr const node = binary(op, lhs, rhs);
    return constant(convertValue(resultType(*node), Value::integer(0)), isWeak(*node));
}

// `node` when it is `op` over exactly these operands (the same nodes), else a new node: a
// subtree that simplifies to itself stays the same node, so that code generation's tables keyed
// by node (IndexFacts) find it again, and no memory is spent on a copy.
ExprPtr binaryLike(ExprPtr const& node, BinaryOp op, ExprPtr const& lhs, ExprPtr const& rhs) {
    if (auto const* b = node ? std::get_if<Binary>(node.get()) : nullptr;
        b && b->op == op && b->lhs == lhs && b->rhs == rhs)
        return node;
    return binary(op, lhs, rhs);
}

ExprPtr rewriteBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs, ExprPtr const& node);

// 1 / c for a literal c = +-2^k of f32 or f64 whose reciprocal is a normal number of its type:
// x / c and x * (1 / c) are then the same real number, rounded once, for every x.
std::optional<ExprPtr> exactReciprocal(ExprPtr const& c) {
    Value const v = evaluate(*c);
    if (v.type != DataType::F32 && v.type != DataType::F64)
        return std::nullopt;
    int exponent = 0;
    if (!std::isfinite(v.f) || std::abs(std::frexp(v.f, &exponent)) != 0.5)
        return std::nullopt;
    double const r = 1.0 / v.f;
    double const smallest = v.type == DataType::F32 ? std::numeric_limits<float>::min()
                                                    : std::numeric_limits<double>::min();
    double const largest = v.type == DataType::F32 ? std::numeric_limits<float>::max()
                                                   : std::numeric_limits<double>::max();
    if (std::abs(r) < smallest || std::abs(r) > largest)
        return std::nullopt;
    return constant(Value::real(r, v.type), isWeak(*c));
}

// k where `lhs op rhs` divides (x * c) by d, c = k * d, in 64-bit integers: the product is then an
// exact multiple of d, so (x * c) / d = ceildiv(x * c, d) = x * k for every x
// (an i64 product that overflows is an error, never a wrapped value; narrower types wrap, so
// they keep the division).
std::optional<std::int64_t> exactQuotient(BinaryOp op, ExprPtr const& lhs, ExprPtr const& rhs) {
    auto const* product = std::get_if<Binary>(lhs.get());
    auto const d = literalInt(rhs);
    if (!product || product->op != BinaryOp::Multiply || !d || *d == 0 || *d == -1)
        return std::nullopt;
    auto const c = literalInt(product->rhs);
    if (!c || *c % *d != 0 || resultType(Expression{Binary{op, lhs, rhs}}) != DataType::I64)
        return std::nullopt;
    return *c / *d;
}

// rewriteBinary, unless the rewrite would change how the node types with its neighbours.
// `node`, if not null, is a node to return in place of an equal new one (binaryLike).
ExprPtr simplifyBinary(BinaryOp op, ExprPtr const& lhs, ExprPtr const& rhs,
                       ExprPtr const& node = nullptr) {
    ExprPtr const rewritten = rewriteBinary(op, lhs, rhs, node);
    Expression const original = Binary{op, lhs, rhs};
    if (rewritten->typing().type == original.typing().type &&
        rewritten->typing().weak == original.typing().weak)
        return rewritten;
    return binaryLike(node, op, lhs, rhs);
}

ExprPtr rewriteBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs, ExprPtr const& node) {
    if (isLiteral(lhs) && isLiteral(rhs))
        return fold(binary(op, lhs, rhs));
    // false && x, true || x: x is never evaluated (guards such as `T > 0 && N % T == 0`).
    if (bool const either = op == BinaryOp::LogicalOr; (either || op == BinaryOp::LogicalAnd) &&
                                                       isLiteral(lhs) &&
                                                       evaluate(*lhs).asBool() == either)
        return literal(Value::boolean(either));
    if (isCommutative(op) && isLiteral(lhs))
        std::swap(lhs, rhs);

    bool const integer = isIntegerExpr(lhs) && isIntegerExpr(rhs);
    switch (op) {
    case BinaryOp::Add:
        if (integer && isIntLiteral(rhs, 0))
            return lhs;
        // (x / y) * y + x % y -> x, for either order of the two terms
        if (integer) {
            auto quotientTimes = [](ExprPtr const& e, ExprPtr const& rest) {
                auto const* m = std::get_if<Binary>(e.get());
                auto const* r = std::get_if<Binary>(rest.get());
                if (!m || !r || m->op != BinaryOp::Multiply || r->op != BinaryOp::Modulo)
                    return false;
                auto const* d = std::get_if<Binary>(m->lhs.get());
                return d && d->op == BinaryOp::Divide && equal(d->lhs, r->lhs) &&
                       equal(d->rhs, r->rhs) && equal(m->rhs, r->rhs);
            };
            if (quotientTimes(lhs, rhs))
                return std::get<Binary>(*rhs).lhs;
            if (quotientTimes(rhs, lhs))
                return std::get<Binary>(*lhs).lhs;
        }
        // (x + c1) + c2 -> x + (c1 + c2)
        if (auto const* b = std::get_if<Binary>(lhs.get());
            integer && b && b->op == BinaryOp::Add && isLiteral(b->rhs) && isLiteral(rhs))
            return simplifyBinary(BinaryOp::Add, b->lhs, fold(b->rhs + rhs));
        break;
    case BinaryOp::Subtract:
        if (integer && isIntLiteral(rhs, 0))
            return lhs;
        if (integer && equal(lhs, rhs))
            return zero(op, lhs, rhs);
        if (auto c = literalInt(rhs);
            integer && c && *c != std::numeric_limits<std::int64_t>::min())
            return simplifyBinary(BinaryOp::Add, lhs, literal(-*c));
        break;
    case BinaryOp::Multiply:
        if (isIntLiteral(rhs, 1))
            return lhs;
        if (integer && isIntLiteral(rhs, 0))
            return zero(op, lhs, rhs);
        if (auto const* b = std::get_if<Binary>(lhs.get());
            integer && b && b->op == BinaryOp::Multiply && isLiteral(b->rhs) && isLiteral(rhs))
            return simplifyBinary(BinaryOp::Multiply, b->lhs, fold(b->rhs * rhs));
        break;
    case BinaryOp::Divide:
        // x / 2^k -> x * 2^-k in floating point (a mean over a row of known length).
        if (auto const r = !integer && isLiteral(rhs) ? exactReciprocal(rhs) : std::nullopt)
            return simplifyBinary(BinaryOp::Multiply, lhs, *r);
        [[fallthrough]];
    case BinaryOp::CeilDivide:
        if (isIntLiteral(rhs, 1))
            return lhs;
        if (auto const k = exactQuotient(op, lhs, rhs))
            return simplifyBinary(BinaryOp::Multiply, std::get<Binary>(*lhs).lhs, literal(*k));
        break;
    case BinaryOp::Modulo:
        if (integer && isIntLiteral(rhs, 1))
            return zero(op, lhs, rhs);
        break;
    case BinaryOp::Min:
    case BinaryOp::Max:
        if (equal(lhs, rhs))
            return lhs;
        break;
    case BinaryOp::Equal:
    case BinaryOp::LessEqual:
    case BinaryOp::GreaterEqual:
        if (integer && equal(lhs, rhs))
            return literal(Value::boolean(true));
        break;
    case BinaryOp::NotEqual:
    case BinaryOp::Less:
    case BinaryOp::Greater:
        if (integer && equal(lhs, rhs))
            return literal(Value::boolean(false));
        break;
    default:
        break;
    }
    return binaryLike(node, op, lhs, rhs);
}

} // namespace

ExprPtr divisionByZero(ExprPtr const& e) {
    if (!e)
        return nullptr;
    if (auto const* b = std::get_if<Binary>(e.get())) {
        bool const divides =
            b->op == BinaryOp::Divide || b->op == BinaryOp::Modulo || b->op == BinaryOp::CeilDivide;
        ExprPtr divisor = b->rhs;
        if (auto const* c = std::get_if<Convert>(divisor.get()))
            divisor = c->arg;
        if (divides && isIntegerExpr(b->rhs) && isIntLiteral(divisor, 0))
            return e;
        if (ExprPtr found = divisionByZero(b->lhs))
            return found;
        bool const shortCircuits = b->op == BinaryOp::LogicalAnd || b->op == BinaryOp::LogicalOr;
        return shortCircuits ? nullptr : divisionByZero(b->rhs);
    }
    if (auto const* u = std::get_if<Unary>(e.get()))
        return divisionByZero(u->arg);
    if (auto const* s = std::get_if<Select>(e.get()))
        return divisionByZero(s->condition);
    if (auto const* c = std::get_if<Convert>(e.get()))
        return divisionByZero(c->arg);
    return nullptr;
}

ExprPtr simplify(ExprPtr const& e) {
    if (!e)
        return e;
    if (auto const* b = std::get_if<Binary>(e.get()))
        return simplifyBinary(b->op, simplify(b->lhs), simplify(b->rhs), e);
    if (auto const* u = std::get_if<Unary>(e.get())) {
        ExprPtr arg = simplify(u->arg);
        if (isLiteral(arg))
            return fold(unary(u->op, arg));
        if (auto const* inner = std::get_if<Unary>(arg.get());
            inner && u->op == UnaryOp::Negate && inner->op == UnaryOp::Negate)
            return inner->arg;
        return arg == u->arg ? e : unary(u->op, arg);
    }
    if (auto const* s = std::get_if<Select>(e.get())) {
        ExprPtr condition = simplify(s->condition);
        ExprPtr ifTrue = simplify(s->ifTrue), ifFalse = simplify(s->ifFalse);
        ExprPtr const node =
            condition == s->condition && ifTrue == s->ifTrue && ifFalse == s->ifFalse
                ? e
                : select(condition, ifTrue, ifFalse);
        if (isLiteral(condition)) {
            ExprPtr const taken = evaluate(*condition).asBool() ? ifTrue : ifFalse;
            if (sameTyping(taken, node))
                return taken;
        }
        return node;
    }
    if (auto const* c = std::get_if<Convert>(e.get())) {
        ExprPtr arg = simplify(c->arg);
        if (isLiteral(arg))
            return fold(convert(c->type, arg));
        if (resultType(*arg) == c->type && !isWeak(*arg))
            return arg;
        return arg == c->arg ? e : convert(c->type, arg);
    }
    return e;
}

} // namespace kiln
