#include "kiln/graph/Simplify.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"

namespace kiln {

using namespace expr;

namespace {

bool isLiteral(ExprPtr const& e) { return std::holds_alternative<Literal>(*e); }

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

bool isIntegerExpr(ExprPtr const& e) { return isInteger(resultType(*e)); }

// Evaluates an all-literal node; keeps it when evaluation fails (e.g. 1 / 0 stays visible).
ExprPtr fold(ExprPtr const& e) {
    try {
        return literal(evaluate(*e));
    } catch (UserError const&) {
        return e;
    }
}

ExprPtr simplifyBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
    if (isLiteral(lhs) && isLiteral(rhs))
        return fold(binary(op, lhs, rhs));
    if (isCommutative(op) && isLiteral(lhs))
        std::swap(lhs, rhs);

    bool const integer = isIntegerExpr(lhs) && isIntegerExpr(rhs);
    switch (op) {
    case BinaryOp::Add:
        if (integer && isIntLiteral(rhs, 0))
            return lhs;
        // (x + c1) + c2 -> x + (c1 + c2)
        if (auto const* b = std::get_if<Binary>(lhs.get());
            integer && b && b->op == BinaryOp::Add && isLiteral(b->rhs) && isLiteral(rhs))
            return simplifyBinary(BinaryOp::Add, b->lhs, fold(b->rhs + rhs));
        break;
    case BinaryOp::Subtract:
        if (integer && isIntLiteral(rhs, 0))
            return lhs;
        if (integer && equal(lhs, rhs))
            return literal(0);
        if (auto c = literalInt(rhs); integer && c && *c != std::numeric_limits<std::int64_t>::min())
            return simplifyBinary(BinaryOp::Add, lhs, literal(-*c));
        break;
    case BinaryOp::Multiply:
        if (isIntLiteral(rhs, 1))
            return lhs;
        if (integer && isIntLiteral(rhs, 0))
            return literal(0);
        if (auto const* b = std::get_if<Binary>(lhs.get());
            integer && b && b->op == BinaryOp::Multiply && isLiteral(b->rhs) && isLiteral(rhs))
            return simplifyBinary(BinaryOp::Multiply, b->lhs, fold(b->rhs * rhs));
        break;
    case BinaryOp::Divide:
    case BinaryOp::CeilDivide:
        if (isIntLiteral(rhs, 1))
            return lhs;
        break;
    case BinaryOp::Modulo:
        if (integer && isIntLiteral(rhs, 1))
            return literal(0);
        break;
    case BinaryOp::Min:
    case BinaryOp::Max:
        if (equal(lhs, rhs))
            return lhs;
        break;
    default:
        break;
    }
    return binary(op, lhs, rhs);
}

} // namespace

ExprPtr simplify(ExprPtr const& e) {
    if (!e)
        return e;
    if (auto const* b = std::get_if<Binary>(e.get()))
        return simplifyBinary(b->op, simplify(b->lhs), simplify(b->rhs));
    if (auto const* u = std::get_if<Unary>(e.get())) {
        ExprPtr arg = simplify(u->arg);
        if (isLiteral(arg))
            return fold(unary(u->op, arg));
        if (auto const* inner = std::get_if<Unary>(arg.get());
            inner && u->op == UnaryOp::Negate && inner->op == UnaryOp::Negate)
            return inner->arg;
        return unary(u->op, arg);
    }
    if (auto const* s = std::get_if<Select>(e.get())) {
        ExprPtr condition = simplify(s->condition);
        ExprPtr ifTrue = simplify(s->ifTrue), ifFalse = simplify(s->ifFalse);
        if (isLiteral(condition) && resultType(*ifTrue) == resultType(*ifFalse))
            return evaluate(*condition).asBool() ? ifTrue : ifFalse;
        return select(condition, ifTrue, ifFalse);
    }
    if (auto const* c = std::get_if<Convert>(e.get())) {
        ExprPtr arg = simplify(c->arg);
        if (isLiteral(arg))
            return fold(convert(c->type, arg));
        if (resultType(*arg) == c->type && !isLiteral(arg))
            return arg;
        return convert(c->type, arg);
    }
    return e;
}

} // namespace kiln
