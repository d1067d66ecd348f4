// TransformChain.h: which coordinate transforms compute some dimensions' indices from others.
//
// Reading or writing an element means going from the indices we know (workgroup and workitem
// numbers, loop counters, an element's place in a tile) to another dimension's (a tensor's
// offset). The chain applies each transform forward where its tails are known and in reverse
// where its heads are, in an order where every step's inputs come first, and keeps only the
// steps the targets need. The interpreter runs a chain on integers (CoordinatePlan.h); code
// generation runs the same chain on Expressions.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <vector>

namespace kiln {

/// One transform applied in one direction: `outputs` computed from `inputs`.
struct TransformStep {
    Id edge;
    bool forward;
    std::vector<Id> inputs, outputs;
};

/// The steps computing `targets` from `known`, in a valid order; a UserError naming the first
/// target that no chain of transforms reaches.
std::vector<TransformStep> transformChain(KernelGraph const& graph, std::vector<Id> const& known,
                                          std::vector<Id> const& targets);

} // namespace kiln
