#include "kiln/graph/SemanticCheck.h"

#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"

namespace kiln {

SemanticCheck::SemanticCheck(Command const& command, std::map<std::string, double> const& problem,
                             std::uint64_t seed)
    : command_(command)
    , inputs_(randomBindings(command, problem, seed))
    , expected_(inputs_) {
    runReference(command, expected_);
    // A value rounded to 16 bits on the way (an f16 Execute stored as f32) turns a reordered
    // f32 sum's last-bit difference into a 16-bit one, as a 16-bit store does.
    auto const half = [](DataType type) { return type == DataType::F16 || type == DataType::BF16; };
    for (auto const& op : command.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            if (half(command.findTensor(op.tensor)->dtype))
                tolerance_ = 1e-2;
        } else if (op.kind != CommandOpKind::LoadLinear && op.kind != CommandOpKind::LoadTiled &&
                   half(command.values().at(op.tag).dtype)) {
            tolerance_ = 1e-2;
        }
}

double SemanticCheck::measure(KernelGraph const& graph) const {
    Bindings actual = inputs_;
    interpret(graph, actual);
    errors_.clear();
    lastError_ = 0;
    for (auto const& op : command_.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            double const e =
                maxRelativeError(actual.tensors.at(op.tensor), expected_.tensors.at(op.tensor));
            errors_[op.tensor] = e;
            if (!(e <= lastError_))
                lastError_ = e;
        }
    return lastError_;
}

void SemanticCheck::check(KernelGraph const& graph, std::string const& what) const {
    if (measure(graph) <= tolerance_)
        return;
    auto worst = errors_.begin();
    for (auto it = errors_.begin(); it != errors_.end(); ++it)
        if (!(it->second <= worst->second))
            worst = it;
    fail("{} changed the result: tensor '{}' differs from the Command's meaning by {:.3g} "
         "(tolerance {:.0e})",
         what, worst->first, worst->second, tolerance_);
}

} // namespace kiln
