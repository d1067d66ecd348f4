#include "kiln/graph/Expression.h"

#include "kiln/graph/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln {

using namespace expr;

namespace {
template <class... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

ExprPtr make(Expression e) {
    return std::make_shared<Expression const>(std::move(e));
}

bool isComparison(BinaryOp op) {
    return op >= BinaryOp::Equal && op <= BinaryOp::GreaterEqual;
}
bool isLogical(BinaryOp op) {
    return op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr;
}

// The comparison operators on numbers of one type.
template <class T>
bool compare(BinaryOp op, T x, T y) {
    switch (op) {
    case BinaryOp::Equal:
        return x == y;
    case BinaryOp::NotEqual:
        return x != y;
    case BinaryOp::Less:
        return x < y;
    case BinaryOp::LessEqual:
        return x <= y;
    case BinaryOp::Greater:
        return x > y;
    default:
        return x >= y; // GreaterEqual
    }
}

// Usual arithmetic conversions between two non-weak types.
DataType promote(DataType a, DataType b) {
    if (a == b)
        return a;
    if (isFloat(a) || isFloat(b)) {
        if (!isFloat(a))
            return b;
        if (!isFloat(b))
            return a;
        if (a == DataType::F64 || b == DataType::F64)
            return DataType::F64;
        return DataType::F32; // f16 with bf16, or either with f32
    }
    return (a == DataType::I64 || b == DataType::I64) ? DataType::I64 : DataType::I32;
}

Typing combine(Typing a, Typing b) {
    if (a.weak && !b.weak)
        return {isFloat(a.type) && !isFloat(b.type) ? promote(a.type, b.type) : b.type, false};
    if (b.weak && !a.weak)
        return {isFloat(b.type) && !isFloat(a.type) ? promote(a.type, b.type) : a.type, false};
    return {promote(a.type, b.type), a.weak && b.weak};
}

std::int64_t wrap(DataType type, std::uint64_t bits) {
    if (type == DataType::I32)
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
    if (type == DataType::Bool)
        return bits != 0;
    return static_cast<std::int64_t>(bits);
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0)))
        ++q;
    return q;
}

std::int64_t checkedShift(std::int64_t amount) {
    if (amount < 0 || amount > 63)
        fail("shift by {} is out of range 0..63", amount);
    return amount;
}
} // namespace

Typing expr::typeNode(Expression const& e) {
    return std::visit(
        Overloaded{
            // Only i64 and f64 literals are weak; one of another type (e.g. a folded i32(5))
            // keeps its type, as the conversion it came from did.
            [](Literal const& l) {
                return Typing{l.value.type,
                              l.value.type == (l.value.isFloat() ? DataType::F64 : DataType::I64)};
            },
            [](Argument const& a) {
                return Typing{a.type, false};
            },
            [](Tag const& t) {
                return Typing{t.type, false};
            },
            [](DimensionSize const&) {
                return Typing{DataType::I64, false};
            },
            [](DimensionStride const&) {
                return Typing{DataType::I64, false};
            },
            [](Index const&) {
                return Typing{DataType::I64, false};
            },
            [](DataValue const& d) {
                return Typing{d.type, false};
            },
            [](Unary const& u) {
                if (info(u.op).boolean)
                    return Typing{DataType::Bool, false};
                return u.arg->typing();
            },
            [](Binary const& b) {
                if (isComparison(b.op) || isLogical(b.op))
                    return Typing{DataType::Bool, false};
                Typing const t = combine(b.lhs->typing(), b.rhs->typing());
                // Arithmetic on bools is on i32, as in C and as apply() computes it.
                return t.type == DataType::Bool ? Typing{DataType::I32, false} : t;
            },
            [](Select const& s) { return combine(s.ifTrue->typing(), s.ifFalse->typing()); },
            [](Convert const& c) {
                return Typing{c.type, false};
            },
        },
        static_cast<Expression::variant const&>(e));
}

ExprPtr literal(std::int64_t value) {
    return make(Literal{Value::integer(value)});
}
ExprPtr literal(Value value) {
    return make(Literal{value});
}
ExprPtr argument(std::string name, DataType type) {
    return make(Argument{std::move(name), type});
}
ExprPtr tag(std::string name, DataType type) {
    return make(Tag{std::move(name), type});
}
ExprPtr dimensionSize(Id dimension) {
    return make(DimensionSize{dimension});
}
ExprPtr dimensionStride(Id dimension) {
    return make(DimensionStride{dimension});
}
ExprPtr index(Id dimension) {
    return make(Index{dimension});
}
ExprPtr dataValue(Id dimension, DataType type) {
    return make(DataValue{dimension, type});
}
ExprPtr unary(UnaryOp op, ExprPtr arg) {
    return make(Unary{op, std::move(arg)});
}
ExprPtr binary(BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
    return make(Binary{op, std::move(lhs), std::move(rhs)});
}
ExprPtr select(ExprPtr condition, ExprPtr ifTrue, ExprPtr ifFalse) {
    return make(Select{std::move(condition), std::move(ifTrue), std::move(ifFalse)});
}
ExprPtr convert(DataType type, ExprPtr arg) {
    return make(Convert{type, std::move(arg)});
}

ExprPtr operator+(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::Add, std::move(a), std::move(b));
}
ExprPtr operator-(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::Subtract, std::move(a), std::move(b));
}
ExprPtr operator*(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::Multiply, std::move(a), std::move(b));
}
ExprPtr operator/(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::Divide, std::move(a), std::move(b));
}
ExprPtr operator%(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::Modulo, std::move(a), std::move(b));
}
ExprPtr ceilDivide(ExprPtr a, ExprPtr b) {
    return binary(BinaryOp::CeilDivide, std::move(a), std::move(b));
}

std::string_view name(UnaryOp op) {
    return info(op).name;
}

std::string_view name(BinaryOp op) {
    static constexpr std::string_view names[] = {
        "+", "-", "*", "/",  "%",  "ceildiv", "min", "max", "gcd", "<<", ">>",
        "&", "|", "^", "==", "!=", "<",       "<=",  ">",   ">=",  "&&", "||"};
    return names[static_cast<int>(op)];
}

EvaluationTime evaluationTime(Expression const& e) {
    auto later = [](EvaluationTime a, EvaluationTime b) { return std::max(a, b); };
    return std::visit(
        Overloaded{
            [](Literal const&) { return EvaluationTime::Translate; },
            [](Argument const&) { return EvaluationTime::KernelLaunch; },
            [](DimensionSize const&) { return EvaluationTime::KernelLaunch; },
            [](DimensionStride const&) { return EvaluationTime::KernelLaunch; },
            [](Tag const&) { return EvaluationTime::KernelExecute; },
            [](Index const&) { return EvaluationTime::KernelExecute; },
            [](DataValue const&) { return EvaluationTime::KernelExecute; },
            [](Unary const& u) { return evaluationTime(*u.arg); },
            [&](Binary const& b) { return later(evaluationTime(*b.lhs), evaluationTime(*b.rhs)); },
            [&](Select const& s) {
                return later(evaluationTime(*s.condition),
                             later(evaluationTime(*s.ifTrue), evaluationTime(*s.ifFalse)));
            },
            [](Convert const& c) { return evaluationTime(*c.arg); },
        },
        static_cast<Expression::variant const&>(e));
}

DataType resultType(Expression const& e) {
    return e.typing().type;
}

bool isWeak(Expression const& e) {
    return e.typing().weak;
}

bool equal(ExprPtr const& a, ExprPtr const& b) {
    if (a == b)
        return true;
    if (!a || !b || a->index() != b->index())
        return false;
    return std::visit(
        Overloaded{
            [&](Literal const& x) { return x.value == std::get<Literal>(*b).value; },
            [&](Argument const& x) {
                auto const& y = std::get<Argument>(*b);
                return x.name == y.name && x.type == y.type;
            },
            [&](Tag const& x) {
                auto const& y = std::get<Tag>(*b);
                return x.name == y.name && x.type == y.type;
            },
            [&](DimensionSize const& x) {
                return x.dimension == std::get<DimensionSize>(*b).dimension;
            },
            [&](DimensionStride const& x) {
                return x.dimension == std::get<DimensionStride>(*b).dimension;
            },
            [&](Index const& x) { return x.dimension == std::get<Index>(*b).dimension; },
            [&](DataValue const& x) {
                auto const& y = std::get<DataValue>(*b);
                return x.dimension == y.dimension && x.type == y.type;
            },
            [&](Unary const& x) {
                auto const& y = std::get<Unary>(*b);
                return x.op == y.op && equal(x.arg, y.arg);
            },
            [&](Binary const& x) {
                auto const& y = std::get<Binary>(*b);
                return x.op == y.op && equal(x.lhs, y.lhs) && equal(x.rhs, y.rhs);
            },
            [&](Select const& x) {
                auto const& y = std::get<Select>(*b);
                return equal(x.condition, y.condition) && equal(x.ifTrue, y.ifTrue) &&
                       equal(x.ifFalse, y.ifFalse);
            },
            [&](Convert const& x) {
                auto const& y = std::get<Convert>(*b);
                return x.type == y.type && equal(x.arg, y.arg);
            },
        },
        static_cast<Expression::variant const&>(*a));
}

std::optional<std::int64_t> literalInt(ExprPtr const& e) {
    if (!e)
        return std::nullopt;
    if (auto const* l = std::get_if<Literal>(e.get()); l && !l->value.isFloat())
        return l->value.i;
    return std::nullopt;
}

Value convertValue(DataType type, Value v) {
    if (isFloat(type))
        return Value::real(roundTo(type, v.asDouble()), type);
    if (v.isFloat()) {
        double const d = v.f;
        if (!std::isfinite(d))
            return Value::integer(0, type);
        if (type == DataType::Bool)
            return Value::integer(d != 0, type);
        double const clamped = std::clamp(d, -9.2e18, 9.2e18);
        return Value::integer(
            wrap(type, static_cast<std::uint64_t>(static_cast<std::int64_t>(clamped))), type);
    }
    return Value::integer(wrap(type, static_cast<std::uint64_t>(v.i)), type);
}

Value apply(UnaryOp op, Value a) {
    UnaryOpInfo const& f = info(op);
    if (f.boolean)
        return Value::boolean(!a.asBool());
    if (a.isFloat()) {
        if (!f.onFloat)
            fail("'{}' needs an integer operand, not {}", f.name, name(a.type));
        return Value::real(roundTo(a.type, f.onFloat(a.f)), a.type);
    }
    if (!f.onInteger)
        return Value::real(f.onFloat(static_cast<double>(a.i)), DataType::F64);
    return Value::integer(wrap(a.type, f.onInteger(static_cast<std::uint64_t>(a.i))), a.type);
}

Value apply(BinaryOp op, Value a, Value b) {
    if (isLogical(op)) {
        bool const r =
            op == BinaryOp::LogicalAnd ? (a.asBool() && b.asBool()) : (a.asBool() || b.asBool());
        return Value::boolean(r);
    }
    DataType const type = promote(a.type, b.type);
    if (isComparison(op))
        return Value::boolean(isFloat(type) ? compare(op, a.asDouble(), b.asDouble())
                                            : compare(op, a.i, b.i));
    if (isFloat(type)) {
        double const x = a.asDouble(), y = b.asDouble();
        double r = 0;
        switch (op) {
        case BinaryOp::Add:
            r = x + y;
            break;
        case BinaryOp::Subtract:
            r = x - y;
            break;
        case BinaryOp::Multiply:
            r = x * y;
            break;
        case BinaryOp::Divide:
            r = x / y;
            break;
        case BinaryOp::Modulo:
            r = std::fmod(x, y);
            break;
        case BinaryOp::CeilDivide:
            r = std::ceil(x / y);
            break;
        case BinaryOp::Min:
            r = std::min(x, y);
            break;
        case BinaryOp::Max:
            r = std::max(x, y);
            break;
        default:
            fail("'{}' needs integer operands, not {}", name(op), kiln::name(type));
        }
        return Value::real(roundTo(type, r), type);
    }
    std::int64_t const x = a.i, y = b.i;
    auto const ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
    auto const needDivisor = [&] {
        if (y == 0)
            fail("'{}' by zero ({} {} 0)", name(op), x, name(op));
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1)
            fail("'{}' overflows ({} {} -1)", name(op), x, name(op));
    };
    // 64-bit sums and products are sizes, offsets and counts: one past int64 is an error, never
    // a negative size (narrower types wrap, as they do on the GPU).
    auto const checked = [&](bool overflowed) {
        if (overflowed && type == DataType::I64)
            fail("'{}' overflows 64 bits ({} {} {})", name(op), x, name(op), y);
    };
    std::uint64_t r = 0;
    std::int64_t exact = 0;
    switch (op) {
    case BinaryOp::Add:
        checked(__builtin_add_overflow(x, y, &exact));
        r = ux + uy;
        break;
    case BinaryOp::Subtract:
        checked(__builtin_sub_overflow(x, y, &exact));
        r = ux - uy;
        break;
    case BinaryOp::Multiply:
        checked(__builtin_mul_overflow(x, y, &exact));
        r = ux * uy;
        break;
    case BinaryOp::Divide:
        needDivisor();
        r = static_cast<std::uint64_t>(x / y);
        break;
    case BinaryOp::Modulo:
        needDivisor();
        r = static_cast<std::uint64_t>(x % y);
        break;
    case BinaryOp::CeilDivide:
        needDivisor();
        r = static_cast<std::uint64_t>(ceilDiv(x, y));
        break;
    case BinaryOp::Min:
        r = static_cast<std::uint64_t>(std::min(x, y));
        break;
    case BinaryOp::Max:
        r = static_cast<std::uint64_t>(std::max(x, y));
        break;
    case BinaryOp::Gcd:
        r = static_cast<std::uint64_t>(
            std::gcd(x == std::numeric_limits<std::int64_t>::min() ? 0 : x,
                     y == std::numeric_limits<std::int64_t>::min() ? 0 : y));
        break;
    case BinaryOp::ShiftLeft:
        r = ux << checkedShift(y);
        break;
    case BinaryOp::ShiftRight:
        r = static_cast<std::uint64_t>(x >> checkedShift(y));
        break;
    case BinaryOp::BitwiseAnd:
        r = ux & uy;
        break;
    case BinaryOp::BitwiseOr:
        r = ux | uy;
        break;
    case BinaryOp::BitwiseXor:
        r = ux ^ uy;
        break;
    default: // comparisons and logical operators returned above
        break;
    }
    DataType const resultType = type == DataType::Bool ? DataType::I32 : type;
    return Value::integer(wrap(resultType, r), resultType);
}

ExprPtr scaledByLiteral(ExprPtr const& e, double s) {
    // A product that leaves the range (1e38 * log2 e) is not the same value: 2^(inf * 0) is NaN
    // where exp(1e38 * 0) is 1.
    if (auto const* l = std::get_if<expr::Literal>(e.get())) {
        double const scaled = l->value.asDouble() * s;
        return isFloat(l->value.type) && std::isfinite(scaled) &&
                       std::abs(scaled) <= std::numeric_limits<float>::max()
                   ? literal(Value::real(scaled))
                   : nullptr;
    }
    if (auto const* u = std::get_if<expr::Unary>(e.get()); u && u->op == UnaryOp::Negate)
        if (ExprPtr const arg = scaledByLiteral(u->arg, s))
            return unary(UnaryOp::Negate, arg);
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b)
        return nullptr;
    if (b->op == BinaryOp::Multiply) {
        if (ExprPtr const lhs = scaledByLiteral(b->lhs, s))
            return binary(BinaryOp::Multiply, lhs, b->rhs);
        if (ExprPtr const rhs = scaledByLiteral(b->rhs, s))
            return binary(BinaryOp::Multiply, b->lhs, rhs);
    }
    if (b->op == BinaryOp::Divide)
        if (ExprPtr const lhs = scaledByLiteral(b->lhs, s))
            return binary(BinaryOp::Divide, lhs, b->rhs);
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Subtract) {
        ExprPtr const lhs = scaledByLiteral(b->lhs, s), rhs = scaledByLiteral(b->rhs, s);
        if (lhs && rhs)
            return binary(b->op, lhs, rhs);
    }
    return nullptr;
}

ExprPtr substitute(ExprPtr const& e, std::map<Id, ExprPtr> const& values) {
    return std::visit(
        [&](auto const& node) -> ExprPtr {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Index>) {
                auto const it = values.find(node.dimension);
                return it == values.end() ? e : it->second;
            } else if constexpr (std::is_same_v<T, expr::Unary>) {
                return unary(node.op, substitute(node.arg, values));
            } else if constexpr (std::is_same_v<T, expr::Binary>) {
                return binary(node.op, substitute(node.lhs, values), substitute(node.rhs, values));
            } else if constexpr (std::is_same_v<T, expr::Select>) {
                return select(substitute(node.condition, values), substitute(node.ifTrue, values),
                              substitute(node.ifFalse, values));
            } else if constexpr (std::is_same_v<T, expr::Convert>) {
                return convert(node.type, substitute(node.arg, values));
            } else {
                return e;
            }
        },
        *e);
}

} // namespace kiln
