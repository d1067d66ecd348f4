#include "kiln/lowering/TransformChains.h"

namespace kiln::lowering {

std::vector<TransformStep> const& TransformChains::between(std::vector<Id> const& known,
                                                           std::vector<Id> const& targets) {
    auto key = std::make_pair(known, targets);
    if (auto it = chains_.find(key); it != chains_.end())
        return it->second;
    // No chain (a UserError) is not kept: it ends code generation.
    auto chain = transformChain(graph_, known, targets);
    return chains_.emplace(std::move(key), std::move(chain)).first->second;
}

} // namespace kiln::lowering
