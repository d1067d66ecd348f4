// DeviceMemory.h: an owning, typed allocation in a device's memory (RAII).
//
// Freed when destroyed; move-only. Converts to DevicePointer<T> (and DevicePointer<T const>) for
// launches, so a buffer of the wrong element type does not compile as a typed kernel argument.
// It keeps its Device alive, so the memory never outlives its context.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/DevicePointer.h"
#include "kiln/runtime/Status.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::runtime {

/// `count` elements of T in device memory, owned.
template <class T>
class DeviceMemory {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T>,
                  "DeviceMemory<T> holds trivially copyable, non-const elements");

public:
    /// Allocates `count` elements (uninitialised); count 0 gives an empty buffer.
    static Expected<DeviceMemory> allocate(std::shared_ptr<Device> device, std::size_t count) {
        if (!device)
            return Error(ErrorCode::InvalidArgument, "DeviceMemory::allocate: no device");
        std::uint64_t address = 0;
        if (count > 0) {
            Expected<std::uint64_t> allocated = device->allocate(count * sizeof(T));
            if (!allocated.ok())
                return allocated.error();
            address = *allocated;
        }
        return DeviceMemory(std::move(device), address, count);
    }

    /// An empty buffer on no device.
    DeviceMemory() = default;
    DeviceMemory(DeviceMemory const&) = delete;
    DeviceMemory& operator=(DeviceMemory const&) = delete;
    DeviceMemory(DeviceMemory&& other) noexcept
        : device_(std::move(other.device_))
        , address_(std::exchange(other.address_, 0))
        , count_(std::exchange(other.count_, 0)) {}
    DeviceMemory& operator=(DeviceMemory&& other) noexcept {
        if (this != &other) {
            release();
            device_ = std::move(other.device_);
            address_ = std::exchange(other.address_, 0);
            count_ = std::exchange(other.count_, 0);
        }
        return *this;
    }
    ~DeviceMemory() { release(); }

    /// The device address.
    DevicePointer<T> pointer() const { return DevicePointer<T>(address_); }
    operator DevicePointer<T>() const { return pointer(); }                              // NOLINT
    operator DevicePointer<T const>() const { return DevicePointer<T const>(address_); } // NOLINT
    /// Number of elements.
    std::size_t size() const { return count_; }
    /// Number of bytes.
    std::size_t bytes() const { return count_ * sizeof(T); }
    /// Whether it holds no elements.
    bool empty() const { return count_ == 0; }
    /// The device it lives on (null for a default-constructed buffer).
    Device* device() const { return device_.get(); }

    /// Synchronously copies `host` into the buffer; its size must equal size().
    Status write(std::span<T const> host) {
        if (Status s = checkSize(host.size(), "write"); !s.ok())
            return s;
        return host.empty() ? Status() : device_->copyToDevice(address_, host.data(), bytes());
    }
    /// Synchronously copies the buffer to the host.
    Expected<std::vector<T>> read() const {
        std::vector<T> host(count_);
        if (count_ > 0) {
            if (Status s = device_->copyToHost(host.data(), address_, bytes()); !s.ok())
                return s.error();
        }
        return host;
    }

private:
    DeviceMemory(std::shared_ptr<Device> device, std::uint64_t address, std::size_t count)
        : device_(std::move(device))
        , address_(address)
        , count_(count) {}

    Status checkSize(std::size_t hostCount, char const* what) const {
        if (hostCount == count_)
            return {};
        return Error(ErrorCode::InvalidArgument,
                     std::string("DeviceMemory::") + what + ": the host range has " +
                         std::to_string(hostCount) + " elements but the buffer has " +
                         std::to_string(count_));
    }
    void release() {
        // A failure to free cannot be returned from a destructor; the driver keeps the memory
        // until the context goes, which the next call's error will show.
        if (device_ && address_ != 0)
            (void)device_->deallocate(address_);
        address_ = 0;
        count_ = 0;
    }

    std::shared_ptr<Device> device_;
    std::uint64_t address_ = 0;
    std::size_t count_ = 0;
};

} // namespace kiln::runtime
