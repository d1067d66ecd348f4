// CudaDevice.h: one CUDA device and its primary context (internal).
//
// The primary context is the one the CUDA runtime and other frameworks share, so Kiln's memory
// and modules can be mixed with theirs; every call pushes it only when it is not already
// current and pops it afterwards, leaving the caller's current context as it was.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/cuda/CudaDriver.h"

#include <memory>

namespace kiln::runtime::cuda {

/// A CUDA device with its retained primary context.
class CudaDevice final : public Device {
public:
    /// Opens device `ordinal`: retains its primary context and reads its description.
    static Expected<std::shared_ptr<CudaDevice>> open(std::shared_ptr<CudaDriver> driver,
                                                      int ordinal);
    ~CudaDevice() override;

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
    Expected<TensorMap> encodeTensorMap(std::uint64_t address,
                                        TensorMapLayout const& layout) override;

    /// The driver and the primary context, for libraries that call CUDA themselves (cuBLAS).
    CudaDriver const& driver() const { return *driver_; }
    CUcontext context() const { return context_; }

private:
    CudaDevice(std::shared_ptr<CudaDriver> driver, CUdevice device, CUcontext context)
        : driver_(std::move(driver))
        , device_(device)
        , context_(context) {}
    Status describe(int ordinal);

    std::shared_ptr<CudaDriver> driver_;
    CUdevice device_;
    CUcontext context_;
    DeviceDescription description_;
};

} // namespace kiln::runtime::cuda
