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
//   - values that are not distributed exist once per workgroup (MacroTile, WaveTile, Shared),
//     once per workitem (Register, ThreadTile) or once (User, Linear); a distributed value
//     exists once, each element written by its owner, so a lowering may distribute the values
//     of a chain one at a time. (Whether a workgroup may read an element another one owns is
//     for code generation to refuse: it holds only what a workitem owns.)
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
