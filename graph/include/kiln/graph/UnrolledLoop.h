// UnrolledLoop.h: the copies of a loop counted by an Unroll dimension.
//
// A ForLoop whose counter is an Unroll dimension is an unrolled loop (docs/rules.md,
// gemm-k-unroll): the interpreter runs it as any loop; code generation writes its body once per
// value the counter takes, the counter a constant in each copy. That needs the counter's size,
// its start and its step to be constants, and the loop's condition to end the loop by the last
// copy; unrolledCopies() works the copies out, or says which of these does not hold.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <cstdint>
#include <vector>

namespace kiln {

/// One copy of an unrolled loop's body: the counter's value, and the loop's condition at that
/// value, simplified (a literal 1 where it surely holds; the copy then needs no guard).
struct UnrolledCopy {
    std::int64_t value = 0;
    ExprPtr condition;
};

/// The copies of the unrolled loop `loop`, in order, up to the first whose condition is surely
/// false; a UserError naming the loop where its counter's size, start or step is not a constant
/// or the condition does not end the loop within the counter's size.
std::vector<UnrolledCopy> unrolledCopies(KernelGraph const& graph, Id loop);

} // namespace kiln
