// CommandFacts.cpp: the facts of CommandFacts.h, from the Command's translated graph.
#include "kiln/scheduler/CommandFacts.h"

#include "kiln/graph/Translate.h"
#include "kiln/lowering/MeanVariance.h"
#include "kiln/lowering/OnlineSoftmax.h"

#include <map>

namespace kiln::scheduler {

std::vector<std::string> commandFactNames() {
    return {"max_exp_sums", "mean_variances"};
}

CommandFacts commandFacts(Command const& command) {
    KernelGraph const graph = translate(command);
    std::map<std::string, std::int64_t> const facts{
        {"max_exp_sums", static_cast<std::int64_t>(lowering::findMaxExpSums(graph).size())},
        {"mean_variances", static_cast<std::int64_t>(lowering::findMeanVariances(graph).size())}};
    return [facts](std::string const& name) -> std::optional<std::int64_t> {
        auto const it = facts.find(name);
        return it == facts.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
    };
}

} // namespace kiln::scheduler
