// Kernel.h: one loaded kernel entry with its manifest, attributes and parameter layout.
//
// Loading checks what can be checked once: the manifest's entry name, the manifest against the
// parameter layout of the loaded code (where the driver reports it), and raises the dynamic
// shared memory limit to what the manifest asks. Each launch is then checked against the device
// and kernel limits, the manifest's block size and shared memory; shared memory over the current
// limit (48 KB by default on NVIDIA) raises the limit first. Copies share one loaded kernel; use
// a kernel from one thread at a time.
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/KernelArgument.h"
#include "kiln/runtime/KernelAttributes.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/LaunchConfig.h"
#include "kiln/runtime/Status.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::runtime {

/// A loaded kernel, launchable with runtime-checked arguments (TypedKernel adds C++ types).
class Kernel {
public:
    /// Loads the code of `spec` on `device` and takes its kernel entry (Module::load, then
    /// Module::kernel with the spec's manifest).
    static Expected<Kernel> load(std::shared_ptr<Device> device, KernelLoaderSpec const& spec);

    /// The entry name.
    std::string const& name() const { return state_->backend->name(); }
    /// The device it is loaded on.
    Device& device() const { return *state_->device; }
    /// The manifest it was loaded with, if any.
    std::optional<KernelManifest> const& manifest() const { return state_->manifest; }
    /// Registers, shared memory and limits of the loaded code.
    KernelAttributes const& attributes() const { return state_->attributes; }
    /// The parameter layout of the loaded code, when the driver reports it.
    std::optional<std::vector<ParameterLayout>> const& parameterLayout() const {
        return state_->layout;
    }

    /// Sets the dynamic shared memory limit (LaunchOutOfLimits over the device's opt-in limit).
    Status setMaxDynamicSharedBytes(std::size_t bytes) const;
    /// Checks arguments against the manifest and the loaded code's layout (whichever exist).
    Status checkArguments(std::span<ArgumentDescriptor const> arguments) const;
    /// Checks a launch against the limits and the manifest, raising the dynamic shared memory
    /// limit when the launch needs more than the current one.
    Status prepareLaunch(LaunchConfig const& config) const;

    /// The platform's kernel.
    KernelBackend const& backend() const { return *state_->backend; }

private:
    friend class Module;
    struct State {
        std::shared_ptr<Device> device;
        std::shared_ptr<ModuleBackend> module;
        std::unique_ptr<KernelBackend> backend;
        std::optional<KernelManifest> manifest;
        KernelAttributes attributes;
        std::optional<std::vector<ParameterLayout>> layout;
    };
    explicit Kernel(std::shared_ptr<State> state)
        : state_(std::move(state)) {}

    std::shared_ptr<State> state_;
};

} // namespace kiln::runtime
