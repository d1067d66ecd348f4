// Distribution.h: how a data dimension's elements are spread over the grid.
//
// A value is distributed when its own index, or one of the axes it is the Flatten of, is tiled
// by a Tile whose heads PassThrough to Workgroup/Workitem dimensions (or are Flattened into one,
// as a grid of warps is into the warp index). Each element then belongs
// to one workgroup and workitem (owner computes), and the Tile's other heads, together with the
// Flatten axes that are not tiled, are the indices local to an owner: the elements one workitem
// holds. A local index may itself be tiled onto the grid (a macro tile's index split over the
// workitems of its workgroup); its own locals then take its place. The interpreter runs an
// operation once per owner and local index; code generation keeps a workitem's elements in
// registers, one per combination of local indices.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <vector>

namespace kiln {

struct Distribution {
    bool distributed = false;
    bool overWorkitems = false; ///< some index is tiled onto workitems, not only workgroups
    std::vector<Id> locals;     ///< indices local to an owner, slowest first
};

/// The distribution of data dimension `d` (not distributed when nothing ties it to the grid).
Distribution distributionOf(KernelGraph const& graph, Id d);

/// Whether `kind` is a hardware index (Workgroup or Workitem).
bool isHardware(DimensionKind kind);

} // namespace kiln
