// GraphDot.h: a KernelGraph as a Graphviz drawing.
//
// For looking at a graph (`kiln translate --dot g.dot`, then `dot -Tsvg`). The coordinate graph
// is one cluster: dimensions as ellipses, and each hyperedge as a small box of its own (a
// transform has several ordered tails and heads), joined to its dimensions by arrows labelled
// with the port number; DataFlow boxes are blue. The control graph is a second cluster:
// operations as boxes, control edges labelled by kind. The Mapping is drawn as dashed arrows
// from operations to dimensions, labelled with the role. Every Graphviz node is named n<id>.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <string>
#include <string_view>

namespace kiln {

/// The Graphviz DOT text of `graph`, deterministic (elements in id order).
std::string toDot(KernelGraph const& graph);

/// `text` as a DOT double-quoted string, quotes included: quotes and backslashes escaped,
/// newlines as \n.
std::string dotQuoted(std::string_view text);

} // namespace kiln
