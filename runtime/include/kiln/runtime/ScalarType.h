// ScalarType.h: the element and value types a kernel parameter can have (f32, u64, bf16, ...).
//
// Manifests name parameter types with PTX-like names; the runtime maps C++ argument types onto
// the same names so that a launch can be checked against a manifest before it runs. Half and
// BFloat16 are storage types (16 bits, no arithmetic) for f16/bf16 buffers and arguments, with
// round-to-nearest-even conversions from float for tests and reference data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::runtime {

/// A scalar type of a kernel parameter or of the elements a pointer parameter points to.
enum class ScalarType : std::uint8_t { I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64 };

/// The manifest name: "i8" ... "u64", "f16", "bf16", "f32", "f64".
std::string_view name(ScalarType type);
/// The C++ type Kiln maps to it: "int8_t" ... "uint64_t", "Half", "BFloat16", "float", "double".
std::string_view cppName(ScalarType type);
/// Size in bytes.
std::size_t sizeOf(ScalarType type);
/// The type with this manifest name, or nothing.
std::optional<ScalarType> parseScalarType(std::string_view text);
/// Every manifest name, comma-separated, for error messages.
std::string scalarTypeNames();

/// An IEEE binary16 value, stored as its bits.
struct Half {
    std::uint16_t bits = 0;
    /// The nearest half to `value` (round to nearest even; overflow gives infinity).
    static Half fromFloat(float value);
    /// The exact float value.
    float toFloat() const;
    bool operator==(Half const&) const = default;
};

/// A bfloat16 value (the high 16 bits of a float), stored as its bits.
struct BFloat16 {
    std::uint16_t bits = 0;
    /// The nearest bfloat16 to `value` (round to nearest even; NaN stays NaN).
    static BFloat16 fromFloat(float value);
    /// The exact float value.
    float toFloat() const;
    bool operator==(BFloat16 const&) const = default;
};

} // namespace kiln::runtime
