#include "kiln/lowering/IndexFacts.h"

#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace kiln::lowering {

namespace {

using Bound = std::optional<std::int64_t>;

constexpr std::int64_t kLimit = std::int64_t{1} << 40; // beyond this, stop tracking

Bound add(Bound a, Bound b) {
    std::int64_t r = 0;
    if (!a || !b || __builtin_add_overflow(*a, *b, &r) || r > kLimit || r < -kLimit)
        return std::nullopt;
    return r;
}

Bound multiply(Bound a, Bound b) {
    std::int64_t r = 0;
    if (!a || !b || __builtin_mul_overflow(*a, *b, &r) || r > kLimit || r < -kLimit)
        return std::nullopt;
    return r;
}

} // namespace

Interval IndexFacts::range(ExprPtr const& e) const {
    using namespace expr;
    if (auto n = literalInt(e))
        return {*n, *n};
    if (auto const* i = std::get_if<Index>(e.get())) {
        auto const& size = graph_.coordinates.node(i->dimension).size;
        Interval const s = size ? range(size) : Interval{};
        return {0, s.hi ? std::optional(*s.hi - 1) : std::nullopt};
    }
    if (auto const* s = std::get_if<DimensionSize>(e.get())) {
        auto const& size = graph_.coordinates.node(s->dimension).size;
        return size ? range(size) : Interval{0, std::nullopt};
    }
    if (auto const* a = std::get_if<Argument>(e.get())) {
        auto const* arg = graph_.findArgument(a->name);
        if (arg && arg->kind == KernelArgument::Kind::Size)
            return {0, std::nullopt};
        return {};
    }
    auto const* b = std::get_if<Binary>(e.get());
    if (!b)
        return {};
    Interval const x = range(b->lhs), y = range(b->rhs);
    // A divisor that is not negative is positive wherever the division is defined.
    bool const xNonNeg = x.lo && *x.lo >= 0, yPositive = y.lo && *y.lo >= 0;
    switch (b->op) {
    case BinaryOp::Add:
        return {add(x.lo, y.lo), add(x.hi, y.hi)};
    case BinaryOp::Subtract:
        return {add(x.lo, y.hi ? std::optional(-*y.hi) : std::nullopt),
                add(x.hi, y.lo ? std::optional(-*y.lo) : std::nullopt)};
    case BinaryOp::Multiply:
        if (xNonNeg && y.lo && *y.lo >= 0)
            return {multiply(x.lo, y.lo), multiply(x.hi, y.hi)};
        return {};
    case BinaryOp::Divide:
    case BinaryOp::CeilDivide:
        if (xNonNeg && yPositive) {
            Bound hi = x.hi;
            std::int64_t const divisor = std::max<std::int64_t>(*y.lo, 1);
            if (hi && b->op == BinaryOp::CeilDivide)
                hi = (*hi + divisor - 1) / divisor;
            else if (hi)
                hi = *hi / divisor;
            return {0, hi};
        }
        return {};
    case BinaryOp::Modulo:
        if (xNonNeg && yPositive)
            return {0, y.hi ? std::optional(std::min(*y.hi - 1, x.hi.value_or(*y.hi - 1))) : x.hi};
        return {};
    case BinaryOp::Min:
        return {x.lo && y.lo ? std::optional(std::min(*x.lo, *y.lo)) : std::nullopt,
                x.hi && y.hi ? std::optional(std::min(*x.hi, *y.hi))
                : x.hi       ? x.hi
                             : y.hi};
    case BinaryOp::Max:
        return {x.lo && y.lo ? std::optional(std::max(*x.lo, *y.lo))
                : x.lo       ? x.lo
                             : y.lo,
                x.hi && y.hi ? std::optional(std::max(*x.hi, *y.hi)) : std::nullopt};
    default:
        return {};
    }
}

std::int64_t IndexFacts::powerOfTwoDivisor(ExprPtr const& e) const {
    constexpr std::int64_t kMax = std::int64_t{1} << 20;
    using namespace expr;
    if (auto n = literalInt(e)) {
        if (*n == 0)
            return kMax;
        std::int64_t p = 1;
        while (p < kMax && *n % (p * 2) == 0)
            p *= 2;
        return p;
    }
    auto const* b = std::get_if<Binary>(e.get());
    if (!b)
        return 1;
    std::int64_t const x = powerOfTwoDivisor(b->lhs), y = powerOfTwoDivisor(b->rhs);
    switch (b->op) {
    case BinaryOp::Add:
    case BinaryOp::Subtract:
        return std::min(x, y);
    case BinaryOp::Multiply:
        return std::min(kMax, x * y);
    case BinaryOp::ShiftLeft:
        if (auto s = literalInt(b->rhs); s && *s >= 0 && *s < 20)
            return std::min(kMax, x << *s);
        return x;
    default:
        return 1;
    }
}

std::optional<std::int64_t> IndexFacts::difference(ExprPtr const& a, ExprPtr const& b) {
    // e = base + constant, the constant 0 when e has no literal term.
    auto split = [](ExprPtr const& e) -> std::pair<ExprPtr, std::int64_t> {
        if (auto n = literalInt(e))
            return {nullptr, *n};
        if (auto const* s = std::get_if<expr::Binary>(e.get())) {
            if (auto n = literalInt(s->rhs); n && s->op == BinaryOp::Add)
                return {s->lhs, *n};
            if (auto n = literalInt(s->rhs); n && s->op == BinaryOp::Subtract)
                return {s->lhs, -*n};
        }
        return {e, 0};
    };
    auto const [x, i] = split(simplify(a));
    auto const [y, j] = split(simplify(b));
    if ((!x && !y) || (x && y && equal(x, y)))
        return i - j;
    return std::nullopt;
}

bool IndexFacts::nonNegative(ExprPtr const& e) const {
    auto const r = range(e);
    return r.lo && *r.lo >= 0;
}

bool IndexFacts::less(ExprPtr const& e, ExprPtr const& bound) const {
    using namespace expr;
    Interval const x = range(e), y = range(bound);
    if (x.hi && y.lo && *x.hi < *y.lo)
        return true;
    // An index is below its own dimension's size, and below any size written the same way.
    if (auto const* i = std::get_if<Index>(e.get())) {
        auto const& size = graph_.coordinates.node(i->dimension).size;
        if (size && equal(simplify(size), simplify(bound)))
            return true;
    }
    // x % b < b
    if (auto const* m = std::get_if<Binary>(e.get());
        m && m->op == BinaryOp::Modulo && equal(m->rhs, bound) && nonNegative(m->lhs))
        return true;
    return false;
}

} // namespace kiln::lowering
