// GraphJson.h: a whole KernelGraph as a versioned JSON file, and back.
//
// Rule tests, golden files, `kiln translate -o` and bug reports all need a KernelGraph on disk
// that reads back exactly: the same ids, the same order of nodes and edges, the same
// expressions. saveGraph() writes one deterministic text (a node, edge, operation or mapping
// entry per line; expressions as text, see ExpressionText.h; fields at their defaults left
// out), and parseGraph() reads it back, so save(parse(save(g))) == save(g). The format is
// described in docs/kernelgraph-json.md. Reading checks references (edges to missing nodes,
// mappings to missing operations, value#N of a non-data dimension) and reports each mistake as
// a UserError at file:line:col with its JSON pointer; the graph's structural invariants are the
// verifier's business.
#pragma once

#include "kiln/graph/KernelGraph.h"
#include "kiln/graph/SourceJson.h"

#include <string>
#include <string_view>

namespace kiln {

/// The "format" field of a KernelGraph file.
inline constexpr std::string_view kGraphJsonFormat = "kiln.kernelgraph";
/// The version of the KernelGraph file format this Kiln reads and writes.
inline constexpr int kGraphJsonVersion = 1;
/// The largest id a KernelGraph file may use (ids index dense tables).
inline constexpr Id kMaxGraphJsonId = (1 << 24) - 1;

/// The graph as JSON text, pretty and deterministic, ending in a newline.
std::string saveGraph(KernelGraph const& graph);

/// Reads a KernelGraph from JSON `text`; `file` names it in messages.
KernelGraph parseGraph(std::string_view text, std::string const& file);

/// Reads a KernelGraph from the JSON file at `path`.
KernelGraph loadGraph(std::string const& path);

/// Reads a KernelGraph from a JSON object already parsed.
KernelGraph readGraph(JsonValue const& root);

} // namespace kiln
