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
#include "kiln/runtime/TensorMap.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

namespace kiln::runtime {

/// One launch argument as the kernel sees it.
struct ArgumentDescriptor {
    ParameterKind kind = ParameterKind::Value;
    ScalarType type = ScalarType::U8; ///< the value's type, or the pointed-to element type
    std::size_t size = 0;
    std::size_t alignment = 0;
    TensorMapShape tensorMap{}; ///< for a tensor map: the box and swizzle it encodes

    /// The C++ spelling for messages: "double", "DevicePointer<float>", "TensorMap".
    std::string cppType() const;
    bool operator==(ArgumentDescriptor const&) const = default;
};

/// The scalar type a kernel sees for the C++ type T, or nothing when T is not a kernel scalar.
template <class T>
constexpr std::optional<ScalarType> scalarTypeOf() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, std::int8_t>)
        return ScalarType::I8;
    else if constexpr (std::is_same_v<U, std::int16_t>)
        return ScalarType::I16;
    else if constexpr (std::is_same_v<U, std::int32_t>)
        return ScalarType::I32;
    else if constexpr (std::is_same_v<U, std::int64_t>)
        return ScalarType::I64;
    else if constexpr (std::is_same_v<U, std::uint8_t>)
        return ScalarType::U8;
    else if constexpr (std::is_same_v<U, std::uint16_t>)
        return ScalarType::U16;
    else if constexpr (std::is_same_v<U, std::uint32_t>)
        return ScalarType::U32;
    else if constexpr (std::is_same_v<U, std::uint64_t>)
        return ScalarType::U64;
    else if constexpr (std::is_same_v<U, Half>)
        return ScalarType::F16;
    else if constexpr (std::is_same_v<U, BFloat16>)
        return ScalarType::BF16;
    else if constexpr (std::is_same_v<U, float>)
        return ScalarType::F32;
    else if constexpr (std::is_same_v<U, double>)
        return ScalarType::F64;
    else
        return std::nullopt;
}

/// Whether T can be passed to a kernel by value.
template <class T>
concept KernelArgumentType = scalarTypeOf<T>()
.has_value();

/// The descriptor of a value argument of type T.
template <class T>
struct KernelArgument {
    static_assert(KernelArgumentType<T>,
                  "not a kernel argument type: use a fixed-width integer, float, double, Half, "
                  "BFloat16 or DevicePointer<T>");
    static constexpr ArgumentDescriptor descriptor() {
        return {ParameterKind::Value, *scalarTypeOf<T>(), sizeof(T), alignof(T), {}};
    }
};

/// The descriptor of a device pointer argument.
template <class T>
struct KernelArgument<DevicePointer<T>> {
    static_assert(KernelArgumentType<T>, "DevicePointer<T> needs a scalar element type");
    static constexpr ArgumentDescriptor descriptor() {
        return {ParameterKind::Pointer,
                *scalarTypeOf<T>(),
                sizeof(std::uint64_t),
                alignof(std::uint64_t),
                {}};
    }
};

} // namespace kiln::runtime
