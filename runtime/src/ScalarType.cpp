// ScalarType.cpp: scalar type names and the 16-bit float conversions.
#include "kiln/runtime/ScalarType.h"

#include <array>
#include <bit>
#include <cstring>

namespace kiln::runtime {
namespace {

struct ScalarInfo {
    ScalarType type;
    std::string_view name;
    std::string_view cppName;
    std::size_t size;
};

constexpr std::array<ScalarInfo, 12> kScalars{{
    {ScalarType::I8, "i8", "int8_t", 1},
    {ScalarType::I16, "i16", "int16_t", 2},
    {ScalarType::I32, "i32", "int32_t", 4},
    {ScalarType::I64, "i64", "int64_t", 8},
    {ScalarType::U8, "u8", "uint8_t", 1},
    {ScalarType::U16, "u16", "uint16_t", 2},
    {ScalarType::U32, "u32", "uint32_t", 4},
    {ScalarType::U64, "u64", "uint64_t", 8},
    {ScalarType::F16, "f16", "Half", 2},
    {ScalarType::BF16, "bf16", "BFloat16", 2},
    {ScalarType::F32, "f32", "float", 4},
    {ScalarType::F64, "f64", "double", 8},
}};

ScalarInfo const& info(ScalarType type) {
    return kScalars[static_cast<std::size_t>(type)];
}

} // namespace

std::string_view name(ScalarType type) {
    return info(type).name;
}
std::string_view cppName(ScalarType type) {
    return info(type).cppName;
}
std::size_t sizeOf(ScalarType type) {
    return info(type).size;
}

std::optional<ScalarType> parseScalarType(std::string_view text) {
    for (ScalarInfo const& scalar : kScalars) {
        if (scalar.name == text)
            return scalar.type;
    }
    return std::nullopt;
}

std::string scalarTypeNames() {
    std::string names;
    for (ScalarInfo const& scalar : kScalars) {
        if (!names.empty())
            names += ", ";
        names += scalar.name;
    }
    return names;
}

Half Half::fromFloat(float value) {
    std::uint32_t const bits = std::bit_cast<std::uint32_t>(value);
    std::uint32_t const sign = (bits >> 16) & 0x8000u;
    std::uint32_t const exponent = (bits >> 23) & 0xffu;
    std::uint32_t mantissa = bits & 0x7fffffu;
    if (exponent == 0xffu) { // infinity or NaN (quiet)
        return {static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u))};
    }
    int const halfExponent = static_cast<int>(exponent) - 127 + 15;
    if (halfExponent >= 0x1f)
        return {static_cast<std::uint16_t>(sign | 0x7c00u)};
    if (halfExponent <= 0) { // subnormal half, or zero
        if (halfExponent < -10)
            return {static_cast<std::uint16_t>(sign)};
        mantissa |= 0x800000u;
        int const shift = 14 - halfExponent;
        std::uint32_t half = mantissa >> shift;
        std::uint32_t const rest = mantissa & ((1u << shift) - 1u);
        std::uint32_t const halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half & 1u)))
            ++half;
        return {static_cast<std::uint16_t>(sign | half)};
    }
    std::uint32_t half = (static_cast<std::uint32_t>(halfExponent) << 10) | (mantissa >> 13);
    std::uint32_t const rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        ++half; // may carry into infinity
    return {static_cast<std::uint16_t>(sign | half)};
}

float Half::toFloat() const {
    std::uint32_t const sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    std::uint32_t exponent = (bits >> 10) & 0x1fu;
    std::uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0x1f)
        return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {
        if (mantissa == 0)
            return std::bit_cast<float>(sign);
        // Normalise the subnormal.
        exponent = 1;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            --exponent;
        }
        mantissa &= 0x3ffu;
    }
    std::uint32_t const floatExponent = exponent + 127 - 15;
    return std::bit_cast<float>(sign | (floatExponent << 23) | (mantissa << 13));
}

BFloat16 BFloat16::fromFloat(float value) {
    std::uint32_t const bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) { // NaN: keep it quiet
        return {static_cast<std::uint16_t>((bits >> 16) | 0x40u)};
    }
    std::uint32_t const rounding = 0x7fffu + ((bits >> 16) & 1u);
    return {static_cast<std::uint16_t>((bits + rounding) >> 16)};
}

float BFloat16::toFloat() const {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

} // namespace kiln::runtime
