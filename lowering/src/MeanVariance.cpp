// MeanVariance.cpp: the mean-then-variance of MeanVariance.h, found by what the operations of a
// KernelGraph compute.
#include "kiln/lowering/MeanVariance.h"

#include "RowPatterns.h"

#include <fmt/format.h>

namespace kiln::lowering {

using detail::asF32;
using detail::operationsWith;
using detail::sameShape;

namespace {

// Whether Assign `op` computes, once and in f32, a value of the shape of `like`; its dest.
std::optional<Id> elementwiseF32(KernelGraph const& graph, Id op, Id like) {
    Id const dest = graph.mapping.get(op, role::dest);
    if (graph.coordinates.node(dest).dtype != DataType::F32 || !sameShape(graph, dest, like) ||
        operationsWith(graph, role::dest, dest).size() != 1)
        return std::nullopt;
    return dest;
}

bool isMean(Operation const& o) {
    return o.kind == OperationKind::Reduce && o.combine == Combine::Mean;
}

} // namespace

std::optional<MeanVariance> findMeanVariance(KernelGraph const& graph, Id meanOp,
                                             std::string* why) {
    auto const refuse = [&](std::string reason) -> std::optional<MeanVariance> {
        if (why)
            *why = std::move(reason);
        return std::nullopt;
    };
    if (!isMean(graph.control.node(meanOp)))
        return refuse(fmt::format("operation #{} is not a Reduce mean", meanOp));
    MeanVariance p;
    p.meanOp = meanOp;
    p.rows = graph.mapping.get(meanOp, role::source);
    p.mean = graph.mapping.get(meanOp, role::dest);
    std::string reason =
        fmt::format("no Assign computes f32(value#{}) - f32(value#{})", p.rows, p.mean);
    auto const expression = [&](Id op) -> expr::Binary const* {
        Operation const& o = graph.control.node(op);
        if (o.kind != OperationKind::Assign || !o.expression)
            return nullptr;
        return std::get_if<expr::Binary>(o.expression.get());
    };
    for (Id op : graph.control.nodes()) {
        auto const* difference = expression(op);
        if (!difference || difference->op != BinaryOp::Subtract ||
            difference->lhs->typing().type != DataType::F32 ||
            !asF32(graph, difference->lhs, p.rows) || !asF32(graph, difference->rhs, p.mean))
            continue;
        auto const deviations = elementwiseF32(graph, op, p.rows);
        if (!deviations)
            continue;
        reason = fmt::format("no Assign squares value#{}, the x - mean of operation #{}",
                             *deviations, op);
        for (Id squareOp : graph.control.nodes()) {
            auto const* square = expression(squareOp);
            auto const isDeviation = [&](ExprPtr const& e) {
                auto const* value = std::get_if<expr::DataValue>(e.get());
                return value && value->dimension == *deviations;
            };
            if (!square || square->op != BinaryOp::Multiply || !isDeviation(square->lhs) ||
                !isDeviation(square->rhs))
                continue;
            auto const squares = elementwiseF32(graph, squareOp, p.rows);
            if (!squares)
                continue;
            reason = fmt::format("no Reduce means value#{}, the (x - mean)^2 of operation #{}",
                                 *squares, squareOp);
            for (Id varianceOp : operationsWith(graph, role::source, *squares)) {
                if (!isMean(graph.control.node(varianceOp)))
                    continue;
                Id const variance = graph.mapping.get(varianceOp, role::dest);
                if (!sameShape(graph, variance, p.mean))
                    continue;
                p.deviationOp = op;
                p.deviations = *deviations;
                p.squareOp = squareOp;
                p.squares = *squares;
                p.varianceOp = varianceOp;
                p.variance = variance;
                return p;
            }
        }
    }
    return refuse(std::move(reason));
}

std::vector<MeanVariance> findMeanVariances(KernelGraph const& graph) {
    std::vector<MeanVariance> found;
    for (Id op : graph.control.nodes())
        if (isMean(graph.control.node(op)))
            if (auto p = findMeanVariance(graph, op))
                found.push_back(*p);
    return found;
}

} // namespace kiln::lowering
