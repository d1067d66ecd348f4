// KernelArguments.h: launch arguments assembled at run time, for kernels whose signature is known
// only from their manifest (`kiln run`, the tuner).
//
// Each add() records the argument's descriptor beside its bytes, so Stream::launch can check the
// whole list against the kernel's manifest and loaded layout before launching.
#pragma once

#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/KernelArgument.h"

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace kiln::runtime {

/// An ordered list of kernel arguments with their descriptors.
class KernelArguments {
public:
    KernelArguments() = default;
    KernelArguments(KernelArguments const& other)
        : slots_(other.slots_)
        , descriptors_(other.descriptors_) {
        repoint();
    }
    KernelArguments& operator=(KernelArguments const& other) {
        slots_ = other.slots_;
        descriptors_ = other.descriptors_;
        repoint();
        return *this;
    }

    /// Appends a value or DevicePointer argument.
    template <class T>
    KernelArguments& add(T const& value) {
        static_assert(sizeof(T) <= sizeof(std::uint64_t));
        std::uint64_t slot = 0;
        std::memcpy(&slot, &value, sizeof(T));
        slots_.push_back(slot);
        descriptors_.push_back(KernelArgument<T>::descriptor());
        repoint();
        return *this;
    }
    /// Appends the address of a buffer.
    template <class T>
    KernelArguments& add(DeviceMemory<T> const& memory) {
        return add(memory.pointer());
    }

    /// The descriptors, in order.
    std::span<ArgumentDescriptor const> descriptors() const { return descriptors_; }
    /// One pointer per argument to its bytes, as a launch takes them; valid while this lives
    /// unchanged.
    void** pointers() const { return const_cast<void**>(pointers_.data()); }
    /// Number of arguments.
    std::size_t size() const { return slots_.size(); }

private:
    std::vector<std::uint64_t> slots_; // little-endian: a narrower value sits at the slot's start
    std::vector<ArgumentDescriptor> descriptors_;
    std::vector<void*> pointers_; // into slots_, rebuilt when slots_ changes

    void repoint() {
        pointers_.clear();
        for (std::uint64_t& slot : slots_)
            pointers_.push_back(&slot);
    }
};

} // namespace kiln::runtime
