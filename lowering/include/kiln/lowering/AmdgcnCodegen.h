// AmdgcnCodegen.h: from a lowered KernelGraph to an AMDGCN kernel, with its manifest.
//
// emitAmdgcnKernel is emitKernel (Codegen.h) for AMD targets (gfx90a, gfx942, gfx1100): the same
// walk of the control graph, the same addresses solved from the coordinate transforms
// (IndexExpressions.h), the same elements per workitem (HeldElements.h) and the same manifest,
// written as AMDGCN through kiln::amdgcn, which allocates registers and inserts waits and nops.
// Index math is 64-bit (uniform parts on the scalar unit); masks are lane masks in exec, so a
// ragged tile's vector access runs for the lanes whose elements all exist and one masked
// scalar access per element runs for the others; floating-point reductions accumulate in f64.
// The code is assembly text: runtime/Assembler.h makes it a code object.
#pragma once

#include "kiln/lowering/Codegen.h"

#include <string_view>

namespace kiln::lowering {

// emitKernel chooses this code generator for AMD targets itself; emitAmdgcnKernel and
// isAmdgcnTarget stay for the callers that choose by name until they call emitKernel.

/// Whether `target` names an AMD target ("gfx...").
bool isAmdgcnTarget(std::string_view target);

/// The kernel for `graph` on the AMD target `options.target`: EmittedKernel::code is the
/// assembly file (descriptor and metadata note included). A UserError names what the graph asks
/// for that the AMDGCN code generator cannot do (and the operation it belongs to), or a kernel
/// that needs more registers than the target has.
EmittedKernel emitAmdgcnKernel(KernelGraph const& graph, CodegenOptions const& options);

} // namespace kiln::lowering
