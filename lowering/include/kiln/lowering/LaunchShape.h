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
#include <set>

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
    /// The 128-byte swizzle of 16-bit tiles that wgmma reads (Hopper's canonical layout): the
    /// tile's rows (`rowLength` elements, a multiple of 64) are cut into columns of 64
    /// elements, each column stored whole (all `rows` rows of 128 bytes) before the next, and
    /// in row r the 16-byte chunk c of a column lies at chunk c ^ (r % 8).
    struct Swizzle {
        std::int64_t rowLength = 0, rows = 0; ///< in elements
    };
    std::map<Id, std::size_t> offsets; ///< Shared dimension -> byte offset, 16-byte aligned
    std::map<Id, Padding> padding;     ///< the padded Shared dimensions
    std::map<Id, Swizzle> swizzles;    ///< the swizzled ones (1024-byte aligned)
    std::size_t bytes = 0;             ///< the whole workgroup's

    /// Where element `index` of Shared dimension `shared` lies, in elements from its start.
    ExprPtr place(Id shared, ExprPtr const& index) const;
    /// The same without the swizzle's exchange of chunks: where `index` lies when it starts a
    /// chunk of a row r with r % 8 == 0 (where a wgmma descriptor may start).
    ExprPtr atomPlace(Id shared, ExprPtr const& index) const;
};

/// Every Shared dimension of `graph` laid out in id order; with `padRows`, tiles of 16-bit
/// elements whose rows are a multiple of 32 bytes are padded by 16 bytes a row; the tiles in
/// `swizzled` (16-bit, rows a multiple of 64 elements: rowLength()) are swizzled instead. A
/// UserError for a Shared dimension without a constant size.
SharedLayout sharedLayout(KernelGraph const& graph, bool padRows = false,
                          std::set<Id> const& swizzled = {});

/// The row length of a Shared tile: the size of the fastest axis of the Flatten that makes it,
/// when that is a constant.
std::optional<std::int64_t> rowLength(KernelGraph const& graph, Id shared);

} // namespace kiln::lowering
