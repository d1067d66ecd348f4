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
    // Every edge's ports once (each lookup sorts them): the propagation below visits the edges
    // many times. Ids are dense, so what is known is a flag per id.
    struct Edge {
        Id id;
        CoordinateEdgeKind kind;
        std::vector<Id> tails, heads;
        bool used[2] = {false, false}; ///< applied forward, in reverse
    };
    std::vector<Edge> edges;
    Id last = 0;
    for (Id e : coords.edges()) {
        edges.push_back({e, coords.edge(e).kind, coords.tails(e), coords.heads(e)});
        last = std::max(last, e);
        for (Id n : edges.back().tails)
            last = std::max(last, n);
        for (Id n : edges.back().heads)
            last = std::max(last, n);
    }
    for (Id n : known)
        last = std::max(last, n);
    for (Id n : targets)
        last = std::max(last, n);
    std::vector<char> have(static_cast<std::size_t>(last) + 1, 0);
    for (Id n : known)
        have[static_cast<std::size_t>(n)] = 1;
    auto isKnown = [&](Id n) { return have[static_cast<std::size_t>(n)] != 0; };

    // Propagate: apply any transform whose inputs are all known, until nothing changes. Record
    // the step that first produced each dimension.
    std::vector<TransformStep> applied;
    std::map<Id, std::size_t> producer;
    for (bool progress = true; progress;) {
        progress = false;
        for (Edge& e : edges) {
            for (bool forward : {true, false}) {
                auto const& in = forward ? e.tails : e.heads;
                auto const& out = forward ? e.heads : e.tails;
                if (e.used[forward ? 0 : 1] ||
                    !(forward ? canForward(e.kind) : canReverse(e.kind)) ||
                    !std::all_of(in.begin(), in.end(), isKnown) ||
                    std::all_of(out.begin(), out.end(), isKnown))
                    continue;
                e.used[forward ? 0 : 1] = true;
                for (Id n : out)
                    if (!isKnown(n)) {
                        have[static_cast<std::size_t>(n)] = 1;
                        producer[n] = applied.size();
                    }
                applied.push_back({e.id, forward, in, out});
                progress = true;
            }
        }
    }

    // Keep the steps the targets depend on, in the order they were found.
    std::set<std::size_t> needed;
    std::vector<Id> work;
    for (Id t : targets) {
        if (!isKnown(t)) {
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
