// CodeGenerators.h (internal): the code generator of each vendor, which emitKernel (Codegen.h)
// chooses by the target's vendor in arch-db. Each runs the kernel walker (KernelWalker.h) over
// its target: ptx/PtxCodegen.cpp and amdgcn/emitter/AmdgcnCodegen.cpp define them.
#pragma once

#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/LaunchShape.h"

namespace kiln::lowering {

/// The manifest's parameters, hash and common fields of the kernel `graph` becomes
/// (Manifest.cpp): what every target's kernel says of its interface.
void describeInterface(KernelGraph const& graph, CodegenOptions const& options,
                       LaunchShape const& shape, EmittedKernel& kernel);

} // namespace kiln::lowering

namespace kiln::lowering::detail {

/// PTX for an NVIDIA target; refuses a kernel the target cannot launch.
EmittedKernel emitPtxKernel(KernelGraph const& graph, CodegenOptions const& options);

/// AMDGCN assembly (descriptor and metadata note included) for an AMD target.
EmittedKernel emitAmdgcnKernel(KernelGraph const& graph, CodegenOptions const& options);

} // namespace kiln::lowering::detail
