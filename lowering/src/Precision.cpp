// Precision.cpp: the rule of Precision.h, over the KernelGraph's readers of each value.
#include "kiln/lowering/Precision.h"

#include "OperationOrder.h"
#include "kiln/graph/ExpressionText.h"

#include <fmt/format.h>
#include <set>

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

} // namespace

Precision assignPrecision(KernelGraph const& graph, Id op) {
    std::set<Id> visiting;
    return tolerates(graph, op, visiting) ? Precision::Approximate : Precision::Exact;
}

ExprPtr forPrecision(ExprPtr const& e, Precision precision) {
    if (precision == Precision::Exact || !e)
        return e;
    return std::visit(
        [&](auto const& node) -> ExprPtr {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Binary>) {
                ExprPtr const lhs = forPrecision(node.lhs, precision),
                              rhs = forPrecision(node.rhs, precision);
                if (node.op == BinaryOp::Add && isOne(lhs) && isTanh(rhs))
                    return twiceSigmoid(rhs, "-");
                if (node.op == BinaryOp::Add && isTanh(lhs) && isOne(rhs))
                    return twiceSigmoid(lhs, "-");
                if (node.op == BinaryOp::Subtract && isOne(lhs) && isTanh(rhs))
                    return twiceSigmoid(rhs, "");
                return lhs == node.lhs && rhs == node.rhs ? e : binary(node.op, lhs, rhs);
            } else if constexpr (std::is_same_v<T, expr::Unary>) {
                ExprPtr const arg = forPrecision(node.arg, precision);
                return arg == node.arg ? e : unary(node.op, arg);
            } else if constexpr (std::is_same_v<T, expr::Convert>) {
                ExprPtr const arg = forPrecision(node.arg, precision);
                return arg == node.arg ? e : convert(node.type, arg);
            } else if constexpr (std::is_same_v<T, expr::Select>) {
                ExprPtr const c = forPrecision(node.condition, precision),
                              t = forPrecision(node.ifTrue, precision),
                              f = forPrecision(node.ifFalse, precision);
                return c == node.condition && t == node.ifTrue && f == node.ifFalse
                           ? e
                           : select(c, t, f);
            } else {
                return e;
            }
        },
        static_cast<Expression::variant const&>(*e));
}

} // namespace kiln::lowering
