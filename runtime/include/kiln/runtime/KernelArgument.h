// KernelArgument.h: how a C++ argument type looks to a kernel (size, alignment, pointer or value,
// scalar type).
//
// KernelArgument<T> is defined for the fixed-width integers, float, double, Half, BFloat16 and
// DevicePointer<T> of any of them; any other type is a compile error, so a struct or a host
// pointer can never be passed to a kernel by accident.
#pragma once

#include "kiln/runtime/DevicePointer.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/ScalarType.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace kiln::runtime {

/// One launch argument as the kernel sees it.
struct ArgumentDescriptor {
    ParameterKind kind = ParameterKind::Value;
    ScalarType type = ScalarType::U8; ///< the value's type, or the pointed-to element type
    std::size_t size = 0;
    std::size_t alignment = 0;

    /// The C++ spelling for messages: "double", "DevicePointer<float>".
    std::string cppType() const;
    bool operator==(ArgumentDescriptor const&) const = default;
};

/// Maps a C++ type to the scalar type a kernel sees; undefined for anything else.
template <class T>
struct ScalarTypeOf;
template <>
struct ScalarTypeOf<std::int8_t> {
    static constexpr ScalarType value = ScalarType::I8;
};
template <>
struct ScalarTypeOf<std::int16_t> {
    static constexpr ScalarType value = ScalarType::I16;
};
template <>
struct ScalarTypeOf<std::int32_t> {
    static constexpr ScalarType value = ScalarType::I32;
};
template <>
struct ScalarTypeOf<std::int64_t> {
    static constexpr ScalarType value = ScalarType::I64;
};
template <>
struct ScalarTypeOf<std::uint8_t> {
    static constexpr ScalarType value = ScalarType::U8;
};
template <>
struct ScalarTypeOf<std::uint16_t> {
    static constexpr ScalarType value = ScalarType::U16;
};
template <>
struct ScalarTypeOf<std::uint32_t> {
    static constexpr ScalarType value = ScalarType::U32;
};
template <>
struct ScalarTypeOf<std::uint64_t> {
    static constexpr ScalarType value = ScalarType::U64;
};
template <>
struct ScalarTypeOf<Half> {
    static constexpr ScalarType value = ScalarType::F16;
};
template <>
struct ScalarTypeOf<BFloat16> {
    static constexpr ScalarType value = ScalarType::BF16;
};
template <>
struct ScalarTypeOf<float> {
    static constexpr ScalarType value = ScalarType::F32;
};
template <>
struct ScalarTypeOf<double> {
    static constexpr ScalarType value = ScalarType::F64;
};

/// Whether T can be passed to a kernel.
template <class T>
concept KernelArgumentType = requires {
    ScalarTypeOf<std::remove_cv_t<T>>::value;
};

/// The descriptor of a value argument of type T.
template <class T>
struct KernelArgument {
    static_assert(KernelArgumentType<T>,
                  "not a kernel argument type: use a fixed-width integer, float, double, Half, "
                  "BFloat16 or DevicePointer<T>");
    static constexpr ArgumentDescriptor descriptor() {
        return {ParameterKind::Value, ScalarTypeOf<std::remove_cv_t<T>>::value, sizeof(T),
                alignof(T)};
    }
};

/// The descriptor of a device pointer argument.
template <class T>
struct KernelArgument<DevicePointer<T>> {
    static_assert(KernelArgumentType<T>, "DevicePointer<T> needs a scalar element type");
    static constexpr ArgumentDescriptor descriptor() {
        return {ParameterKind::Pointer, ScalarTypeOf<std::remove_cv_t<T>>::value,
                sizeof(std::uint64_t), alignof(std::uint64_t)};
    }
};

} // namespace kiln::runtime
