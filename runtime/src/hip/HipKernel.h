// HipKernel.h: one kernel of a loaded AMD code object, with its metadata (internal).
//
// The metadata note gives the kernel's argument layout, so the kernel packs a launch's
// arguments itself into the buffer hipModuleLaunchKernel takes through `extra`, each at the
// offset the code reads it from.
#pragma once

#include "HipObjects.h"
#include "kiln/runtime/CodeObject.h"

#include <vector>

namespace kiln::runtime::hip {

/// A kernel entry of a HIP module.
class HipKernel final : public KernelBackend {
public:
    HipKernel(HipContext context, FunctionHandle function, CodeObjectKernel metadata)
        : context_(std::move(context))
        , function_(function)
        , metadata_(std::move(metadata)) {}

    std::string const& name() const override { return metadata_.name; }
    Expected<KernelAttributes> attributes() const override;
    /// AMD GPUs have no per-kernel dynamic LDS limit to raise: succeeds when `bytes` fit in what
    /// the device leaves beside the kernel's static LDS, LaunchOutOfLimits otherwise.
    Status setMaxDynamicSharedBytes(std::size_t bytes) override;
    /// The explicit arguments of the metadata note, always known.
    Expected<std::optional<std::vector<ParameterLayout>>> parameterLayout() const override;
    void* native() const override { return function_; }

    /// The kernel's entry in the metadata note.
    CodeObjectKernel const& metadata() const { return metadata_; }
    /// The argument buffer of a launch: `arguments` holds one pointer per explicit argument,
    /// each to as many bytes as the metadata gives it (the caller has checked the types);
    /// padding is zero.
    std::vector<unsigned char> packArguments(void** arguments) const;

private:
    HipFunctions const& api() const { return context_.runtime->api(); }

    HipContext context_;
    FunctionHandle function_;
    CodeObjectKernel metadata_;
};

} // namespace kiln::runtime::hip
