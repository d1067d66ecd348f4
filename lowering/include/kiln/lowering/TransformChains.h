// TransformChains.h: the chains of coordinate transforms of one KernelGraph, each found once.
//
// Code generation solves indices over and over from the same known dimensions (every element of
// a staged tile, every register, every copy of a pipelined loop's producer); only the
// expressions it starts from differ. Which transforms lead from those dimensions to the targets
// (transformChain, TransformChain.h) depends on the graph alone, so it is found once for each
// pair of dimension sets and kept for the rest of code generation. The graph must not change
// while a TransformChains refers to it.
#pragma once

#include "kiln/graph/TransformChain.h"

#include <map>
#include <utility>
#include <vector>

namespace kiln::lowering {

class TransformChains {
public:
    explicit TransformChains(KernelGraph const& graph)
        : graph_(graph) {}

    /// transformChain(graph, known, targets), found on the first call for these dimensions.
    std::vector<TransformStep> const& between(std::vector<Id> const& known,
                                              std::vector<Id> const& targets);

private:
    KernelGraph const& graph_;
    std::map<std::pair<std::vector<Id>, std::vector<Id>>, std::vector<TransformStep>> chains_;
};

} // namespace kiln::lowering
