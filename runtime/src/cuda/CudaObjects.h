// CudaObjects.h: the CUDA streams, events, command buffers and loaded code behind the runtime's
// value types (internal).
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/cuda/CudaDriver.h"

#include <memory>
#include <string>

namespace kiln::runtime::cuda {

/// What the objects of one device share: the driver, the context and the device's summary.
struct CudaContext {
    std::shared_ptr<CudaDriver> driver;
    CUcontext context = nullptr;
    std::string device; ///< DeviceDescription::summary(), for messages
    std::string target; ///< the device's target, e.g. "sm_90"
};

/// A new non-blocking stream.
Expected<std::unique_ptr<StreamBackend>> createCudaStream(CudaContext const& context);
/// A new timing event.
Expected<std::unique_ptr<EventBackend>> createCudaEvent(CudaContext const& context);
/// Instantiates a graph captured from a stream; the command buffer owns both, and on failure the
/// graph is destroyed here.
Expected<std::unique_ptr<CommandBufferBackend>> instantiateCudaGraph(CudaContext const& context,
                                                                     CUgraph graph);
/// Loads code through cuModuleLoadDataEx: JitFailed carries the complete JIT error log.
Expected<std::unique_ptr<ModuleBackend>> loadCudaModule(CudaContext const& context,
                                                        KernelLoaderSpec const& spec);

} // namespace kiln::runtime::cuda
