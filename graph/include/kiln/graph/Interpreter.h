// Interpreter.h: the reference interpreter of KernelGraphs.
//
// Runs a KernelGraph at any lowering level on host buffers. It walks the control graph once, in
// lockstep over the whole grid: each operation runs for every workgroup and workitem it concerns
// before the next operation starts, which is what any schedule of a race-free kernel computes,
// and what makes every intermediate state of a lowering meaningful (a value tiled over the grid
// while its neighbours are not yet still computes the same result). Which instances run follows
// the dimension an operation produces or walks (its domain):
//   - a data dimension tiled onto Workgroup/Workitem dimensions (its own index, or one of the
//     axes it is the Flatten of, by a Tile whose heads PassThrough to them) is distributed: each
//     element is computed by the workgroup and workitem that own it, found by evaluating the
//     tiling from the grid and the other (local) indices, so a tiling that misses elements
//     leaves them uncomputed;
//   - MacroTile, WaveTile and Shared values exist once per workgroup, Register and ThreadTile
//     values once per workitem, User and Linear values once.
// Every address comes from the coordinate transforms (CoordinatePlan); elements whose
// coordinates fall outside a dimension are masked: loads read 0, stores are skipped. Control
// flow (ForLoop, If) must be uniform across the grid.
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
void interpret(KernelGraph const& graph, Bindings& bindings,
               InterpreterOptions const& options = {});

} // namespace kiln
