// HipDevice.h: one AMD GPU seen through HIP (internal).
//
// HIP has no context to hold: work goes to the calling thread's current device, so every call
// makes this device current only when it is not already (ScopedDevice) and restores the caller's
// afterwards, as the CUDA platform does with its primary context.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/hip/HipRuntime.h"

#include <memory>
#include <string>

namespace kiln::runtime::hip {

struct HipContext;

/// A HIP device and its description.
class HipDevice final : public Device {
public:
    /// Opens device `ordinal` and reads its description.
    static Expected<std::shared_ptr<HipDevice>> open(std::shared_ptr<HipRuntime> runtime,
                                                     int ordinal);

    DeviceDescription const& description() const override { return description_; }
    Expected<std::uint64_t> allocate(std::size_t bytes) override;
    Status deallocate(std::uint64_t address) override;
    Status copyToDevice(std::uint64_t dst, void const* src, std::size_t bytes) override;
    Status copyToHost(void* dst, std::uint64_t src, std::size_t bytes) override;
    Expected<void*> allocatePinnedHost(std::size_t bytes) override;
    Status deallocatePinnedHost(void* host) override;
    Expected<std::unique_ptr<StreamBackend>> newStream() override;
    Expected<std::unique_ptr<EventBackend>> newEvent() override;
    Expected<std::unique_ptr<ModuleBackend>> loadCode(KernelLoaderSpec const& spec) override;
    Status synchronize() override;

    /// The runtime, for libraries that call HIP themselves.
    HipRuntime const& runtime() const { return *runtime_; }
    /// The processor with its features as HIP names it: "gfx942:sramecc+:xnack-".
    std::string const& gcnArchName() const { return gcnArchName_; }

private:
    HipDevice(std::shared_ptr<HipRuntime> runtime, DeviceHandle device, int ordinal)
        : runtime_(std::move(runtime))
        , device_(device)
        , ordinal_(ordinal) {}
    Status describe();
    Expected<std::string> readGcnArchName(std::string const& name, int major, int minor) const;
    HipContext context() const;

    std::shared_ptr<HipRuntime> runtime_;
    DeviceHandle device_;
    int ordinal_;
    std::string gcnArchName_;
    DeviceDescription description_;
};

} // namespace kiln::runtime::hip
