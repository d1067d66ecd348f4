// GraphText.h: a KernelGraph as readable, diffable text.
//
// The form golden files, `kiln translate` and failure messages print. One element per line,
// every element named by its id as #N, sections in a fixed order (arguments, dimensions,
// coordinate edges, operations with their Mapping roles, control edges), elements in id order
// within a section, expressions printed by toString() inside braces. Two graphs print the same
// text exactly when they have the same elements with the same attributes, so a diff of two
// printed graphs is a diff of the graphs. This is not a storage format (see the JSON form).
//
//   KernelGraph "axpy"
//   arguments
//     x: tensor f32
//   dimensions
//     #2 User "x" f32 size={N}
//     #3 SubDimension axis=0 size={N} stride={1}
//   coordinate edges
//     #5 Split #2 -> #3
//   operations
//     #1 Kernel "axpy"
//     #8 LoadLinear f32 source=#2 dest=#4
//   control edges
//     #9 Body #1 -> #8
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <string>

namespace kiln {

/// The text form of `graph`, ending with a newline.
std::string toText(KernelGraph const& graph);

/// The one line (without indentation or newline) that toText() prints for element `id`.
std::string elementText(KernelGraph const& graph, Id id);

} // namespace kiln
