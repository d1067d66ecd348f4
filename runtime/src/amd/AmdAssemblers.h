// AmdAssemblers.h: making the two AMDGCN assemblers, each loaded at run time on first use.
#pragma once

#include "kiln/runtime/Assembler.h"

namespace kiln::runtime::amd {

/// LLVM 16 MC (assemble) + lld (link), from the plugin module kiln_llvm_assembler; Unsupported
/// or NotFound, saying where it was looked for, when it cannot be loaded.
Expected<std::unique_ptr<Assembler>> loadLlvmAssembler();
#if KILN_HAVE_COMGR
/// AMD Comgr, from libamd_comgr; NoDriver when the library is missing or fails to answer.
Expected<std::unique_ptr<Assembler>> makeComgrAssembler();
#endif

} // namespace kiln::runtime::amd
