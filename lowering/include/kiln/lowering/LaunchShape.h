// LaunchShape.h: the grid and workgroup a lowered KernelGraph is launched with.
//
// Workgroup dimensions become the grid's axes and Workitem dimensions the workgroup's, by their
// `axis` (0 = x). Workgroup sizes are launch-time expressions over the Command's sizes (the
// manifest records them as the grid formula); workitem sizes must be constants, since the code
// is generated for one workgroup size. A graph without Workgroup/Workitem dimensions runs as
// one workgroup of one workitem. A workgroup's shared memory holds every Shared dimension, each
// at a 16-byte aligned offset.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>

namespace kiln::lowering {

struct LaunchShape {
    std::array<std::optional<Id>, 3> workgroups; ///< the Workgroup dimension of each grid axis
    std::array<std::optional<Id>, 3> workitems;  ///< the Workitem dimension of each block axis
    std::array<ExprPtr, 3> grid;                 ///< workgroups along x, y, z
    std::array<std::int64_t, 3> block{1, 1, 1};  ///< workitems along x, y, z

    /// Workitems per workgroup.
    std::int64_t workgroupSize() const { return block[0] * block[1] * block[2]; }
};

/// The launch shape of `graph`; a UserError for a workitem size that is not a constant, two
/// dimensions on one axis, or an axis beyond z.
LaunchShape launchShape(KernelGraph const& graph);

/// The workitem's number inside its workgroup, x fastest.
ExprPtr linearWorkitem(LaunchShape const& shape);

/// Where each Shared dimension lies in the workgroup's shared memory (LDS on AMD targets).
///
/// A padded tile keeps `pad` unused elements after each row of `rowLength`. ldmatrix reads 16
/// bytes from each of eight rows at once; they fall in eight different bank groups only when a
/// row is an odd number of 16-byte units long, so 16-bit tiles whose rows are a multiple of 32
/// bytes get 16 bytes more a row.
struct SharedLayout {
    struct Padding {
        std::int64_t rowLength = 0, pad = 0; ///< in elements
    };
    std::map<Id, std::size_t> offsets; ///< Shared dimension -> byte offset, 16-byte aligned
    std::map<Id, Padding> padding;     ///< the padded Shared dimensions
    std::size_t bytes = 0;             ///< the whole workgroup's

    /// Where element `index` of Shared dimension `shared` lies, in elements from its start.
    ExprPtr place(Id shared, ExprPtr const& index) const;
};

/// Every Shared dimension of `graph` laid out in id order; with `padRows`, tiles of 16-bit
/// elements whose rows are a multiple of 32 bytes are padded by 16 bytes a row. A UserError
/// for a Shared dimension without a constant size.
SharedLayout sharedLayout(KernelGraph const& graph, bool padRows = false);

} // namespace kiln::lowering
