// Module.cpp: loading code and taking kernels from it, checked against their manifests.
#include "kiln/runtime/Module.h"

#include "kiln/runtime/ArgumentCheck.h"
#include "kiln/runtime/Kernel.h"

namespace kiln::runtime {

Expected<Module> Module::load(std::shared_ptr<Device> device, KernelLoaderSpec const& spec) {
    if (!device)
        return Error(ErrorCode::InvalidArgument, "Module::load: no device");
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<ModuleBackend> backend, device->loadCode(spec));
    return Module(std::move(device), std::shared_ptr<ModuleBackend>(std::move(backend)),
                  spec.describe());
}

Expected<Kernel> Module::kernel(std::string const& name,
                                std::optional<KernelManifest> manifest) const {
    if (manifest && manifest->entry != name) {
        return Error(ErrorCode::InvalidManifest, "the manifest describes kernel '" +
                                                     manifest->entry + "' but kernel '" + name +
                                                     "' is asked for from " + origin_);
    }
    auto state = std::make_shared<Kernel::State>();
    state->device = device_;
    state->module = backend_;
    KILN_ASSIGN_OR_RETURN(state->backend, backend_->kernel(name));
    KILN_ASSIGN_OR_RETURN(state->attributes, state->backend->attributes());
    KILN_ASSIGN_OR_RETURN(state->layout, state->backend->parameterLayout());
    state->manifest = std::move(manifest);
    Kernel kernel(std::move(state));
    if (kernel.manifest()) {
        KernelManifest const& checked = *kernel.manifest();
        if (kernel.parameterLayout()) {
            KILN_RETURN_IF_ERROR(checkManifestLayout(name, checked, *kernel.parameterLayout()));
        }
        if (checked.sharedBytes > kernel.attributes().maxDynamicSharedBytes) {
            KILN_RETURN_IF_ERROR(kernel.setMaxDynamicSharedBytes(checked.sharedBytes));
        }
    }
    return kernel;
}

} // namespace kiln::runtime
