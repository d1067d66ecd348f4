// OperationOrder.h (internal): decisions about the order and pairing of a body's operations
// that every code generator makes the same way, so the PTX and AMDGCN backends share them.
//
// - Loads into registers sink to just before their first reader (never past a store to their
//   tensor), so that an epilogue's C is not live across a GEMM's K loop.
// - A Multiply whose product is added to an accumulator right away (`X = X + D`, what
//   gemm-k-loop writes) is fused: the fmas go straight into the accumulator.
#pragma once

#include "kiln/graph/Translate.h"

#include <functional>
#include <vector>

namespace kiln::lowering::detail {

/// Whether `op`, or an operation nested in it, reads value `d`.
bool readsValue(KernelGraph const& graph, Id op, Id d);

/// Whether `op`, or an operation nested in it, stores to tensor `memory`.
bool writesTensor(KernelGraph const& graph, Id op, Id memory);

/// `ops` with each load whose dest `inRegisters` accepts moved down to just before its first
/// reader, and never past a store to its tensor.
std::vector<Id> sinkLoads(KernelGraph const& graph, std::vector<Id> ops,
                          std::function<bool(Id)> const& inRegisters);

/// X when `op` is a Multiply into D and `next` is `X = X + D` (either order) and nothing else
/// reads D; else 0. The caller still checks that X is held with D's layout.
Id fusableAccumulator(KernelGraph const& graph, Id op, Id next);

} // namespace kiln::lowering::detail
