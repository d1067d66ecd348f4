// RowPatterns.cpp: the graph queries of RowPatterns.h.
#include "RowPatterns.h"

namespace kiln::lowering::detail {

std::vector<Id> operationsWith(KernelGraph const& graph, char const* role, Id d) {
    std::vector<Id> ops;
    for (Id op : graph.control.nodes())
        if (auto const at = graph.mapping.find(op, role); at && *at == d)
            ops.push_back(op);
    return ops;
}

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

} // namespace kiln::lowering::detail
