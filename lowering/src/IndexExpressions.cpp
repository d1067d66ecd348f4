#include "kiln/lowering/IndexExpressions.h"

#include "kiln/graph/Simplify.h"

#include <fmt/format.h>

namespace kiln::lowering {

ExprPtr const& IndexSolution::at(Id target) const {
    auto it = indices.find(target);
    KILN_ASSERT(it != indices.end(), "index of #{} was not solved", target);
    return it->second;
}

namespace {

ExprPtr need(ExprPtr const& e, Id dimension, char const* what) {
    if (!e)
        throw UserError(
            fmt::format("dimension #{} has no {}, which code generation needs", dimension, what));
    return e;
}

void addCondition(IndexSolution& solution, ExprPtr condition) {
    condition = simplify(condition);
    if (auto v = literalInt(condition); v && *v != 0)
        return;
    for (auto const& c : solution.conditions)
        if (equal(c, condition))
            return;
    solution.conditions.push_back(std::move(condition));
}

} // namespace

IndexSolution solveIndices(KernelGraph const& graph, std::map<Id, ExprPtr> const& known,
                           std::vector<Id> const& targets, IndexFacts const& facts) {
    auto const& coords = graph.coordinates;
    std::vector<Id> knownIds;
    for (auto const& [id, e] : known)
        knownIds.push_back(id);
    IndexSolution solution;
    solution.indices = known;
    for (TransformStep const& step : facts.chains().between(knownIds, targets)) {
        CoordinateEdgeKind const kind = coords.edge(step.edge).kind;
        if (kind == CoordinateEdgeKind::Sunder)
            throw UserError(fmt::format("code generation cannot yet write the Sunder transform "
                                        "#{} as index expressions",
                                        step.edge));
        auto const tails = coords.tails(step.edge), heads = coords.heads(step.edge);
        TransformShape<ExprPtr> shape;
        auto sizes = [&](std::vector<Id> const& ids, bool skipFirst) {
            std::vector<ExprPtr> out;
            for (std::size_t k = 0; k < ids.size(); ++k) {
                auto const& s = coords.node(ids[k]).size;
                out.push_back(k == 0 && skipFirst && !s ? literal(0) : need(s, ids[k], "size"));
            }
            return out;
        };
        auto strides = [&](std::vector<Id> const& ids) {
            std::vector<ExprPtr> out;
            for (Id n : ids)
                out.push_back(need(coords.node(n).stride, n, "stride"));
            return out;
        };
        switch (kind) {
        case CoordinateEdgeKind::Split:
            shape.headStrides = strides(heads);
            break;
        case CoordinateEdgeKind::Join:
            shape.tailStrides = strides(tails);
            break;
        case CoordinateEdgeKind::Flatten:
            shape.tailSizes = sizes(tails, true);
            break;
        case CoordinateEdgeKind::Tile:
            shape.headSizes = sizes(heads, true);
            break;
        case CoordinateEdgeKind::Inherit:
            shape.headSizes.resize(heads.size());
            break;
        default:
            break;
        }
        std::vector<ExprPtr> inputs;
        for (Id n : step.inputs)
            inputs.push_back(solution.indices.at(n));
        auto outputs = step.forward ? forward(kind, inputs, shape) : reverse(kind, inputs, shape);
        KILN_ASSERT(outputs && outputs->size() == step.outputs.size(),
                    "transform #{} gave no index expressions", step.edge);
        for (std::size_t k = 0; k < step.outputs.size(); ++k) {
            Id const n = step.outputs[k];
            ExprPtr const value = facts.reduce(simplify((*outputs)[k]));
            auto const& dim = coords.node(n);
            if (dim.kind != DimensionKind::User) {
                if (!facts.nonNegative(value))
                    addCondition(solution, binary(BinaryOp::GreaterEqual, value, literal(0)));
                if (dim.size && !facts.less(value, dim.size))
                    addCondition(solution, binary(BinaryOp::Less, value, dim.size));
            }
            solution.indices.emplace(n, value);
        }
    }
    return solution;
}

} // namespace kiln::lowering
