// Translate.h: from a Command to its first, high-level KernelGraph.
//
// Every tensor becomes a User dimension split into SubDimensions (one per axis, with its size
// and stride); every value a tag names becomes a data dimension (a MacroTile spanning the whole
// tensor, or a Linear vector), tied to the SubDimensions it spans by a Flatten edge and to the
// values it came from by DataFlow. Every Command operation becomes one control operation under
// the Kernel, in order, connected by the Mapping roles below. Lowering rules then tile, loop and
// stage this graph; nothing here decides how the kernel runs.
//
//   operation          roles (Mapping)            coordinate edges added
//   LoadTiled/Linear   source=User, dest=tile     Split(User -> subs), Flatten(subs -> tile),
//                                                 DataFlow(User -> tile)
//   StoreTiled/Linear  source=tile, dest=User     Join(subs -> User), Flatten(subs -> tile),
//                                                 DataFlow(tile -> User)
//   Assign (Execute)   dest=tile                  DataFlow(operand tiles -> tile)
//   Multiply           lhs, rhs, dest             DataFlow(lhs, rhs -> dest)
//   Reduce             source, dest               DataFlow(source -> dest)
//   ForLoop            counter=ForLoop dimension, or Unroll (an unrolled loop; made by lowering)
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/graph/KernelGraph.h"

namespace kiln {

/// The high-level KernelGraph of `command`.
KernelGraph translate(Command const& command);

} // namespace kiln
