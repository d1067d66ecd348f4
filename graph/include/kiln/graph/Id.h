// Id.h: names of nodes and edges in a KernelGraph.
//
// Every coordinate dimension, transform edge, operation and control edge of one KernelGraph has
// an Id unique within that graph, so that a message, a trace or a rule binding can name any
// element with one number. Ids are never reused after removal.
#pragma once

namespace kiln {

using Id = int;

} // namespace kiln
