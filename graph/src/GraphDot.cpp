#include "kiln/graph/GraphDot.h"

#include "kiln/graph/ExpressionText.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln {

namespace {

std::vector<Id> sorted(std::vector<Id> list) {
    std::sort(list.begin(), list.end());
    return list;
}

std::string dimensionLabel(Id id, Dimension const& d) {
    std::string label = fmt::format("#{} {}", id, name(d.kind));
    if (!d.name.empty())
        label += " " + d.name;
    std::string details;
    if (d.dtype)
        details += name(*d.dtype);
    if (d.axis >= 0)
        details += fmt::format("{}axis {}", details.empty() ? "" : " ", d.axis);
    if (!details.empty())
        label += "\n" + details;
    if (d.size)
        label += "\nsize " + toString(d.size);
    if (d.stride)
        label += "\nstride " + toString(d.stride);
    return label;
}

std::string operationLabel(Id id, Operation const& op) {
    std::string label = fmt::format("#{} {}", id, name(op.kind));
    if (!op.name.empty())
        label += " " + op.name;
    if (op.dtype)
        label += fmt::format("\n{}", name(*op.dtype));
    if (op.transposeA || op.transposeB)
        label +=
            fmt::format("\ntranspose {}{}", op.transposeA ? "A" : "", op.transposeB ? "B" : "");
    if (info(op.kind).combines)
        label += fmt::format("\n{}", name(op.combine));
    if (op.expression)
        label += "\n" + toString(op.expression);
    return label;
}

} // namespace

std::string dotQuoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n')
            out += "\\n";
        else if (c == '\r' || c == '\t')
            out += ' ';
        else
            out += c;
    }
    return out + '"';
}

std::string toDot(KernelGraph const& graph) {
    std::string out = fmt::format("digraph {} {{\n", dotQuoted(graph.name));
    out += "  node [fontname=\"Helvetica\", fontsize=10];\n";
    out += "  edge [fontname=\"Helvetica\", fontsize=8];\n";

    out += "  subgraph cluster_coordinates {\n    label=\"coordinates\";\n";
    for (Id id : sorted(graph.coordinates.nodes()))
        out += fmt::format("    n{} [shape=ellipse, label={}];\n", id,
                           dotQuoted(dimensionLabel(id, graph.coordinates.node(id))));
    for (Id id : sorted(graph.coordinates.edges())) {
        auto const kind = graph.coordinates.edge(id).kind;
        bool const dataFlow = kind == CoordinateEdgeKind::DataFlow;
        out +=
            fmt::format("    n{} [shape=box, height=0.2, style=filled, fillcolor={}, label={}];\n",
                        id, dataFlow ? "\"#cfe2ff\"" : "\"#eeeeee\"",
                        dotQuoted(fmt::format("#{} {}", id, name(kind))));
        auto const tails = graph.coordinates.tails(id), heads = graph.coordinates.heads(id);
        std::string_view const colour = dataFlow ? ", color=blue" : "";
        for (std::size_t k = 0; k < tails.size(); ++k)
            out += fmt::format("    n{} -> n{} [label=\"{}\"{}];\n", tails[k], id, k, colour);
        for (std::size_t k = 0; k < heads.size(); ++k)
            out += fmt::format("    n{} -> n{} [label=\"{}\"{}];\n", id, heads[k], k, colour);
    }
    out += "  }\n";

    out += "  subgraph cluster_control {\n    label=\"control\";\n";
    for (Id id : sorted(graph.control.nodes()))
        out += fmt::format("    n{} [shape=box, style=rounded, label={}];\n", id,
                           dotQuoted(operationLabel(id, graph.control.node(id))));
    for (Id id : sorted(graph.control.edges()))
        for (Id from : graph.control.tails(id))
            for (Id to : graph.control.heads(id))
                out += fmt::format(
                    "    n{} -> n{} [label={}];\n", from, to,
                    dotQuoted(fmt::format("#{} {}", id, name(graph.control.edge(id).kind))));
    out += "  }\n";

    for (auto const& [op, connections] : graph.mapping.all())
        for (auto const& c : connections)
            out += fmt::format(
                "  n{} -> n{} [style=dashed, color=gray40, constraint=false, label={}];\n", op,
                c.dimension, dotQuoted(c.role));
    out += "}\n";
    return out;
}

} // namespace kiln
