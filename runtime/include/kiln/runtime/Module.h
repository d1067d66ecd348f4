// Module.h: device code loaded on one device, from which kernels are taken by name.
//
// Loading compiles PTX with the driver's JIT (or loads a cubin, or on HIP an AMD code object, as
// is); one module can hold many kernel entries, each taken once with kernel(). The module stays
// loaded while any Kernel taken from it lives.
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Status.h"

#include <memory>
#include <optional>
#include <string>

namespace kiln::runtime {

class Kernel;

/// Loaded device code.
class Module {
public:
    /// Loads the code of `spec` on `device` (JitFailed with the complete JIT log on a PTX error).
    static Expected<Module> load(std::shared_ptr<Device> device, KernelLoaderSpec const& spec);

    /// The kernel entry `name`, checked against `manifest` when one is given (see Kernel::load).
    Expected<Kernel> kernel(std::string const& name,
                            std::optional<KernelManifest> manifest = std::nullopt) const;

    /// The JIT's information log of the load (warnings, resource use).
    std::string const& jitLog() const { return backend_->jitLog(); }
    /// Where the code came from, for messages ("PTX file 'k.ptx'").
    std::string const& origin() const { return origin_; }

private:
    Module(std::shared_ptr<Device> device, std::shared_ptr<ModuleBackend> backend,
           std::string origin)
        : device_(std::move(device))
        , backend_(std::move(backend))
        , origin_(std::move(origin)) {}

    std::shared_ptr<Device> device_;
    std::shared_ptr<ModuleBackend> backend_;
    std::string origin_;
};

} // namespace kiln::runtime
