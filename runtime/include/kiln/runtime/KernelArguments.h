// KernelArguments.h: launch arguments assembled at run time, for kernels whose signature is known
// only from their manifest (`kiln run`, the tuner).
//
// Each add() records the argument's descriptor beside its bytes, so Stream::launch can check the
// whole list against the kernel's manifest and loaded layout before launching.
#pragma once

#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/KernelArgument.h"

#include <array>
#include <cstddef>
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
        Slot slot;
        std::memcpy(slot.bytes.data(), &value, sizeof(T));
        return append(slot, KernelArgument<T>::descriptor());
    }
    /// Appends the address of a buffer.
    template <class T>
    KernelArguments& add(DeviceMemory<T> const& memory) {
        return add(memory.pointer());
    }
    /// Appends a TMA tensor map (128 bytes, 64-byte aligned in the parameter buffer).
    KernelArguments& add(TensorMap const& map) {
        Slot slot;
        std::memcpy(slot.bytes.data(), map.bytes.data(), kTensorMapBytes);
        return append(slot, {ParameterKind::TensorMap, map.shape.element, kTensorMapBytes,
                             kTensorMapAlignment, map.shape});
    }

    /// The descriptors, in order.
    std::span<ArgumentDescriptor const> descriptors() const { return descriptors_; }
    /// One pointer per argument to its bytes, as a launch takes them; valid while this lives
    /// unchanged.
    void** pointers() const { return const_cast<void**>(pointers_.data()); }
    /// Number of arguments.
    std::size_t size() const { return slots_.size(); }

private:
    /// One argument's bytes, as aligned as the most aligned kind (a tensor map); little-endian: a
    /// narrower value sits at the slot's start.
    struct Slot {
        alignas(kTensorMapAlignment) std::array<std::byte, kTensorMapBytes> bytes{};
    };
    std::vector<Slot> slots_;
    std::vector<ArgumentDescriptor> descriptors_;
    std::vector<void*> pointers_; // into slots_, rebuilt when slots_ changes

    KernelArguments& append(Slot const& slot, ArgumentDescriptor const& descriptor) {
        slots_.push_back(slot);
        descriptors_.push_back(descriptor);
        repoint();
        return *this;
    }
    void repoint() {
        pointers_.clear();
        for (Slot& slot : slots_)
            pointers_.push_back(slot.bytes.data());
    }
};

} // namespace kiln::runtime
