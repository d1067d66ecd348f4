// Dimension.h: the nodes of the coordinate graph.
//
// A Dimension is an index space: its index runs over [0, size). User tensors, the pieces they
// are split into, tiles, hardware indices (Workgroup, Workitem), loop counters and storage
// (Register, Shared) are all Dimensions, and coordinate transforms relate their indices. A data
// dimension (User, Linear, MacroTile, WaveTile, ThreadTile, Register, Shared) also holds one
// value of its element type per index; the others are pure indices.
#pragma once

#include "kiln/graph/DataType.h"
#include "kiln/graph/Expression.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class DimensionKind : std::uint8_t {
    User,            ///< a Command tensor in global memory; index = element offset
    SubDimension,    ///< one axis of a User tensor (axis, size, stride)
    Linear,          ///< a tensor seen as one flat vector of values
    MacroTile,       ///< a tile of values owned by one workgroup; index = flat element number
    MacroTileNumber, ///< which macro tile along an axis
    MacroTileIndex,  ///< position inside a macro tile along an axis
    WaveTile,        ///< a tile owned by one warp/wave
    ThreadTile,      ///< a tile owned by one thread
    Workgroup,       ///< workgroup (block) index along an axis
    Workitem,        ///< workitem (thread) index inside a workgroup along an axis
    ForLoop,         ///< the counter of a loop
    Unroll,          ///< the counter of an unrolled loop (its body written once per index)
    Register,        ///< values in registers
    Shared,          ///< values in shared memory / LDS
};

/// Every kind, in declaration order.
std::span<DimensionKind const> allDimensionKinds();
std::string_view name(DimensionKind kind);
std::optional<DimensionKind> parseDimensionKind(std::string_view name);

/// Whether dimensions of this kind hold values (and so take part in data flow).
bool holdsData(DimensionKind kind);

struct Dimension {
    DimensionKind kind;
    /// Number of indices; null when not known (e.g. a Forget head).
    ExprPtr size;
    /// Distance in elements between neighbouring indices (SubDimension of a User tensor).
    ExprPtr stride;
    /// Which axis of its tensor, tile or grid (SubDimension, MacroTile*, Workgroup, Workitem).
    int axis = -1;
    /// User/Linear: the Command tensor argument; ForLoop/Unroll: the loop's name.
    std::string name;
    /// Data dimensions: the element type.
    std::optional<DataType> dtype;
    /// Tiles: the size along each axis (row-major); size is their product.
    std::vector<ExprPtr> shape;
};

} // namespace kiln
