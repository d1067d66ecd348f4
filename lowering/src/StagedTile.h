// StagedTile.h (internal): where the elements of a store lie in the workgroup's tile of its
// tensor, for a store staged through shared memory and written whole (EPILOGUE=1).
//
// A staged store writes each workitem's elements to a staging buffer and copies the buffer to the
// tensor in boxes (PTX: one TMA store per box), which the copy engine clips at the tensor's
// bounds. That is right only if the workgroup's elements cover their tile exactly: every place of
// every box written by one workitem, none by two, none outside. The graph says who holds what;
// this does not trust it, it checks it the way FragmentLayout.h checks a matrix instruction's
// layout: each element's place in the tile is evaluated for every workitem of a workgroup. Only
// the width of a block (the elements one box row holds, along the tensor's contiguous axis) is
// the target's.
#pragma once

#include "kiln/lowering/IndexExpressions.h"
#include "kiln/lowering/IndexFacts.h"
#include "kiln/lowering/LaunchShape.h"

#include <cstdint>
#include <map>
#include <vector>

namespace kiln::lowering::detail {

/// A workgroup's tile of a 2-dimensional tensor as the staged store writes it: `columns` along
/// the tensor's contiguous axis (whole blocks of `blockColumns`), `rows` across it.
struct StagedTile {
    /// The tile's first element along the contiguous axis and across it: expressions of the
    /// workgroup's indices (the same for all its workitems).
    ExprPtr innerOrigin, outerOrigin;
    std::int64_t blockColumns = 0, columns = 0, rows = 0;
    /// Each element's place in the tile (from the origin), expressions of the workitem's
    /// indices, and its block (the same for every workitem).
    std::vector<ExprPtr> inner, outer;
    std::vector<std::size_t> block;

    std::size_t blocks() const { return static_cast<std::size_t>(columns / blockColumns); }
    /// The elements of each block, in register order.
    std::vector<std::vector<std::size_t>> elementsOfBlocks() const;
};

/// A block as wide as the tile: the whole tile staged at once (StagingLayout.h).
inline constexpr std::int64_t kWholeTile = INT64_MAX;

/// The tile the held elements `elements` (of a value whose axes are `valueAxes`, solved from the
/// `known` indices) make in tensor `memory`, in blocks of `blockColumns`. A UserError saying why
/// where a staged store cannot write them: a tensor that is not a matrix with a contiguous axis, a
/// place that depends on more than the workitem, a tile that the workgroup's elements do not cover
/// exactly once, or rows that are not whole blocks (of `blockColumns`; kWholeTile: one block); or
/// an element that exists under a condition
/// other than lying inside the tensor (which the copy engine's clipping would not honour).
StagedTile stagedTile(KernelGraph const& graph, IndexFacts const& facts, LaunchShape const& shape,
                      std::map<Id, ExprPtr> const& known, std::vector<Id> const& valueAxes,
                      std::vector<IndexSolution> const& elements, Id memory,
                      std::int64_t blockColumns);

} // namespace kiln::lowering::detail
