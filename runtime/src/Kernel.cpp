// Kernel.cpp: per-kernel checks of arguments and launches, and the shared memory limit.
#include "kiln/runtime/Kernel.h"

#include "kiln/runtime/ArgumentCheck.h"
#include "kiln/runtime/LaunchLimits.h"
#include "kiln/runtime/Module.h"

namespace kiln::runtime {

Expected<Kernel> Kernel::load(std::shared_ptr<Device> device, KernelLoaderSpec const& spec) {
    KILN_ASSIGN_OR_RETURN(Module module, Module::load(std::move(device), spec));
    return module.kernel(spec.kernelName(), spec.manifest());
}

Status Kernel::setMaxDynamicSharedBytes(std::size_t bytes) const {
    DeviceDescription const& device = state_->device->description();
    std::size_t const limit = static_cast<std::size_t>(device.sharedBytesPerBlockOptin);
    if (bytes + state_->attributes.staticSharedBytes > limit) {
        return Error(ErrorCode::LaunchOutOfLimits,
                     "kernel '" + name() + "' on " + device.summary() + ": " +
                         std::to_string(bytes) + " bytes of dynamic shared memory plus " +
                         std::to_string(state_->attributes.staticSharedBytes) +
                         " static is over the device's opt-in limit of " + std::to_string(limit) +
                         " bytes per block");
    }
    KILN_RETURN_IF_ERROR(state_->backend->setMaxDynamicSharedBytes(bytes));
    state_->attributes.maxDynamicSharedBytes = bytes;
    return {};
}

Status Kernel::checkArguments(std::span<ArgumentDescriptor const> arguments) const {
    if (state_->manifest) {
        KILN_RETURN_IF_ERROR(runtime::checkArguments(name(), *state_->manifest, arguments));
    }
    if (state_->layout) {
        KILN_RETURN_IF_ERROR(runtime::checkArguments(name(), *state_->layout, arguments));
    }
    return {};
}

Status Kernel::prepareLaunch(LaunchConfig const& config) const {
    DeviceDescription const& device = state_->device->description();
    KILN_RETURN_IF_ERROR(checkLaunchLimits(device, name(), state_->attributes, config));
    if (state_->manifest) {
        KernelManifest const& manifest = *state_->manifest;
        if (manifest.block && *manifest.block != config.block) {
            return Error(ErrorCode::LaunchOutOfLimits,
                         "launch of '" + name() + "' on " + device.summary() + ": block " +
                             config.block.toString() + " differs from the block " +
                             manifest.block->toString() +
                             " the manifest says the kernel was generated for");
        }
        Dim3 const cluster = manifest.cluster.value_or(Dim3{});
        if (cluster != config.cluster) {
            return Error(ErrorCode::LaunchOutOfLimits,
                         "launch of '" + name() + "' on " + device.summary() + ": cluster " +
                             config.cluster.toString() + " differs from the cluster " +
                             cluster.toString() +
                             " the manifest says the kernel was generated for");
        }
        if (config.sharedBytes < manifest.sharedBytes) {
            return Error(ErrorCode::LaunchOutOfLimits,
                         "launch of '" + name() + "' on " + device.summary() + ": " +
                             std::to_string(config.sharedBytes) +
                             " bytes of dynamic shared memory, but the manifest says the kernel "
                             "needs " +
                             std::to_string(manifest.sharedBytes));
        }
    }
    if (config.sharedBytes > state_->attributes.maxDynamicSharedBytes) {
        KILN_RETURN_IF_ERROR(setMaxDynamicSharedBytes(config.sharedBytes));
    }
    return {};
}

} // namespace kiln::runtime
