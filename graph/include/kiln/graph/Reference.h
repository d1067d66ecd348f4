// Reference.h: the direct meaning of a Command, computed on the host.
//
// The second, independent reference: it runs the Command's operations one after another on
// whole tensors, with no KernelGraph involved, so that the interpreter's reading of the graph
// (at any lowering level) can be checked against what the user asked for. Values are rounded to
// their types where a GPU would round them: on load and store, and after each operation.
#pragma once

#include "kiln/graph/Bindings.h"
#include "kiln/graph/Command.h"

namespace kiln {

/// Runs `command` on `bindings`, writing the tensors its stores name.
void runReference(Command const& command, Bindings& bindings);

} // namespace kiln
