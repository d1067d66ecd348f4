// DevicePointer.h: a typed, non-owning address in a device's memory.
//
// Kernels take device addresses as 64-bit values; DevicePointer<T> keeps the element type so
// that a launch can be checked against the manifest's pointer parameters (a DevicePointer<double>
// passed where the kernel reads f32 is refused). DeviceMemory<T> owns memory and hands these out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kiln::runtime {

/// A device address of elements of type T (T may be const for read-only parameters).
template <class T>
class DevicePointer {
public:
    /// The null address.
    DevicePointer() = default;
    /// The address `address`, as the platform gives it.
    explicit DevicePointer(std::uint64_t address)
        : address_(address) {}
    /// A read-only view of the same address.
    operator DevicePointer<T const>() const // NOLINT: implicit like T* to T const*
        requires(!std::is_const_v<T>) {
        return DevicePointer<T const>(address_);
    }

    /// The raw address.
    std::uint64_t address() const { return address_; }
    /// The address `count` elements further.
    DevicePointer operator+(std::size_t count) const {
        return DevicePointer(address_ + count * sizeof(T));
    }
    bool operator==(DevicePointer const&) const = default;

private:
    std::uint64_t address_ = 0;
};

} // namespace kiln::runtime
