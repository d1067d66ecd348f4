// AmdAssemblers.h: the assembler implementations this build was configured with.
#pragma once

#include "kiln/runtime/Assembler.h"

namespace kiln::runtime::amd {

#if KILN_HAVE_LLVM_MC
/// LLVM 16 MC (assemble) + lld (link).
std::unique_ptr<Assembler> makeLlvmAssembler();
#endif
#if KILN_HAVE_COMGR
/// AMD Comgr; NoDriver when the library fails to answer.
Expected<std::unique_ptr<Assembler>> makeComgrAssembler();
#endif

} // namespace kiln::runtime::amd
