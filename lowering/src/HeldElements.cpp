// The elements a workitem holds: local indices enumerated, each solved to every axis.
#include "kiln/lowering/HeldElements.h"

#include "kiln/graph/Distribution.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>

namespace kiln::lowering {

std::vector<Id> flattenAxes(KernelGraph const& graph, Id d) {
    for (Id e : graph.coordinates.incoming(d))
        if (graph.coordinates.edge(e).kind == CoordinateEdgeKind::Flatten)
            return graph.coordinates.tails(e);
    return {d};
}

std::int64_t constantSize(KernelGraph const& graph, Id d, std::string_view what) {
    auto const& size = graph.coordinates.node(d).size;
    auto const n = size ? literalInt(simplify(size)) : std::nullopt;
    if (!n)
        throw UserError(fmt::format("{} #{} needs a constant size for code generation, not {}",
                                    what, d, size ? toString(size) : std::string("none")));
    return *n;
}

bool holdable(KernelGraph const& graph, Id d) {
    Distribution const dist = distributionOf(graph, d);
    if (!dist.distributed)
        return false;
    for (Id l : dist.locals) {
        auto const& size = graph.coordinates.node(l).size;
        if (!size || !literalInt(simplify(size)))
            return false;
    }
    return true;
}

std::vector<IndexSolution> heldElements(KernelGraph const& graph, IndexFacts const& facts,
                                        std::map<Id, ExprPtr> const& known, Id d,
                                        std::int64_t maxElements) {
    Distribution const dist = distributionOf(graph, d);
    std::vector<std::int64_t> sizes;
    std::int64_t count = 1;
    bool overflows = false;
    for (Id l : dist.locals) {
        sizes.push_back(*literalInt(simplify(graph.coordinates.node(l).size)));
        overflows = overflows || __builtin_mul_overflow(count, sizes.back(), &count);
    }
    if (overflows)
        throw UserError(fmt::format(
            "#{} would need more than 2^63 registers per workitem; tile it further", d));
    if (count > maxElements)
        throw UserError(
            fmt::format("#{} would need {} registers per workitem; tile it further", d, count));
    std::vector<Id> targets = flattenAxes(graph, d);
    targets.push_back(d);
    std::vector<IndexSolution> out;
    for (std::int64_t c = 0; c < count; ++c) {
        auto k = known;
        std::int64_t rest = c;
        for (std::size_t i = dist.locals.size(); i-- > 0;) {
            k[dist.locals[i]] = literal(rest % sizes[i]);
            rest /= sizes[i];
        }
        out.push_back(solveIndices(graph, k, targets, facts));
    }
    return out;
}

} // namespace kiln::lowering
