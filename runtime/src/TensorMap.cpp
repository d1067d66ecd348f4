// TensorMap.cpp: tensor-map shapes, names and the copy engine's limits.
#include "kiln/runtime/TensorMap.h"

#include <cstdint>

namespace kiln::runtime {
namespace {

constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxStride = std::uint64_t{1} << 40;
constexpr std::uint32_t kMaxBox = 256;

Error invalid(std::string const& what) {
    return Error(ErrorCode::InvalidArgument, "tensor map: " + what);
}

/// a * b, or the largest uint64_t when that overflows.
std::uint64_t saturatingProduct(std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

std::string dimension(std::size_t i) {
    return "dimension " + std::to_string(i);
}

} // namespace

std::string_view name(TensorMapSwizzle swizzle) {
    switch (swizzle) {
    case TensorMapSwizzle::None:
        return "none";
    case TensorMapSwizzle::Bytes32:
        return "32B";
    case TensorMapSwizzle::Bytes64:
        return "64B";
    case TensorMapSwizzle::Bytes128:
        return "128B";
    }
    return "?";
}

std::optional<TensorMapSwizzle> parseTensorMapSwizzle(std::string_view text) {
    for (TensorMapSwizzle s : {TensorMapSwizzle::None, TensorMapSwizzle::Bytes32,
                               TensorMapSwizzle::Bytes64, TensorMapSwizzle::Bytes128}) {
        if (name(s) == text)
            return s;
    }
    return std::nullopt;
}

std::size_t swizzleBytes(TensorMapSwizzle swizzle) {
    switch (swizzle) {
    case TensorMapSwizzle::None:
        return 0;
    case TensorMapSwizzle::Bytes32:
        return 32;
    case TensorMapSwizzle::Bytes64:
        return 64;
    case TensorMapSwizzle::Bytes128:
        return 128;
    }
    return 0;
}

std::string TensorMapShape::toString() const {
    std::string text = std::string(name(element)) + " box [";
    for (std::size_t i = 0; i < rank; ++i)
        text += (i ? ", " : "") + std::to_string(box[i]);
    return text + "] swizzle " + std::string(name(swizzle));
}

TensorMapLayout TensorMapLayout::matrix(ScalarType element, std::uint64_t rows,
                                        std::uint64_t columns, std::uint32_t boxRows,
                                        std::uint32_t boxColumns, TensorMapSwizzle swizzle,
                                        std::uint64_t rowBytes) {
    TensorMapLayout layout;
    layout.shape = {element, 2, {boxColumns, boxRows}, swizzle};
    layout.sizes = {columns, rows};
    layout.strides = {0, rowBytes ? rowBytes : columns * sizeOf(element)};
    return layout;
}

Status TensorMapLayout::check(std::uint64_t address) const {
    std::size_t const rank = shape.rank;
    if (rank == 0 || rank > kTensorMapMaxRank)
        return invalid("a tensor map has 1 to 5 dimensions, not " + std::to_string(rank));
    if (address % 16 != 0)
        return invalid("the tensor's address " + std::to_string(address) +
                       " is not a multiple of 16 bytes");
    std::size_t const element = sizeOf(shape.element);
    for (std::size_t i = 0; i < rank; ++i) {
        if (sizes[i] == 0 || sizes[i] > kMaxSize)
            return invalid(dimension(i) + " has " + std::to_string(sizes[i]) +
                           " elements; the copy engine takes 1 to 2^32");
        if (shape.box[i] == 0 || shape.box[i] > kMaxBox)
            return invalid(dimension(i) + ": a box of " + std::to_string(shape.box[i]) +
                           " elements; the copy engine takes 1 to 256");
        if (i == 0)
            continue;
        // The smallest legal stride: the previous dimension packed (each dimension steps over
        // all of the one inside it).
        std::uint64_t const inner =
            saturatingProduct(i == 1 ? element : strides[i - 1], sizes[i - 1]);
        if (strides[i] % 16 != 0 || strides[i] >= kMaxStride)
            return invalid(dimension(i) + "'s stride of " + std::to_string(strides[i]) +
                           " bytes is not a multiple of 16 below 2^40");
        if (strides[i] < inner)
            return invalid(dimension(i) + "'s stride of " + std::to_string(strides[i]) +
                           " bytes is smaller than the " + std::to_string(inner) +
                           " bytes of the dimension inside it");
    }
    std::uint64_t const innerBox = std::uint64_t{shape.box[0]} * element;
    if (innerBox % 16 != 0)
        return invalid("the box's inner dimension is " + std::to_string(innerBox) +
                       " bytes; the copy engine moves multiples of 16");
    if (std::size_t const span = swizzleBytes(shape.swizzle); span && innerBox > span)
        return invalid("the box's inner dimension is " + std::to_string(innerBox) +
                       " bytes, more than the " + std::string(name(shape.swizzle)) +
                       " swizzle's span");
    return {};
}

} // namespace kiln::runtime
