// PinnedHostMemory.h: an owning, typed allocation of page-locked host memory (RAII).
//
// Page-locked ("pinned") memory is host memory the GPU reaches by DMA, so a stream copies to and
// from it asynchronously: Stream::copy returns at once and the copy happens when the stream gets
// to it, overlapping host work and other streams. Pageable memory (a std::vector) is staged by the
// driver instead, which may make the call wait. Allocated with cuMemHostAlloc (portable to every
// context) or hipHostMalloc, freed with cuMemFreeHost or hipHostFree when it goes; move-only. It
// is a contiguous range of T on the host and converts to std::span<T>, so Stream::copy takes it
// where it takes a host span. It keeps its Device alive.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Status.h"

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

namespace kiln::runtime {

/// `count` elements of T in page-locked host memory, owned.
template <class T>
class PinnedHostMemory {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T>,
                  "PinnedHostMemory<T> holds trivially copyable, non-const elements");

public:
    /// Allocates `count` elements (uninitialised) through `device`'s driver; count 0 gives an
    /// empty buffer.
    static Expected<PinnedHostMemory> allocate(std::shared_ptr<Device> device, std::size_t count) {
        if (!device)
            return Error(ErrorCode::InvalidArgument, "PinnedHostMemory::allocate: no device");
        T* data = nullptr;
        if (count > 0) {
            Expected<void*> allocated = device->allocatePinnedHost(count * sizeof(T));
            if (!allocated.ok())
                return allocated.error();
            data = static_cast<T*>(*allocated);
        }
        return PinnedHostMemory(std::move(device), data, count);
    }

    /// An empty buffer on no device.
    PinnedHostMemory() = default;
    PinnedHostMemory(PinnedHostMemory const&) = delete;
    PinnedHostMemory& operator=(PinnedHostMemory const&) = delete;
    PinnedHostMemory(PinnedHostMemory&& other) noexcept
        : device_(std::move(other.device_))
        , data_(std::exchange(other.data_, nullptr))
        , count_(std::exchange(other.count_, 0)) {}
    PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept {
        if (this != &other) {
            release();
            device_ = std::move(other.device_);
            data_ = std::exchange(other.data_, nullptr);
            count_ = std::exchange(other.count_, 0);
        }
        return *this;
    }
    ~PinnedHostMemory() { release(); }

    /// The elements. Between a copy that reads or writes them and the stream's synchronize()
    /// (or an event after the copy), the stream owns them: do not touch them.
    T* data() { return data_; }
    T const* data() const { return data_; }
    T& operator[](std::size_t i) { return data_[i]; }
    T const& operator[](std::size_t i) const { return data_[i]; }
    T* begin() { return data_; }
    T* end() { return data_ + count_; }
    T const* begin() const { return data_; }
    T const* end() const { return data_ + count_; }
    /// The elements as a span, which is how Stream::copy takes them.
    std::span<T> span() { return {data_, count_}; }
    std::span<T const> span() const { return {data_, count_}; }
    operator std::span<T>() { return span(); }             // NOLINT: a host range by design
    operator std::span<T const>() const { return span(); } // NOLINT
    /// Number of elements.
    std::size_t size() const { return count_; }
    /// Number of bytes.
    std::size_t bytes() const { return count_ * sizeof(T); }
    /// Whether it holds no elements.
    bool empty() const { return count_ == 0; }
    /// The device whose driver allocated it (null for a default-constructed buffer).
    Device* device() const { return device_.get(); }

private:
    PinnedHostMemory(std::shared_ptr<Device> device, T* data, std::size_t count)
        : device_(std::move(device))
        , data_(data)
        , count_(count) {}

    void release() {
        // A failure to free cannot be returned from a destructor; the memory stays locked until
        // the process ends.
        if (device_ && data_)
            (void)device_->deallocatePinnedHost(data_);
        data_ = nullptr;
        count_ = 0;
    }

    std::shared_ptr<Device> device_;
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

} // namespace kiln::runtime
