// TensorMaps.h: how a tensor lies in global memory, as a TMA tensor map describes it.
//
// A kernel that loads its tiles with the copy engine (TMA=1, lowering/ptx/PtxPipeline.cpp)
// takes a tensor map per tensor it loads so (and per tensor it stores so: EPILOGUE=1,
// StagedEpilogue.h); the launcher encodes each one from the tensor's
// address and its extents and strides. Those come from the tensor's User dimension in the lowered
// graph (its SubDimensions: sizes and strides as expressions of the Command's sizes), the same
// geometry the kernel's own index arithmetic uses, innermost (stride 1) first as the driver wants
// them. The manifest carries them as text; a launcher that holds the graph evaluates them here.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::lowering {

/// A tensor's dimensions, innermost first.
struct TensorGeometry {
    std::vector<ExprPtr> sizes;   ///< elements per dimension
    std::vector<ExprPtr> strides; ///< elements from one index to the next; strides[0] is 1
    std::vector<Id> axes;         ///< the SubDimensions, in the same order
};

/// The geometry of tensor `name` in `graph`: the SubDimensions its User dimension splits into (a
/// loaded tensor) or is the Join of (a stored one), innermost first. Nothing when the tensor has no
/// User dimension split into SubDimensions with sizes and strides, or none of stride 1.
std::optional<TensorGeometry> tensorGeometry(KernelGraph const& graph, std::string const& name);

} // namespace kiln::lowering
