// FragmentLayout.h (internal): whether a workitem's accumulators are laid out as a matrix
// instruction's fragments (mma.sync on NVIDIA, v_mfma on AMD), and how.
//
// The graph decides who holds which accumulator (the warp- and wave-tile rules lay a tile out for
// the instruction); code generation does not trust that, it checks it, the same way for every
// target: each accumulator's place in the result is evaluated for every lane (x, y) of warp
// (wave) 0 in workgroup 0, and the layout is the instruction's when every register sits at its
// lane-0 place plus the lane's step, and the registers group into fragments of four at the
// instruction's four offsets, in a whole grid of slabs of rows and columns. Only the lane grid
// (LaneGrid) is the target's.
#pragma once

#include "Contraction.h"
#include "kiln/lowering/IndexFacts.h"
#include "kiln/lowering/LaunchShape.h"

#include <array>
#include <optional>
#include <vector>

namespace kiln::lowering::detail {

/// Where an accumulator lies in the result: (row, column).
using Place = std::pair<std::int64_t, std::int64_t>;

/// A matrix instruction's lanes and fragments: the workgroup is `lanes` workitems (x, y), lane
/// (x, y) holds each register at lane (0, 0)'s place plus x * `stepX` + y * `stepY`, and a
/// fragment's four registers lie at its first place plus each of `fragment`.
struct LaneGrid {
    std::array<std::int64_t, 2> lanes;
    Place stepX, stepY;
    std::array<Place, 4> fragment;
};

/// Accumulators laid out as fragments: each fragment's registers (elements of the held value, in
/// offset order) and its slabs, and each slab's first row (column) at lane (0, 0), as
/// expressions of the warp.
struct FragmentLayout {
    struct Fragment {
        std::array<std::size_t, 4> registers;
        std::size_t rowSlab = 0, colSlab = 0; ///< into rowBases, colBases
    };
    std::vector<Fragment> fragments;
    std::vector<ExprPtr> rowBases, colBases;
};

/// The fragments of the accumulators `elements` of contraction `c` on `grid`; nothing when the
/// workgroup is not the grid's lanes or the accumulators are not laid out so.
std::optional<FragmentLayout> fragmentLayout(Contraction const& c,
                                             std::vector<IndexSolution> const& elements,
                                             LaunchShape const& shape, IndexFacts const& facts,
                                             LaneGrid const& grid);

} // namespace kiln::lowering::detail
