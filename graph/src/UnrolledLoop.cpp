// UnrolledLoop.cpp: the counter of an unrolled loop stepped at compile time, copy by copy.
#include "kiln/graph/UnrolledLoop.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"

#include <fmt/format.h>

namespace kiln {

namespace {

// The value the assignment of `kind` (Initialize or ForLoopIncrement) gives `counter`.
ExprPtr assignment(KernelGraph const& graph, Id loop, ControlEdgeKind kind, Id counter) {
    for (Id a : graph.successors(loop, kind))
        if (graph.mapping.find(a, role::dest) == counter)
            return graph.control.node(a).expression;
    return nullptr;
}

// `e` simplified, where a conjunct of a top-level && that is surely false makes all of it
// false and one that surely holds drops out (simplify() leaves `2 < 2 && x` as it is).
ExprPtr decided(ExprPtr const& e) {
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b || b->op != BinaryOp::LogicalAnd)
        return simplify(e);
    ExprPtr const lhs = decided(b->lhs), rhs = decided(b->rhs);
    if (literalInt(lhs) == std::int64_t{0} || literalInt(rhs) == std::int64_t{0})
        return literal(Value::boolean(false));
    if (literalInt(lhs))
        return rhs;
    if (literalInt(rhs))
        return lhs;
    return binary(BinaryOp::LogicalAnd, lhs, rhs);
}

} // namespace

std::vector<UnrolledCopy> unrolledCopies(KernelGraph const& graph, Id loop) {
    Operation const& o = graph.control.node(loop);
    Id const counter = graph.mapping.get(loop, role::counter);
    Dimension const& dim = graph.coordinates.node(counter);
    std::string const what = fmt::format("the unrolled loop #{} ({})", loop, o.name);
    auto const size = dim.size ? literalInt(simplify(dim.size)) : std::nullopt;
    if (!size || *size < 1)
        throw UserError(fmt::format("{} is counted by #{} of size {}, not a positive constant",
                                    what, counter, dim.size ? toString(dim.size) : "unknown"));
    ExprPtr const start = assignment(graph, loop, ControlEdgeKind::Initialize, counter);
    ExprPtr const step = assignment(graph, loop, ControlEdgeKind::ForLoopIncrement, counter);
    if (!start || !step)
        throw UserError(
            fmt::format("{} does not both start and step its counter #{}", what, counter));
    auto value = literalInt(simplify(start));
    if (!value)
        throw UserError(
            fmt::format("{} starts its counter at {}, not a constant", what, toString(start)));
    std::vector<UnrolledCopy> copies;
    while (true) {
        ExprPtr const condition = decided(substitute(o.expression, {{counter, literal(*value)}}));
        if (literalInt(condition) == std::int64_t{0})
            return copies;
        if (static_cast<std::int64_t>(copies.size()) == *size)
            throw UserError(fmt::format("{}: its condition {} does not end it within the {} "
                                        "values of its counter #{} (at {}, it is {})",
                                        what, toString(o.expression), *size, counter, *value,
                                        toString(condition)));
        copies.push_back({*value, condition});
        auto const next = literalInt(simplify(substitute(step, {{counter, literal(*value)}})));
        if (!next)
            throw UserError(
                fmt::format("{} steps its counter by {}, not by a constant", what, toString(step)));
        value = next;
    }
}

} // namespace kiln
