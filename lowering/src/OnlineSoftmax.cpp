// OnlineSoftmax.cpp: the max-then-exp-sum of OnlineSoftmax.h, found by what the operations of
// a KernelGraph compute.
#include "kiln/lowering/OnlineSoftmax.h"

#include <fmt/format.h>

namespace kiln::lowering {

namespace {

// The operations whose `role` is `d`.
std::vector<Id> operationsWith(KernelGraph const& graph, char const* role, Id d) {
    std::vector<Id> ops;
    for (Id op : graph.control.nodes())
        if (auto const at = graph.mapping.find(op, role); at && *at == d)
            ops.push_back(op);
    return ops;
}

// Whether `e` is value `d` as f32: the value itself when it is f32, else its conversion to f32
// (exact from f16 and bf16, and monotone, so that the f32 of the max is the max of the f32s).
bool asF32(KernelGraph const& graph, ExprPtr const& e, Id d) {
    auto const* convert = std::get_if<expr::Convert>(e.get());
    ExprPtr const inner = convert && convert->type == DataType::F32 ? convert->arg : e;
    auto const* value = std::get_if<expr::DataValue>(inner.get());
    return value && value->dimension == d &&
           (convert || graph.coordinates.node(d).dtype == DataType::F32);
}

bool sameShape(KernelGraph const& graph, Id a, Id b) {
    auto const& x = graph.coordinates.node(a).shape;
    auto const& y = graph.coordinates.node(b).shape;
    if (x.empty() || x.size() != y.size())
        return false;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (!x[i] || !y[i] || !equal(x[i], y[i]))
            return false;
    return true;
}

} // namespace

std::optional<MaxExpSum> findMaxExpSum(KernelGraph const& graph, Id maxOp, std::string* why) {
    auto const refuse = [&](std::string reason) -> std::optional<MaxExpSum> {
        if (why)
            *why = std::move(reason);
        return std::nullopt;
    };
    Operation const& reduceMax = graph.control.node(maxOp);
    if (reduceMax.kind != OperationKind::Reduce || reduceMax.combine != Combine::Max)
        return refuse(fmt::format("operation #{} is not a Reduce max", maxOp));
    MaxExpSum p;
    p.maxOp = maxOp;
    p.rows = graph.mapping.get(maxOp, role::source);
    p.max = graph.mapping.get(maxOp, role::dest);
    std::string reason =
        fmt::format("no Assign computes exp(f32(value#{}) - f32(value#{}))", p.rows, p.max);
    for (Id op : graph.control.nodes()) {
        Operation const& o = graph.control.node(op);
        if (o.kind != OperationKind::Assign || !o.expression)
            continue;
        auto const* exp = std::get_if<expr::Unary>(o.expression.get());
        if (!exp || exp->op != UnaryOp::Exp)
            continue;
        auto const* difference = std::get_if<expr::Binary>(exp->arg.get());
        if (!difference || difference->op != BinaryOp::Subtract ||
            difference->lhs->typing().type != DataType::F32 ||
            !asF32(graph, difference->lhs, p.rows) || !asF32(graph, difference->rhs, p.max))
            continue;
        Id const exps = graph.mapping.get(op, role::dest);
        // Computed element by element from the rows, once (not an accumulator), in f32.
        if (graph.coordinates.node(exps).dtype != DataType::F32 ||
            !sameShape(graph, exps, p.rows) || operationsWith(graph, role::dest, exps).size() != 1)
            continue;
        reason =
            fmt::format("no Reduce sums value#{}, the exp(x - max) of operation #{}", exps, op);
        for (Id sumOp : operationsWith(graph, role::source, exps)) {
            Operation const& reduceSum = graph.control.node(sumOp);
            if (reduceSum.kind != OperationKind::Reduce || reduceSum.combine != Combine::Sum)
                continue;
            Id const sum = graph.mapping.get(sumOp, role::dest);
            if (!sameShape(graph, sum, p.max))
                continue;
            p.expOp = op;
            p.exps = exps;
            p.sumOp = sumOp;
            p.sum = sum;
            return p;
        }
    }
    return refuse(std::move(reason));
}

std::vector<MaxExpSum> findMaxExpSums(KernelGraph const& graph) {
    std::vector<MaxExpSum> found;
    for (Id op : graph.control.nodes())
        if (graph.control.node(op).kind == OperationKind::Reduce)
            if (auto p = findMaxExpSum(graph, op))
                found.push_back(*p);
    return found;
}

bool onlineSoftmax(KernelGraph const& graph, CodegenOptions const& options) {
    auto const online = options.schedule.find("ONLINE");
    if (online == options.schedule.end() || online->second == 0)
        return false;
    if (!findMaxExpSums(graph).empty())
        return true;
    std::string why = "it has no Reduce max";
    for (Id op : graph.control.nodes())
        if (graph.control.node(op).kind == OperationKind::Reduce &&
            graph.control.node(op).combine == Combine::Max) {
            findMaxExpSum(graph, op, &why);
            break;
        }
    throw UserError(fmt::format("ONLINE=1 computes a row's max and its sum of exp(x - max) in one "
                                "pass, but kernel '{}' has no such pair ({}); use ONLINE=0",
                                graph.name, why));
}

} // namespace kiln::lowering
