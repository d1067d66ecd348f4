#include "kiln/graph/GraphText.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Translate.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln {

namespace {

// A name in double quotes, with quotes, backslashes and control characters escaped.
std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out + '"';
}

std::string braced(ExprPtr const& e) {
    return "{" + toString(e) + "}";
}

std::string ids(std::vector<Id> const& list) {
    std::string out;
    for (Id id : list)
        out += fmt::format(" #{}", id);
    return out;
}

std::string dimensionLine(Id id, Dimension const& d) {
    std::string out = fmt::format("#{} {}", id, name(d.kind));
    if (!d.name.empty())
        out += " " + quoted(d.name);
    if (d.dtype)
        out += fmt::format(" {}", name(*d.dtype));
    if (d.axis >= 0)
        out += fmt::format(" axis={}", d.axis);
    if (!d.shape.empty()) {
        out += " shape={";
        for (std::size_t k = 0; k < d.shape.size(); ++k)
            out += (k ? ", " : "") + toString(d.shape[k]);
        out += "}";
    }
    if (d.size)
        out += " size=" + braced(d.size);
    if (d.stride)
        out += " stride=" + braced(d.stride);
    return out;
}

// Roles in a fixed order: the common ones as a reader expects them, then the rest by name, so
// that the text does not depend on the order in which connections were made.
std::vector<Connection> orderedConnections(std::vector<Connection> connections) {
    static constexpr std::string_view known[] = {role::source, role::lhs, role::rhs, role::dest,
                                                 role::counter};
    auto const rank = [](std::string const& r) {
        auto it = std::find(std::begin(known), std::end(known), r);
        return static_cast<int>(it - std::begin(known));
    };
    std::sort(connections.begin(), connections.end(),
              [&](Connection const& a, Connection const& b) {
                  return std::pair(rank(a.role), a.role) < std::pair(rank(b.role), b.role);
              });
    return connections;
}

std::string operationLine(KernelGraph const& graph, Id id, Operation const& op) {
    std::string out = fmt::format("#{} {}", id, name(op.kind));
    if (!op.name.empty())
        out += " " + quoted(op.name);
    if (op.dtype)
        out += fmt::format(" {}", name(*op.dtype));
    if (op.transposeA)
        out += " transposeA";
    if (op.transposeB)
        out += " transposeB";
    if (info(op.kind).combines)
        out += fmt::format(" combine={}", name(op.combine));
    for (auto const& c : orderedConnections(graph.mapping.connections(id)))
        out += fmt::format(" {}=#{}", c.role, c.dimension);
    if (op.expression) {
        bool const condition = info(op.kind).expression == ExpressionUse::Condition;
        out += fmt::format(" {}={}", condition ? "condition" : "value", braced(op.expression));
    }
    return out;
}

std::vector<Id> sorted(std::vector<Id> list) {
    std::sort(list.begin(), list.end());
    return list;
}

} // namespace

std::string elementText(KernelGraph const& graph, Id id) {
    if (graph.coordinates.isNode(id))
        return dimensionLine(id, graph.coordinates.node(id));
    if (graph.coordinates.isEdge(id))
        return fmt::format("#{} {}{} ->{}", id, name(graph.coordinates.edge(id).kind),
                           ids(graph.coordinates.tails(id)), ids(graph.coordinates.heads(id)));
    if (graph.control.isNode(id))
        return operationLine(graph, id, graph.control.node(id));
    if (graph.control.isEdge(id))
        return fmt::format("#{} {}{} ->{}", id, name(graph.control.edge(id).kind),
                           ids(graph.control.tails(id)), ids(graph.control.heads(id)));
    return fmt::format("#{} (no such element)", id);
}

std::string toText(KernelGraph const& graph) {
    std::string out = fmt::format("KernelGraph {}\n", quoted(graph.name));
    auto const section = [&](std::string_view title, std::vector<Id> const& elements) {
        out += fmt::format("{}\n", title);
        for (Id id : sorted(elements))
            out += "  " + elementText(graph, id) + "\n";
    };
    out += "arguments\n";
    for (auto const& a : graph.arguments)
        out += fmt::format("  {}: {} {}\n", a.name, name(a.kind), name(a.dtype));
    section("dimensions", graph.coordinates.nodes());
    section("coordinate edges", graph.coordinates.edges());
    section("operations", graph.control.nodes());
    section("control edges", graph.control.edges());
    return out;
}

} // namespace kiln
