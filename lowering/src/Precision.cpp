// Precision.cpp: the rule of Precision.h, over the KernelGraph's readers of each value.
#include "kiln/lowering/Precision.h"

#include "OperationOrder.h"
#include "kiln/graph/ExpressionText.h"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <set>
#include <vector>

namespace kiln::lowering {

namespace {

bool isHalf(std::optional<DataType> type) {
    return type == DataType::F16 || type == DataType::BF16;
}

bool isStore(OperationKind kind) {
    return kind == OperationKind::StoreTiled || kind == OperationKind::StoreLinear;
}

// Whether `value` is assigned by more than one operation (an accumulator: initialized, then
// updated from itself, ab = ab + product), whose errors would add up over its updates.
bool accumulates(KernelGraph const& graph, Id value) {
    int writers = 0;
    for (Id op : graph.control.nodes()) {
        auto const kind = graph.control.node(op).kind;
        if (kind == OperationKind::Kernel || kind == OperationKind::ForLoop ||
            kind == OperationKind::If || isStore(kind))
            continue;
        if (auto const dest = graph.mapping.find(op, role::dest); dest && *dest == value)
            ++writers;
    }
    return writers > 1;
}

// Whether the value that Assign `op` computes tolerates approximate functions; `visiting`
// holds the Assigns on the way here (a cycle is an accumulator: exact).
bool tolerates(KernelGraph const& graph, Id op, std::set<Id>& visiting) {
    auto const dest = graph.mapping.find(op, role::dest);
    if (!dest || !visiting.insert(op).second)
        return false;
    auto const& d = graph.coordinates.node(*dest);
    bool ok = true;
    if (accumulates(graph, *dest)) {
        ok = false;
    } else if (isHalf(d.dtype)) {
        ok = true;
    } else if (d.dtype != DataType::F32) {
        ok = false;
    } else {
        bool read = false;
        for (Id reader : graph.control.nodes()) {
            auto const kind = graph.control.node(reader).kind;
            // Readers are the operations themselves, not the loops and branches around them.
            if (kind == OperationKind::Kernel || kind == OperationKind::ForLoop ||
                kind == OperationKind::If || !detail::readsValue(graph, reader, *dest))
                continue;
            read = true;
            if (kind == OperationKind::Assign) {
                auto const next = graph.mapping.find(reader, role::dest);
                ok = next && *next != *dest && tolerates(graph, reader, visiting);
            } else if (isStore(kind)) {
                Id const memory = graph.mapping.get(reader, role::dest);
                auto const* tensor = graph.findArgument(graph.coordinates.node(memory).name);
                ok = tensor && isHalf(tensor->dtype);
            } else {
                ok = false; // reduced, multiplied, staged: its error would not stay local
            }
            if (!ok)
                break;
        }
        ok = ok && read;
    }
    visiting.erase(op);
    return ok;
}

bool isOne(ExprPtr const& e) {
    auto const* l = std::get_if<expr::Literal>(e.get());
    return l && l->value.asDouble() == 1.0;
}

bool isTanh(ExprPtr const& e) {
    auto const* u = std::get_if<expr::Unary>(e.get());
    return u && u->op == UnaryOp::Tanh;
}

// 2 / (1 + exp(sign * 2u)), in u's type (the literals are weak).
ExprPtr twiceSigmoid(ExprPtr const& tanh, char const* sign) {
    struct Operand : NameResolver {
        ExprPtr u;
        ExprPtr name(std::string_view n) const override { return n == "u" ? u : nullptr; }
    } operand;
    operand.u = std::get<expr::Unary>(*tanh).arg;
    return parseExpression(fmt::format("2.0 / (1.0 + exp({}2.0 * u))", sign), operand);
}

// 1 + tanh(u) as 2 / (1 + exp(-2u)), 1 - tanh(u) as 2 / (1 + exp(2u)), anywhere in `e`.
ExprPtr quotientsForTanh(ExprPtr const& e) {
    ExprPtr const mapped = mapOperands(e, quotientsForTanh);
    if (auto const* node = std::get_if<expr::Binary>(mapped.get())) {
        ExprPtr const &lhs = node->lhs, &rhs = node->rhs;
        if (node->op == BinaryOp::Add && isOne(lhs) && isTanh(rhs))
            return twiceSigmoid(rhs, "-");
        if (node->op == BinaryOp::Add && isTanh(lhs) && isOne(rhs))
            return twiceSigmoid(lhs, "-");
        if (node->op == BinaryOp::Subtract && isOne(lhs) && isTanh(rhs))
            return twiceSigmoid(rhs, "");
    }
    return mapped;
}

bool isF32(ExprPtr const& e) {
    return resultType(*e) == DataType::F32;
}

// Whether `e` is an f32 product, quotient or negation.
bool isProduct(ExprPtr const& e) {
    if (!isF32(e))
        return false;
    if (auto const* b = std::get_if<expr::Binary>(e.get()))
        return b->op == BinaryOp::Multiply || b->op == BinaryOp::Divide;
    auto const* u = std::get_if<expr::Unary>(e.get());
    return u && u->op == UnaryOp::Negate;
}

// `e` with foldFactors() applied to its operands.
ExprPtr foldChildren(ExprPtr const& e) {
    return mapOperands(e, foldFactors);
}

// An f32 product's factors: the literal ones (a literal numerator of a quotient and a negation
// count as such) multiplied into `coefficient`, the others in `factors` in their order, each
// folded itself; `literals` counts the literal ones.
void collectFactors(ExprPtr const& e, double& coefficient, int& literals,
                    std::vector<ExprPtr>& factors) {
    if (auto const* l = std::get_if<expr::Literal>(e.get()); l && isFloat(l->value.type)) {
        coefficient *= l->value.asDouble();
        ++literals;
        return;
    }
    if (isF32(e)) {
        if (auto const* b = std::get_if<expr::Binary>(e.get())) {
            if (b->op == BinaryOp::Multiply) {
                collectFactors(b->lhs, coefficient, literals, factors);
                collectFactors(b->rhs, coefficient, literals, factors);
                return;
            }
            auto const* numerator = std::get_if<expr::Literal>(b->lhs.get());
            if (b->op == BinaryOp::Divide && numerator && isFloat(numerator->value.type) &&
                numerator->value.asDouble() != 0) {
                coefficient *= numerator->value.asDouble();
                ++literals;
                factors.push_back(
                    binary(BinaryOp::Divide, literal(Value::real(1.0)), foldFactors(b->rhs)));
                return;
            }
        }
        if (auto const* u = std::get_if<expr::Unary>(e.get()); u && u->op == UnaryOp::Negate) {
            coefficient = -coefficient;
            ++literals;
            collectFactors(u->arg, coefficient, literals, factors);
            return;
        }
    }
    factors.push_back(foldChildren(e));
}

// `e` as a * x^k (k >= 1): an f32 product of literal factors (a; 1 where none) and k copies of
// one other expression x.
struct Monomial {
    double coefficient = 1;
    ExprPtr base;
    int degree = 0;
};

std::optional<Monomial> monomial(ExprPtr const& e) {
    Monomial m;
    int literals = 0;
    std::vector<ExprPtr> factors;
    collectFactors(e, m.coefficient, literals, factors);
    if (factors.empty() || !std::isfinite(m.coefficient))
        return std::nullopt;
    for (ExprPtr const& f : factors)
        if (!equal(f, factors.front()))
            return std::nullopt;
    m.base = factors.front();
    m.degree = static_cast<int>(factors.size());
    return m;
}

// The terms of an f32 sum (of Adds and Subtracts), each with its sign.
void collectTerms(ExprPtr const& e, bool negative, std::vector<std::pair<bool, ExprPtr>>& terms) {
    if (auto const* b = std::get_if<expr::Binary>(e.get());
        b && isF32(e) && (b->op == BinaryOp::Add || b->op == BinaryOp::Subtract)) {
        collectTerms(b->lhs, negative, terms);
        collectTerms(b->rhs, b->op == BinaryOp::Subtract ? !negative : negative, terms);
        return;
    }
    terms.emplace_back(negative, e);
}

// c * (a1 x^k1 + a2 x^k2 + ...), every ki >= 1 and one of them 2 or more, as
// x * (c a1 x^(k1 - 1) + c a2 x^(k2 - 1) + ...): the tanh-GELU's c * (x + a x^3) becomes
// x * (c + c a (x * x)), a multiply, an fma and a multiply instead of three multiplies, an fma and
// a multiply (and the exp's log2 e goes into its literals, PtxWriter). Anywhere in `e`.
ExprPtr factorPolynomials(ExprPtr const& e) {
    ExprPtr const mapped = mapOperands(e, factorPolynomials);
    auto const* product = std::get_if<expr::Binary>(mapped.get());
    if (!product || product->op != BinaryOp::Multiply || !isF32(mapped))
        return mapped;
    for (auto const& [c, sum] :
         {std::pair{product->lhs, product->rhs}, {product->rhs, product->lhs}}) {
        auto const* scale = std::get_if<expr::Literal>(c.get());
        if (!scale || !isFloat(scale->value.type))
            continue;
        std::vector<std::pair<bool, ExprPtr>> terms;
        collectTerms(sum, false, terms);
        std::vector<Monomial> monomials;
        for (auto const& [negative, term] : terms) {
            auto m = monomial(term);
            if (!m || (!monomials.empty() && !equal(m->base, monomials.front().base)))
                return mapped;
            m->coefficient *= (negative ? -1 : 1) * scale->value.asDouble();
            if (!std::isfinite(m->coefficient) ||
                std::abs(m->coefficient) > std::numeric_limits<float>::max())
                return mapped; // c a outside f32: as written
            monomials.push_back(*m);
        }
        if (terms.size() < 2 || std::none_of(monomials.begin(), monomials.end(),
                                             [](Monomial const& m) { return m.degree >= 2; }))
            return mapped;
        ExprPtr const x = monomials.front().base;
        ExprPtr inner;
        for (Monomial const& m : monomials) {
            ExprPtr term = literal(Value::real(m.coefficient));
            if (m.degree > 1) {
                ExprPtr power = x;
                for (int k = 2; k < m.degree; ++k)
                    power = binary(BinaryOp::Multiply, power, x);
                term = binary(BinaryOp::Multiply, term, power);
            }
            inner = inner ? binary(BinaryOp::Add, inner, term) : term;
        }
        return binary(BinaryOp::Multiply, x, inner);
    }
    return mapped;
}

} // namespace

ExprPtr foldFactors(ExprPtr const& e) {
    if (!e)
        return e;
    if (isProduct(e)) {
        double coefficient = 1;
        int literals = 0;
        std::vector<ExprPtr> factors;
        collectFactors(e, coefficient, literals, factors);
        // Two literal factors or more, none of them 0, and something else to multiply.
        if (literals >= 2 && coefficient != 0 && std::isfinite(coefficient) && !factors.empty()) {
            ExprPtr folded = factors.front();
            for (std::size_t k = 1; k < factors.size(); ++k)
                folded = binary(BinaryOp::Multiply, folded, factors[k]);
            return coefficient == 1
                       ? folded
                       : binary(BinaryOp::Multiply, literal(Value::real(coefficient)), folded);
        }
    }
    return foldChildren(e);
}

Precision assignPrecision(KernelGraph const& graph, Id op) {
    std::set<Id> visiting;
    return tolerates(graph, op, visiting) ? Precision::Approximate : Precision::Exact;
}

ExprPtr forPrecision(ExprPtr const& e, Precision precision) {
    if (precision == Precision::Exact || !e)
        return e;
    return factorPolynomials(foldFactors(quotientsForTanh(e)));
}

} // namespace kiln::lowering
