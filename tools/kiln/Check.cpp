#include "Check.h"

#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"

#include <algorithm>

namespace kiln::cli {

CheckResult checkAgainstReference(Command const& command, KernelGraph const& graph,
                                  std::map<std::string, double> const& problem,
                                  std::uint64_t seed) {
    Bindings viaGraph = randomBindings(command, problem, seed);
    Bindings direct = viaGraph;
    interpret(graph, viaGraph);
    runReference(command, direct);
    CheckResult result;
    for (auto const& op : command.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            double const error =
                maxRelativeError(viaGraph.tensors.at(op.tensor), direct.tensors.at(op.tensor));
            result.errorByTensor[op.tensor] = error;
            result.worst = std::max(result.worst, error);
        }
    return result;
}

} // namespace kiln::cli
