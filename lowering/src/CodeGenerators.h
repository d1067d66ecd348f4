// CodeGenerators.h (internal): the code generator of each vendor, which emitKernel (Codegen.h)
// chooses by the target's vendor in arch-db. Each runs the kernel walker (KernelWalker.h) over
// its target: ptx/PtxCodegen.cpp and amdgcn/emitter/AmdgcnCodegen.cpp define them.
#pragma once

#include "kiln/lowering/Codegen.h"

namespace kiln::lowering::detail {

/// PTX for an NVIDIA target; refuses a kernel the target cannot launch.
EmittedKernel emitPtxKernel(KernelGraph const& graph, CodegenOptions const& options);

/// AMDGCN assembly (descriptor and metadata note included) for an AMD target.
EmittedKernel emitAmdgcnKernel(KernelGraph const& graph, CodegenOptions const& options);

} // namespace kiln::lowering::detail
