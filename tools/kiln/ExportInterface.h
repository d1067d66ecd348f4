// ExportInterface.h: what every exported launcher reads from a kernel's manifest.
//
// The C++ header (ExportHeader.h) and the C ABI (ExportCapi.h) both take the kernel's sizes as
// arguments and compute its grid from them; this is where the sizes are picked out of the
// parameters and the grid formula is checked and written as an expression that C and C++ both
// compute, so that the two launchers cannot disagree about a launch; and a TMA kernel's tensor
// maps, from the extents its manifest declares.
#pragma once

#include "kiln/lowering/Codegen.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

/// Whether parameter `p` is one of the problem's sizes (its meaning is "size X").
bool isSizeParameter(lowering::ParameterInfo const& p);

/// The grid formula's workgroups along x, y and z as expressions of the size parameters (named
/// as in the manifest, each an int64_t) over + - * / % and the functions ceildiv, min and max of
/// two int64_t, which the launcher defines; a missing axis is "1". A UserError when the formula
/// does not parse, names something other than a size, or uses any other operation.
std::array<std::string, 3> gridExpressions(lowering::EmittedKernel const& kernel);

/// A TMA kernel's tensor map as an exported launcher encodes it from the tensor's pointer and the
/// sizes: a row-major matrix of `outer` rows of `inner` elements, `rowBytes` apart, copied in
/// boxes of boxOuter x boxInner into the 128-byte swizzle. The extents are expressions like the
/// grid formula's.
struct ExportedTensorMap {
    std::string parameter, tensor, type; ///< the map's parameter, its tensor, the element type
    std::string inner, outer, rowBytes;
    std::int64_t boxInner = 0, boxOuter = 0;
};

/// The tensor maps of `kernel`'s parameters, in order; a UserError for one that is not a matrix
/// with the 128-byte swizzle of f16 or bf16 elements, or whose extents a launcher cannot compute.
std::vector<ExportedTensorMap> tensorMaps(lowering::EmittedKernel const& kernel);

} // namespace kiln::cli
