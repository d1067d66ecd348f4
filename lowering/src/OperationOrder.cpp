// The order and pairing of a body's operations, shared by the code generators.
#include "OperationOrder.h"

namespace kiln::lowering::detail {

bool readsValue(KernelGraph const& graph, Id op, Id d) {
    auto const& o = graph.control.node(op);
    for (auto r : {role::source, role::lhs, role::rhs})
        if (auto const m = graph.mapping.find(op, r); m && *m == d)
            return true;
    if (auto const dest = graph.mapping.find(op, role::dest))
        for (Id e : graph.coordinates.outgoing(d))
            if (graph.coordinates.edge(e).kind == CoordinateEdgeKind::DataFlow &&
                graph.coordinates.heads(e) == std::vector<Id>{*dest} &&
                o.kind == OperationKind::Assign)
                return true;
    for (auto kind : {ControlEdgeKind::Body, ControlEdgeKind::Else, ControlEdgeKind::Initialize,
                      ControlEdgeKind::ForLoopIncrement})
        for (Id inner : graph.successors(op, kind))
            if (readsValue(graph, inner, d))
                return true;
    return false;
}

bool writesTensor(KernelGraph const& graph, Id op, Id memory) {
    auto const kind = graph.control.node(op).kind;
    if ((kind == OperationKind::StoreTiled || kind == OperationKind::StoreLinear) &&
        graph.mapping.get(op, role::dest) == memory)
        return true;
    for (auto edge : {ControlEdgeKind::Body, ControlEdgeKind::Else})
        for (Id inner : graph.successors(op, edge))
            if (writesTensor(graph, inner, memory))
                return true;
    return false;
}

std::vector<Id> sinkLoads(KernelGraph const& graph, std::vector<Id> ops,
                          std::function<bool(Id)> const& inRegisters) {
    for (std::size_t i = ops.size(); i-- > 0;) {
        auto const kind = graph.control.node(ops[i]).kind;
        if (kind != OperationKind::LoadTiled && kind != OperationKind::LoadLinear)
            continue;
        Id const dest = graph.mapping.get(ops[i], role::dest),
                 memory = graph.mapping.get(ops[i], role::source);
        if (!inRegisters(dest))
            continue;
        std::size_t j = i + 1;
        while (j < ops.size() && !readsValue(graph, ops[j], dest) &&
               !writesTensor(graph, ops[j], memory))
            ++j;
        if (j == ops.size() || j == i + 1)
            continue;
        Id const load = ops[i];
        ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
        ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(j - 1), load);
    }
    return ops;
}

Id fusableAccumulator(KernelGraph const& graph, Id op, Id next) {
    auto const& mul = graph.control.node(op);
    auto const& add = graph.control.node(next);
    if (mul.kind != OperationKind::Multiply || add.kind != OperationKind::Assign || !add.expression)
        return 0;
    Id const product = graph.mapping.get(op, role::dest), sum = graph.mapping.get(next, role::dest);
    auto const* b = std::get_if<expr::Binary>(add.expression.get());
    if (!b || b->op != BinaryOp::Add)
        return 0;
    auto const* l = std::get_if<expr::DataValue>(b->lhs.get());
    auto const* r = std::get_if<expr::DataValue>(b->rhs.get());
    if (!l || !r || sum == product ||
        !((l->dimension == sum && r->dimension == product) ||
          (l->dimension == product && r->dimension == sum)))
        return 0;
    for (Id e : graph.coordinates.outgoing(product)) {
        auto const& edge = graph.coordinates.edge(e);
        if (edge.kind == CoordinateEdgeKind::DataFlow &&
            graph.coordinates.heads(e) != std::vector<Id>{sum})
            return 0;
    }
    return sum;
}

} // namespace kiln::lowering::detail
