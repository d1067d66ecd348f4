// Device.h: one GPU of a platform, with its context: memory, streams, events and code loading.
//
// A platform implements Device; users reach it through Platform::device() and hold it by
// shared_ptr, which every object made from it (memory, streams, kernels) keeps alive, so the
// context outlives everything allocated in it. All calls make the device's context current for
// their duration and restore the caller's.
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/DeviceDescription.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/TensorMap.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kiln::runtime {

/// One device of a platform.
class Device {
public:
    virtual ~Device() = default;

    /// Properties and limits, read when the device was opened.
    virtual DeviceDescription const& description() const = 0;

    /// Allocates `bytes` of device memory (DeviceMemory<T> is the owning way).
    virtual Expected<std::uint64_t> allocate(std::size_t bytes) = 0;
    /// Frees memory from allocate().
    virtual Status deallocate(std::uint64_t address) = 0;
    /// Synchronous host-to-device copy.
    virtual Status copyToDevice(std::uint64_t dst, void const* src, std::size_t bytes) = 0;
    /// Synchronous device-to-host copy.
    virtual Status copyToHost(void* dst, std::uint64_t src, std::size_t bytes) = 0;
    /// Allocates `bytes` of page-locked host memory, which streams copy asynchronously
    /// (PinnedHostMemory<T> is the owning way).
    virtual Expected<void*> allocatePinnedHost(std::size_t bytes) = 0;
    /// Frees memory from allocatePinnedHost().
    virtual Status deallocatePinnedHost(void* host) = 0;

    /// A new stream (Stream::create is the usual way).
    virtual Expected<std::unique_ptr<StreamBackend>> newStream() = 0;
    /// A new timing event (Event::create is the usual way).
    virtual Expected<std::unique_ptr<EventBackend>> newEvent() = 0;
    /// Loads the code of `spec` (Module::load and Kernel::load are the usual ways). A JIT
    /// failure is JitFailed with the complete JIT log, the kernel name and the target.
    virtual Expected<std::unique_ptr<ModuleBackend>> loadCode(KernelLoaderSpec const& spec) = 0;

    /// Waits until all work on the device is done.
    virtual Status synchronize() = 0;

    /// A TMA tensor map of the tensor at `address` (NVIDIA sm_90 and later). InvalidArgument
    /// when the copy engine cannot describe the layout (TensorMapLayout::check says why);
    /// Unsupported where the platform, the driver or the device has no tensor maps.
    virtual Expected<TensorMap> encodeTensorMap(std::uint64_t address,
                                                TensorMapLayout const& layout) {
        (void)address;
        (void)layout;
        return Error(ErrorCode::Unsupported, "tensor maps are an NVIDIA sm_90 feature; " +
                                                 description().summary() + " has none");
    }
};

} // namespace kiln::runtime
