// Assembler.cpp: choosing an AMDGCN assembler.
#include "AmdAssemblers.h"

namespace kiln::runtime {

Expected<std::unique_ptr<Assembler>> makeAssembler(std::string_view name) {
    if (name == "comgr") {
#if KILN_HAVE_COMGR
        return amd::makeComgrAssembler();
#else
        return Error(ErrorCode::Unsupported,
                     "the Comgr assembler is not in this build: amd_comgr.h was not found when it "
                     "was configured (install libamd-comgr-dev and configure again)");
#endif
    }
    if (name == "llvm")
        return amd::loadLlvmAssembler();
    return Error(ErrorCode::Unsupported,
                 "unknown assembler '" + std::string(name) + "'; known assemblers: comgr, llvm");
}

Expected<std::unique_ptr<Assembler>> assemblerFor(std::string_view target) {
    std::string why;
    for (char const* name : {"comgr", "llvm"}) {
        Expected<std::unique_ptr<Assembler>> assembler = makeAssembler(name);
        if (!assembler.ok()) {
            why += "; " + assembler.error().message();
            continue;
        }
        if ((*assembler)->supports(target))
            return assembler;
        why += "; " + (*assembler)->version() + " does not know " + std::string(target);
    }
    return Error(ErrorCode::Unsupported, "no assembler for " + std::string(target) + why);
}

} // namespace kiln::runtime
