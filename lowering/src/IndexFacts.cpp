#include "kiln/lowering/IndexFacts.h"

#include "kiln/graph/Evaluate.h"
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

// The value of an integer constant: a literal, or a literal converted to an integer type, which
// is how simplify() writes a constant that keeps its type (`row * 0` folds to i64(0), and
// `col + i64(0)` then to `... + i64(3)`). A broadcast tensor's stride of 0 leaves such constants in
// every offset; read as opaque terms, they hid that consecutive elements are consecutive in
// memory, and each was loaded on its own.
std::optional<std::int64_t> constantInt(ExprPtr const& e) {
    if (auto n = literalInt(e))
        return n;
    auto const* c = e ? std::get_if<expr::Convert>(e.get()) : nullptr;
    if (!c || !isInteger(c->type) || c->type == DataType::Bool ||
        !std::holds_alternative<expr::Literal>(*c->arg))
        return std::nullopt;
    return evaluate(*e).asInt(); // the literal as the type holds it (narrow types wrap)
}

} // namespace

Interval IndexFacts::range(ExprPtr const& e) const {
    using namespace expr;
    if (auto n = constantInt(e))
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
        if (arg && arg->kind == KernelArgument::Kind::Size) {
            if (auto known = sizes_.find(a->name); known != sizes_.end())
                return {known->second, known->second};
            return {0, std::nullopt};
        }
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
            // The smallest quotient is the smallest dividend over the largest divisor, the
            // largest the largest over the smallest (ceildiv(N, 64) is 1 for N = 40, not 0..1).
            bool const ceil = b->op == BinaryOp::CeilDivide;
            auto const quotient = [&](std::int64_t n, std::int64_t d) {
                return ceil ? (n + d - 1) / d : n / d;
            };
            std::int64_t const least = std::max<std::int64_t>(*y.lo, 1);
            Bound hi = x.hi ? std::optional(quotient(*x.hi, least)) : std::nullopt;
            Bound lo = y.hi && *y.hi >= 1 ? std::optional(quotient(*x.lo, *y.hi)) : Bound(0);
            return {lo, hi};
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
    if (auto n = constantInt(e)) {
        if (*n == 0)
            return kMax;
        std::int64_t p = 1;
        while (p < kMax && *n % (p * 2) == 0)
            p *= 2;
        return p;
    }
    if (auto const* a = std::get_if<Argument>(e.get()))
        if (auto known = sizes_.find(a->name); known != sizes_.end())
            return powerOfTwoDivisor(literal(known->second));
    auto const* b = std::get_if<Binary>(e.get());
    if (!b)
        return 1;
    std::int64_t const x = powerOfTwoDivisor(b->lhs), y = powerOfTwoDivisor(b->rhs);
    switch (b->op) {
    case BinaryOp::Add:
    case BinaryOp::Subtract:
    case BinaryOp::Modulo: // x % y = x - (x / y) * y
        return std::min(x, y);
    case BinaryOp::Multiply:
        return std::min(kMax, x * y);
    case BinaryOp::ShiftLeft:
        if (auto s = constantInt(b->rhs); s && *s >= 0 && *s < 20)
            return std::min(kMax, x << *s);
        return x;
    default:
        return 1;
    }
}

namespace {

// Whether two terms are the same product (a * b is b * a).
bool sameTerm(ExprPtr const& a, ExprPtr const& b) {
    if (equal(a, b))
        return true;
    auto const* x = std::get_if<expr::Binary>(a.get());
    auto const* y = std::get_if<expr::Binary>(b.get());
    return x && y && x->op == BinaryOp::Multiply && y->op == BinaryOp::Multiply &&
           equal(x->lhs, y->rhs) && equal(x->rhs, y->lhs);
}

// A sum of terms with integer coefficients and a constant. Sums and differences are opened, and
// so are products with a constant ((k + 1) * 64 is k * 64 + 64), products with a size known at
// launch ((r + 16) * K is r * K + 16 * K, so that rows a fixed number apart differ by a multiple
// of the row length) and remainders by one (x % c is x - (x / c) * c, so a tile's index split
// and put back together cancels).
struct Linear {
    std::vector<std::pair<std::int64_t, ExprPtr>> terms;
    std::int64_t constant = 0;

    void add(ExprPtr const& e, std::int64_t scale) {
        std::int64_t product = 0;
        if (auto n = constantInt(e); n && !__builtin_mul_overflow(scale, *n, &product) &&
                                     !__builtin_add_overflow(constant, product, &product)) {
            constant = product;
            return;
        }
        if (auto const* s = std::get_if<expr::Binary>(e.get())) {
            if (s->op == BinaryOp::Add || s->op == BinaryOp::Subtract) {
                add(s->lhs, scale);
                add(s->rhs, s->op == BinaryOp::Add ? scale : -scale);
                return;
            }
            std::int64_t scaled = 0;
            if (s->op == BinaryOp::Modulo) {
                if (auto n = constantInt(s->rhs);
                    n && *n != 0 && !__builtin_mul_overflow(scale, -*n, &scaled)) {
                    add(s->lhs, scale);
                    add(binary(BinaryOp::Divide, s->lhs, s->rhs), scaled);
                    return;
                }
            }
            if (s->op == BinaryOp::Multiply) {
                if (auto n = constantInt(s->rhs);
                    n && !__builtin_mul_overflow(scale, *n, &scaled)) {
                    add(s->lhs, scaled);
                    return;
                }
                if (auto n = constantInt(s->lhs);
                    n && !__builtin_mul_overflow(scale, *n, &scaled)) {
                    add(s->rhs, scaled);
                    return;
                }
                for (auto const& [size, other] : {std::pair{s->rhs, s->lhs}, {s->lhs, s->rhs}})
                    if (evaluationTime(*size) == EvaluationTime::KernelLaunch &&
                        distribute(other, size, scale))
                        return;
            }
        }
        term(e, scale);
    }

    // scale * other * size, `other` opened; false when it does not open (a single term).
    bool distribute(ExprPtr const& other, ExprPtr const& size, std::int64_t scale) {
        Linear inner;
        inner.add(other, 1);
        if (inner.constant == 0 && inner.terms.size() == 1 && inner.terms[0].first == 1)
            return false;
        std::vector<std::pair<std::int64_t, ExprPtr>> scaled;
        std::int64_t c = 0;
        for (auto const& [coefficient, t] : inner.terms) {
            if (__builtin_mul_overflow(scale, coefficient, &c))
                return false;
            scaled.emplace_back(c, binary(BinaryOp::Multiply, t, size));
        }
        if (inner.constant != 0) {
            if (__builtin_mul_overflow(scale, inner.constant, &c))
                return false;
            scaled.emplace_back(c, size);
        }
        for (auto const& [coefficient, t] : scaled)
            term(t, coefficient);
        return true;
    }

    void term(ExprPtr const& e, std::int64_t scale) {
        for (auto& t : terms) {
            std::int64_t sum = 0;
            if (sameTerm(t.second, e) && !__builtin_add_overflow(t.first, scale, &sum)) {
                t.first = sum;
                return;
            }
        }
        terms.emplace_back(scale, e);
    }
};

} // namespace

std::optional<std::int64_t> IndexFacts::difference(ExprPtr const& a, ExprPtr const& b) {
    Linear x;
    x.add(simplify(a), 1);
    x.add(simplify(b), -1);
    for (auto const& term : x.terms)
        if (term.first != 0)
            return std::nullopt;
    return x.constant;
}

ExprPtr IndexFacts::launchTimeDifference(ExprPtr const& a, ExprPtr const& b) {
    Linear x;
    x.add(simplify(a), 1);
    x.add(simplify(b), -1);
    ExprPtr d = literal(x.constant);
    for (auto const& [coefficient, term] : x.terms) {
        if (coefficient == 0)
            continue;
        if (evaluationTime(*term) == EvaluationTime::KernelExecute)
            return nullptr;
        d = d + literal(coefficient) * term;
    }
    return simplify(d);
}

std::vector<ExprPtr> IndexFacts::alignedWhen(ExprPtr const& offset, std::int64_t width) const {
    auto const aligned = [&](ExprPtr const& e) {
        return binary(BinaryOp::Equal, e % literal(width), literal(0));
    };
    if (powerOfTwoDivisor(offset) >= width)
        return {};
    Linear x;
    x.add(simplify(offset), 1);
    if (x.constant % width != 0)
        return {aligned(offset)};
    std::vector<ExprPtr> out;
    auto const push = [&](ExprPtr const& c) {
        if (std::none_of(out.begin(), out.end(), [&](ExprPtr const& o) { return equal(o, c); }))
            out.push_back(c);
    };
    for (auto const& [coefficient, term] : x.terms) {
        if (coefficient == 0 ||
            powerOfTwoDivisor(literal(coefficient)) * powerOfTwoDivisor(term) >= width)
            continue;
        // A product with a size known at launch is aligned when the size is.
        auto const* product = std::get_if<expr::Binary>(term.get());
        if (product && product->op == BinaryOp::Multiply) {
            ExprPtr const* size = nullptr;
            for (ExprPtr const* f : {&product->lhs, &product->rhs})
                if (evaluationTime(**f) == EvaluationTime::KernelLaunch)
                    size = f;
            if (size) {
                push(aligned(*size));
                continue;
            }
        }
        push(aligned(simplify(literal(coefficient) * term)));
    }
    return out;
}

std::vector<ExprPtr> IndexFacts::strongest(std::vector<ExprPtr> const& conditions) {
    std::vector<ExprPtr> out;
    for (auto const& c : conditions) {
        auto const* b = std::get_if<expr::Binary>(c.get());
        bool const bound = b && (b->op == BinaryOp::Less || b->op == BinaryOp::GreaterEqual);
        bool implied = false;
        for (auto& kept : out) {
            if (equal(kept, c)) {
                implied = true;
                break;
            }
            auto const* k = std::get_if<expr::Binary>(kept.get());
            if (!bound || !k || k->op != b->op || !equal(k->rhs, b->rhs))
                continue;
            auto const d = difference(b->lhs, k->lhs);
            if (!d)
                continue;
            // For `<` the larger left side implies the other; for `>=` the smaller one.
            if ((b->op == BinaryOp::Less) == (*d > 0))
                kept = c;
            implied = true;
            break;
        }
        if (!implied)
            out.push_back(c);
    }
    return out;
}

namespace {

// `e < bound` as its two sides, or nothing.
std::optional<std::pair<ExprPtr, ExprPtr>> lessThan(ExprPtr const& e) {
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b || b->op != BinaryOp::Less)
        return std::nullopt;
    return std::pair{b->lhs, b->rhs};
}

// The two factors of a product, either way round.
std::vector<std::pair<ExprPtr, ExprPtr>> factorings(ExprPtr const& e) {
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b || b->op != BinaryOp::Multiply)
        return {};
    return {{b->lhs, b->rhs}, {b->rhs, b->lhs}};
}

} // namespace

bool IndexFacts::impliedBy(ExprPtr const& condition, std::vector<ExprPtr> const& others) const {
    auto const cond = lessThan(condition);
    if (!cond)
        return false;
    // x / s < m from y < m * s where y >= x, for x >= 0 (and s > 0, wherever x / s is defined):
    // x / s <= y / s < m. A row of a flattened index is inside when the flattened index is.
    if (auto const* q = std::get_if<expr::Binary>(cond->first.get());
        q && q->op == BinaryOp::Divide && nonNegative(q->lhs) && nonNegative(q->rhs)) {
        for (auto const& o : others) {
            auto const l = lessThan(o);
            auto const past = l ? difference(l->first, q->lhs) : std::nullopt;
            if (!past || *past < 0)
                continue;
            for (auto const& [m, s] : factorings(l->second))
                if (equal(m, cond->second) && equal(s, q->rhs))
                    return true;
        }
    }
    auto const* sum = std::get_if<expr::Binary>(cond->first.get());
    if (!sum || sum->op != BinaryOp::Add)
        return false;
    auto const holds = [&](ExprPtr const& lhs, ExprPtr const& rhs) {
        return std::any_of(others.begin(), others.end(), [&](ExprPtr const& o) {
            auto const l = lessThan(o);
            return l && equal(l->first, lhs) && equal(l->second, rhs);
        });
    };
    // a * s + b < m * s from a < m and b < s, for s >= 0: a * s + b < (m - 1) * s + s.
    for (auto const& [product, b] : {std::pair{sum->lhs, sum->rhs}, {sum->rhs, sum->lhs}})
        for (auto const& [a, s] : factorings(product))
            for (auto const& [m, t] : factorings(cond->second))
                if (equal(s, t) && nonNegative(s) && holds(a, m) && holds(b, s))
                    return true;
    return false;
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

namespace {

// The terms of a sum (a + b + ...), in order.
void terms(ExprPtr const& e, std::vector<ExprPtr>& out) {
    if (auto const* b = std::get_if<expr::Binary>(e.get()); b && b->op == BinaryOp::Add) {
        terms(b->lhs, out);
        terms(b->rhs, out);
        return;
    }
    out.push_back(e);
}

ExprPtr sum(std::vector<ExprPtr> const& parts) {
    if (parts.empty())
        return literal(0);
    ExprPtr s = parts.front();
    for (std::size_t k = 1; k < parts.size(); ++k)
        s = s + parts[k];
    return s;
}

// t / c when t is a multiple of c that says so (x * c, x * (c * d), a literal), else null.
ExprPtr exactQuotient(ExprPtr const& t, std::int64_t c) {
    if (auto v = literalInt(t))
        return *v % c == 0 ? literal(*v / c) : nullptr;
    auto const* b = std::get_if<expr::Binary>(t.get());
    if (!b || b->op != BinaryOp::Multiply)
        return nullptr;
    if (auto m = literalInt(b->rhs); m && *m % c == 0)
        return simplify(b->lhs * literal(*m / c));
    if (auto m = literalInt(b->lhs); m && *m % c == 0)
        return simplify(b->rhs * literal(*m / c));
    return nullptr;
}

} // namespace

ExprPtr IndexFacts::reduce(ExprPtr const& e) const {
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b)
        return e;
    ExprPtr const lhs = reduce(b->lhs), rhs = reduce(b->rhs);
    auto const c = constantInt(rhs);
    bool const integer = isInteger(resultType(*lhs)) && isInteger(resultType(*rhs));
    if (integer && c && *c > 0 && (b->op == BinaryOp::Divide || b->op == BinaryOp::Modulo)) {
        bool const modulo = b->op == BinaryOp::Modulo;
        Interval const r = range(lhs);
        if (r.lo && *r.lo >= 0 && r.hi && *r.hi < *c)
            return modulo ? lhs : literal(0);
        // Split the sum into multiples of c and the rest; both must be non-negative.
        std::vector<ExprPtr> parts, multiples, rest;
        terms(lhs, parts);
        for (auto const& t : parts) {
            if (ExprPtr q = exactQuotient(t, *c))
                multiples.push_back(q);
            else
                rest.push_back(t);
        }
        ExprPtr const quotient = sum(multiples), remainder = sum(rest);
        if (!multiples.empty() && nonNegative(quotient) && nonNegative(remainder)) {
            ExprPtr const r2 = reduce(simplify(binary(b->op, remainder, rhs)));
            return modulo ? r2 : simplify(quotient + r2);
        }
    }
    if (lhs == b->lhs && rhs == b->rhs)
        return e;
    return simplify(binary(b->op, lhs, rhs));
}

} // namespace kiln::lowering
