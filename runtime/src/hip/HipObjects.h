// HipObjects.h: the HIP streams, events, command buffers and loaded code behind the runtime's
// value types (internal).
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/hip/HipRuntime.h"

#include <memory>
#include <string>

namespace kiln::runtime::hip {

/// What the objects of one device share: the runtime, the device and how messages name it.
struct HipContext {
    std::shared_ptr<HipRuntime> runtime;
    int ordinal = 0;
    std::string device;      ///< DeviceDescription::summary(), for messages
    std::string target;      ///< the device's processor, e.g. "gfx942"
    std::string gcnArchName; ///< with its features, e.g. "gfx942:sramecc+:xnack-"
};

/// A new non-blocking stream on the device.
Expected<std::unique_ptr<StreamBackend>> createHipStream(HipContext const& context);
/// A new timing event.
Expected<std::unique_ptr<EventBackend>> createHipEvent(HipContext const& context);
/// Instantiates a graph captured from a stream; the command buffer owns both, and on failure the
/// graph is destroyed here.
Expected<std::unique_ptr<CommandBufferBackend>> instantiateHipGraph(HipContext const& context,
                                                                    GraphHandle graph);
/// Reads the code object's metadata note, checks its processor against the device and the
/// spec's manifest against its arguments, then loads it with hipModuleLoadData.
Expected<std::unique_ptr<ModuleBackend>> loadHipModule(HipContext const& context,
                                                       KernelLoaderSpec const& spec);

} // namespace kiln::runtime::hip
