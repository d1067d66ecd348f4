// emitKernel: the target's vendor, as arch-db describes it, chooses the code generator; a new
// target of an existing vendor needs only its arch-db entry.
#include "CodeGenerators.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"

#include <fmt/format.h>

namespace kiln::lowering {

arch::Vendor targetVendor(std::string_view target) {
    auto const* arch = arch::ArchLibrary::instance().find(target);
    if (!arch)
        throw UserError(fmt::format("no code generator for target '{}' (targets: {})", target,
                                    fmt::join(arch::ArchLibrary::instance().targetNames(), ", ")));
    return arch->vendor();
}

EmittedKernel emitKernel(KernelGraph const& graph, CodegenOptions const& options) {
    switch (targetVendor(options.target)) {
    case arch::Vendor::Nvidia:
        return detail::emitPtxKernel(graph, options);
    case arch::Vendor::Amd:
        return detail::emitAmdgcnKernel(graph, options);
    }
    KILN_ASSERT(false, "target {} has a vendor without a code generator", options.target);
    return {};
}

} // namespace kiln::lowering
