// Interpreter.h: the reference interpreter of KernelGraphs.
//
// Runs a KernelGraph at any lowering level on host buffers: it walks the control graph from the
// Kernel, runs every workgroup (the product of the Workgroup dimensions) and, for operations on
// per-thread storage (Register, ThreadTile), every workitem in lockstep, and computes every
// address by evaluating the coordinate transforms (CoordinatePlan). Elements whose coordinates
// fall outside a dimension are masked: loads read 0, stores are skipped. Control flow must be
// uniform across the workitems of a workgroup. Because every rule application can be checked by
// running the graph before and after it, this is what makes rules testable.
#pragma once

#include "kiln/graph/Bindings.h"
#include "kiln/graph/KernelGraph.h"

#include <cstdint>

namespace kiln {

struct InterpreterOptions {
    /// A ForLoop that runs more iterations than this is reported as not terminating.
    std::int64_t maxLoopIterations = std::int64_t{1} << 26;
};

/// Runs `graph`, reading and writing the tensors of `bindings`.
void interpret(KernelGraph const& graph, Bindings& bindings, InterpreterOptions const& options = {});

} // namespace kiln
