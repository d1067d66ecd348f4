// TensorMap.h: a TMA tensor map, how the Hopper copy engine sees a tensor in global memory.
//
// A kernel that loads tiles with `cp.async.bulk.tensor` takes, per tensor, a 128-byte opaque
// descriptor made on the host by the driver (cuTensorMapEncodeTiled) from the tensor's address,
// its sizes and strides, the box one copy moves and the shared-memory swizzle. TensorMapShape is
// what a kernel's manifest declares about such a parameter (element type, rank, box, swizzle);
// TensorMapLayout adds the tensor's sizes and strides, which only the launch knows. check() states
// the copy engine's limits before the driver is asked, so a bad size is an error naming the
// dimension instead of the driver's bare CUDA_ERROR_INVALID_VALUE. A TensorMap is passed to a
// kernel by value like a scalar (KernelArguments::add), 64-byte aligned in the parameter buffer.
#pragma once

#include "kiln/runtime/ScalarType.h"
#include "kiln/runtime/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// How the copy engine permutes 16-byte chunks within each span of shared memory it writes.
enum class TensorMapSwizzle : std::uint8_t { None, Bytes32, Bytes64, Bytes128 };

/// "none", "32B", "64B", "128B".
std::string_view name(TensorMapSwizzle swizzle);
/// The swizzle of this name, or nothing.
std::optional<TensorMapSwizzle> parseTensorMapSwizzle(std::string_view text);
/// The span in bytes (0 for None).
std::size_t swizzleBytes(TensorMapSwizzle swizzle);

/// The most dimensions a tensor map has.
inline constexpr std::size_t kTensorMapMaxRank = 5;
/// Bytes of a tensor map, and their alignment in a kernel's parameter buffer.
inline constexpr std::size_t kTensorMapBytes = 128;
inline constexpr std::size_t kTensorMapAlignment = 64;

/// What a kernel declares about a tensor-map parameter: the box it copies and how.
struct TensorMapShape {
    ScalarType element = ScalarType::F16;
    std::uint8_t rank = 0;                              ///< dimensions, 1 to 5
    std::array<std::uint32_t, kTensorMapMaxRank> box{}; ///< elements per dimension, innermost first
    TensorMapSwizzle swizzle = TensorMapSwizzle::None;

    /// "f16 box [64, 128] swizzle 128B".
    std::string toString() const;
    bool operator==(TensorMapShape const&) const = default;
};

/// Everything the driver needs besides the address: the shape and the tensor's extents.
struct TensorMapLayout {
    TensorMapShape shape;
    /// Elements per dimension, innermost (contiguous) first.
    std::array<std::uint64_t, kTensorMapMaxRank> sizes{};
    /// Bytes from one index to the next, for dimensions 1 to rank - 1 (strides[0] unused: the
    /// innermost dimension is contiguous).
    std::array<std::uint64_t, kTensorMapMaxRank> strides{};

    /// A row-major matrix of rows x columns elements with `rowBytes` between rows (0: packed),
    /// copied in boxes of boxRows x boxColumns.
    static TensorMapLayout matrix(ScalarType element, std::uint64_t rows, std::uint64_t columns,
                                  std::uint32_t boxRows, std::uint32_t boxColumns,
                                  TensorMapSwizzle swizzle, std::uint64_t rowBytes = 0);

    /// Success when the copy engine can describe this tensor at `address`; otherwise
    /// InvalidArgument naming the first limit broken (cuTensorMapEncodeTiled's documented
    /// requirements: rank 1-5, address 16-byte aligned, sizes 1 to 2^32, strides multiples of
    /// 16 below 2^40 and no smaller than the dimension they step over, box extents 1 to 256,
    /// the inner box a multiple of 16 bytes and within the swizzle span).
    Status check(std::uint64_t address) const;
};

/// A tensor map ready to pass to a kernel: the driver's 128 bytes and the shape they encode.
struct TensorMap {
    alignas(kTensorMapAlignment) std::array<std::byte, kTensorMapBytes> bytes{};
    TensorMapShape shape;
};

} // namespace kiln::runtime
