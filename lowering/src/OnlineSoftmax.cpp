// OnlineSoftmax.cpp: the max-then-exp-sum of OnlineSoftmax.h, found by what the operations of
// a KernelGraph compute.
#include "kiln/lowering/OnlineSoftmax.h"

#include "RowPatterns.h"
#include "kiln/lowering/MeanVariance.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering {

using detail::asF32;
using detail::operationsWith;
using detail::sameShape;

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

bool onlineStatistics(KernelGraph const& graph, CodegenOptions const& options) {
    auto const online = options.schedule.find("ONLINE");
    if (online == options.schedule.end() || online->second == 0)
        return false;
    if (!findMaxExpSums(graph).empty() || !findMeanVariances(graph).empty())
        return true;
    // What the first Reduce max, else the first Reduce mean, lacks.
    std::string why = "it has no Reduce max or mean";
    auto const ops = graph.control.nodes();
    for (Combine const combine : {Combine::Max, Combine::Mean}) {
        auto const first = std::find_if(ops.begin(), ops.end(), [&](Id op) {
            Operation const& o = graph.control.node(op);
            return o.kind == OperationKind::Reduce && o.combine == combine;
        });
        if (first == ops.end())
            continue;
        if (combine == Combine::Max)
            findMaxExpSum(graph, *first, &why);
        else
            findMeanVariance(graph, *first, &why);
        break;
    }
    throw UserError(fmt::format("ONLINE={} computes a row's max and its sum of exp(x - max), or "
                                "its mean and variance, in one pass, but kernel '{}' has no such "
                                "pair ({}); use ONLINE=0",
                                online->second, graph.name, why));
}

} // namespace kiln::lowering
