#include "kiln/graph/TransformChain.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kiln {

namespace {

bool canForward(CoordinateEdgeKind kind) {
    return kind != CoordinateEdgeKind::DataFlow;
}
bool canReverse(CoordinateEdgeKind kind) {
    return kind != CoordinateEdgeKind::DataFlow && kind != CoordinateEdgeKind::Forget;
}

} // namespace

std::vector<TransformStep> transformChain(KernelGraph const& graph, std::vector<Id> const& known,
                                          std::vector<Id> const& targets) {
    auto const& coords = graph.coordinates;
    // Propagate: apply any transform whose inputs are all known, until nothing changes. Record
    // the step that first produced each dimension.
    std::set<Id> have(known.begin(), known.end());
    std::vector<TransformStep> applied;
    std::map<Id, std::size_t> producer;
    std::vector<Id> const edges = coords.edges();
    std::set<std::pair<Id, bool>> used;
    for (bool progress = true; progress;) {
        progress = false;
        for (Id e : edges) {
            CoordinateEdgeKind const kind = coords.edge(e).kind;
            auto tails = coords.tails(e), heads = coords.heads(e);
            auto all = [&](std::vector<Id> const& ids) {
                return std::all_of(ids.begin(), ids.end(), [&](Id n) { return have.count(n) > 0; });
            };
            auto any = [&](std::vector<Id> const& ids) {
                return std::any_of(ids.begin(), ids.end(),
                                   [&](Id n) { return have.count(n) == 0; });
            };
            for (bool forward : {true, false}) {
                auto const& in = forward ? tails : heads;
                auto const& out = forward ? heads : tails;
                if (used.count({e, forward}) || !(forward ? canForward(kind) : canReverse(kind)) ||
                    !all(in) || !any(out))
                    continue;
                used.insert({e, forward});
                for (Id n : out)
                    if (have.insert(n).second)
                        producer[n] = applied.size();
                applied.push_back({e, forward, in, out});
                progress = true;
            }
        }
    }

    // Keep the steps the targets depend on, in the order they were found.
    std::set<std::size_t> needed;
    std::vector<Id> work;
    for (Id t : targets) {
        if (!have.count(t)) {
            auto const& d = coords.node(t);
            throw UserError(
                fmt::format("no chain of coordinate transforms reaches #{} ({}{}) from the "
                            "known indices",
                            t, name(d.kind), d.name.empty() ? "" : " " + d.name));
        }
        work.push_back(t);
    }
    while (!work.empty()) {
        Id const n = work.back();
        work.pop_back();
        auto it = producer.find(n);
        if (it == producer.end() || !needed.insert(it->second).second)
            continue;
        for (Id input : applied[it->second].inputs)
            work.push_back(input);
    }
    std::vector<TransformStep> chain;
    for (std::size_t i : needed)
        chain.push_back(std::move(applied[i]));
    return chain;
}

} // namespace kiln
