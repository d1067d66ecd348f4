#include "kiln/rules/SemanticCheck.h"

#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::rules {

SemanticCheck::SemanticCheck(Command const& command, std::map<std::string, double> const& problem,
                             std::uint64_t seed)
    : command_(command)
    , inputs_(randomBindings(command, problem, seed))
    , expected_(inputs_) {
    runReference(command, expected_);
    for (auto const& op : command.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            auto const type = command.findTensor(op.tensor)->dtype;
            if (type == DataType::F16 || type == DataType::BF16)
                tolerance_ = 1e-2;
        }
}

void SemanticCheck::check(KernelGraph const& graph, std::string const& what) const {
    Bindings actual = inputs_;
    interpret(graph, actual);
    lastError_ = 0;
    std::string worstTensor;
    for (auto const& op : command_.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            double const e =
                maxRelativeError(actual.tensors.at(op.tensor), expected_.tensors.at(op.tensor));
            if (!(e <= lastError_)) {
                lastError_ = e;
                worstTensor = op.tensor;
            }
        }
    if (!(lastError_ <= tolerance_))
        fail("{} changed the result: tensor '{}' differs from the Command's meaning by {:.3g} "
             "(tolerance {:.0e})",
             what, worstTensor, lastError_, tolerance_);
}

} // namespace kiln::rules
