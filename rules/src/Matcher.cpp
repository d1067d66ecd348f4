#include "kiln/rules/Matcher.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace kiln::rules {

Matcher::Matcher(KernelGraph const& graph)
    : graph_(graph) {
    for (Id d : graph.coordinates.nodes()) {
        dimensionsByKind_[graph.coordinates.node(d).kind].push_back(d);
        allDimensions_.push_back(d);
    }
    for (Id op : graph.control.nodes()) {
        operationsByKind_[graph.control.node(op).kind].push_back(op);
        allOperations_.push_back(op);
    }
    for (auto const& [op, connections] : graph.mapping.all())
        for (auto const& c : connections)
            users_[c.dimension].push_back(op);
}

// One search for one pattern: the state of a backtracking walk.
struct Matcher::Search {
    Matcher& m;
    Pattern const& pattern;
    std::function<bool(Match const&)> const& accept;
    Match match;
    std::set<Id> used;
    std::vector<bool> done;
    std::map<std::string, NodePattern const*> nodeOf;
    // For explain(): the deepest failure seen.
    std::size_t bestDepth = 0;
    std::string bestReason;
    bool explaining = false;

    Search(Matcher& matcher, Pattern const& p, std::function<bool(Match const&)> const& a,
           Match const& seed)
        : m(matcher)
        , pattern(p)
        , accept(a)
        , match(seed)
        , done(p.edges.size(), false) {
        for (auto const& n : p.nodes)
            nodeOf[n.variable] = &n;
        for (auto const& [v, id] : seed.elements)
            used.insert(id);
    }

    // Records why a candidate failed, for explain(); costs nothing when not explaining, since
    // failed candidates are the matcher's common case.
    template <class... Args>
    void note(fmt::format_string<Args...> format, Args&&... args) {
        if (!explaining)
            return;
        std::size_t const depth = match.elements.size() + match.lists.size();
        if (depth >= bestDepth) {
            bestDepth = depth;
            bestReason = fmt::format(format, std::forward<Args>(args)...);
        }
    }

    bool bound(std::string const& v) const { return match.elements.count(v) > 0; }

    // Whether element `id` can be variable `v` (kind and graph).
    bool fits(std::string const& v, Id id) {
        auto it = nodeOf.find(v);
        if (it == nodeOf.end())
            return true; // an outer variable, bound by the seed
        NodePattern const& n = *it->second;
        if (n.control) {
            if (!m.graph_.control.isNode(id)) {
                note("#{} is not an operation, but '{}' is", id, v);
                return false;
            }
            auto kind = m.graph_.control.node(id).kind;
            if (!n.operationKinds.empty() &&
                std::find(n.operationKinds.begin(), n.operationKinds.end(), kind) ==
                    n.operationKinds.end()) {
                note("'{}' wants {} but #{} is {}", v, name(n.operationKinds[0]), id, name(kind));
                return false;
            }
            return true;
        }
        if (!m.graph_.coordinates.isNode(id)) {
            note("#{} is not a dimension, but '{}' is", id, v);
            return false;
        }
        auto kind = m.graph_.coordinates.node(id).kind;
        if (!n.dimensionKinds.empty() && std::find(n.dimensionKinds.begin(), n.dimensionKinds.end(),
                                                   kind) == n.dimensionKinds.end()) {
            note("'{}' wants {} but #{} is {}", v, name(n.dimensionKinds[0]), id, name(kind));
            return false;
        }
        return true;
    }

    // Binds v to id if consistent; records v in `trail` when newly bound.
    bool bind(std::string const& v, Id id, std::vector<std::string>& trail) {
        if (auto it = match.elements.find(v); it != match.elements.end()) {
            if (it->second != id)
                note("'{}' is #{} but this edge needs #{}", v, it->second, id);
            return it->second == id;
        }
        if (used.count(id)) {
            note("#{} is already bound to another variable than '{}'", id, v);
            return false;
        }
        if (!fits(v, id))
            return false;
        match.elements[v] = id;
        used.insert(id);
        trail.push_back(v);
        return true;
    }

    bool bindList(PortList const& ports, std::vector<Id> const& actual,
                  std::vector<std::string>& trail, std::vector<std::string>& listTrail) {
        std::size_t const fixed = ports.fixed.size();
        if (ports.rest ? actual.size() < fixed : actual.size() != fixed) {
            note("an edge has {} ports where the pattern has {}{}", actual.size(), fixed,
                 ports.rest ? " or more" : "");
            return false;
        }
        for (std::size_t k = 0; k < fixed; ++k)
            if (!bind(ports.fixed[k], actual[k], trail))
                return false;
        if (!ports.rest)
            return true;
        std::vector<Id> rest(actual.begin() + static_cast<std::ptrdiff_t>(fixed), actual.end());
        auto const count = static_cast<int>(rest.size());
        if (count < ports.minRest || (ports.maxRest >= 0 && count > ports.maxRest)) {
            note("'...{}' binds {} ports, outside [{}, {}]", *ports.rest, count, ports.minRest,
                 ports.maxRest);
            return false;
        }
        if (auto it = match.lists.find(*ports.rest); it != match.lists.end()) {
            if (it->second != rest)
                note("'...{}' binds different ports in two edges", *ports.rest);
            return it->second == rest;
        }
        for (Id id : rest)
            if (!fits(*ports.rest, id))
                return false;
        match.lists[*ports.rest] = std::move(rest);
        listTrail.push_back(*ports.rest);
        return true;
    }

    void undo(std::vector<std::string> const& trail, std::vector<std::string> const& listTrail) {
        for (auto const& v : trail) {
            used.erase(match.elements.at(v));
            match.elements.erase(v);
        }
        for (auto const& v : listTrail)
            match.lists.erase(v);
    }

    // Number of endpoints of edge pattern e already bound.
    int boundEndpoints(EdgePattern const& e) const {
        int n = 0;
        for (auto const* list : {&e.tails, &e.heads})
            for (auto const& v : list->fixed)
                n += bound(v) ? 1 : 0;
        return n;
    }

    // Graph elements that could be edge pattern e, from one bound endpoint.
    std::vector<Id> edgeCandidates(EdgePattern const& e) {
        KernelGraph const& g = m.graph_;
        auto anchor = [&](PortList const& list) -> std::optional<Id> {
            for (auto const& v : list.fixed)
                if (bound(v))
                    return match.elements.at(v);
            return std::nullopt;
        };
        std::vector<Id> out;
        switch (e.graph) {
        case EdgePattern::Graph::Coordinate: {
            if (auto t = anchor(e.tails); t && g.coordinates.isNode(*t))
                out = g.coordinates.outgoing(*t);
            else if (auto h = anchor(e.heads); h && g.coordinates.isNode(*h))
                out = g.coordinates.incoming(*h);
            std::erase_if(out,
                          [&](Id id) { return g.coordinates.edge(id).kind != e.coordinateKind; });
            break;
        }
        case EdgePattern::Graph::Control: {
            if (auto f = anchor(e.tails); f && g.control.isNode(*f))
                out = g.control.outgoing(*f);
            else if (auto t = anchor(e.heads); t && g.control.isNode(*t))
                out = g.control.incoming(*t);
            std::erase_if(out, [&](Id id) { return g.control.edge(id).kind != e.controlKind; });
            break;
        }
        case EdgePattern::Graph::Mapping: {
            // Candidates are the operations having this role; the dimension follows.
            if (auto op = anchor(e.tails))
                out = {*op};
            else if (auto dim = anchor(e.heads)) {
                if (auto it = m.users_.find(*dim); it != m.users_.end())
                    out = it->second;
            }
            break;
        }
        }
        std::sort(out.begin(), out.end());
        return out;
    }

    bool tryEdge(std::size_t index, Id candidate) {
        m.count();
        EdgePattern const& e = pattern.edges[index];
        KernelGraph const& g = m.graph_;
        std::vector<std::string> trail, listTrail;
        bool ok = true;
        if (e.graph == EdgePattern::Graph::Mapping) {
            auto dim = g.mapping.find(candidate, e.role);
            ok = dim.has_value();
            if (!ok)
                note("operation #{} has no '{}' connection", candidate, e.role);
            ok = ok && bind(e.tails.fixed[0], candidate, trail) &&
                 bind(e.heads.fixed[0], *dim, trail);
        } else {
            if (used.count(candidate))
                return false;
            auto const& tails = e.graph == EdgePattern::Graph::Coordinate
                                    ? g.coordinates.tails(candidate)
                                    : g.control.tails(candidate);
            auto const& heads = e.graph == EdgePattern::Graph::Coordinate
                                    ? g.coordinates.heads(candidate)
                                    : g.control.heads(candidate);
            ok = bindList(e.tails, tails, trail, listTrail) &&
                 bindList(e.heads, heads, trail, listTrail);
            if (ok) {
                match.elements[e.variable] = candidate;
                used.insert(candidate);
                trail.push_back(e.variable);
            }
        }
        if (ok) {
            done[index] = true;
            if (step())
                return true;
            done[index] = false;
        }
        undo(trail, listTrail);
        return false;
    }

    std::vector<Id> const& nodeCandidates(NodePattern const& n) {
        static std::vector<Id> const none;
        if (n.control) {
            if (n.operationKinds.size() == 1) {
                auto it = m.operationsByKind_.find(n.operationKinds[0]);
                return it == m.operationsByKind_.end() ? none : it->second;
            }
            return m.allOperations_;
        }
        if (n.dimensionKinds.size() == 1) {
            auto it = m.dimensionsByKind_.find(n.dimensionKinds[0]);
            return it == m.dimensionsByKind_.end() ? none : it->second;
        }
        return m.allDimensions_;
    }

    bool bindNode(NodePattern const& n) {
        if (nodeCandidates(n).empty())
            note("there is no {} in the graph to be '{}'",
                 n.control
                     ? (n.operationKinds.size() == 1 ? name(n.operationKinds[0]) : "operation")
                     : (n.dimensionKinds.size() == 1 ? name(n.dimensionKinds[0]) : "dimension"),
                 n.variable);
        for (Id id : nodeCandidates(n)) {
            m.count();
            std::vector<std::string> trail, listTrail;
            if (bind(n.variable, id, trail) && step())
                return true;
            undo(trail, listTrail);
        }
        return false;
    }

    // One step of the search: bind the next edge (most bound endpoints first), or a node.
    bool step() {
        int bestScore = -1;
        std::size_t best = pattern.edges.size();
        for (std::size_t i = 0; i < pattern.edges.size(); ++i)
            if (!done[i]) {
                int const score = boundEndpoints(pattern.edges[i]);
                if (score > bestScore) {
                    bestScore = score;
                    best = i;
                }
            }
        if (best < pattern.edges.size() && bestScore > 0) {
            for (Id candidate : edgeCandidates(pattern.edges[best]))
                if (tryEdge(best, candidate))
                    return true;
            return false;
        }
        // No edge touches a bound node: bind a node, preferring those on a pending edge, then
        // those with the fewest candidates.
        auto onPendingEdge = [&](std::string const& v) {
            for (std::size_t i = 0; i < pattern.edges.size(); ++i)
                if (!done[i])
                    for (auto const* list : {&pattern.edges[i].tails, &pattern.edges[i].heads})
                        if (std::find(list->fixed.begin(), list->fixed.end(), v) !=
                            list->fixed.end())
                            return true;
            return false;
        };
        NodePattern const* next = nullptr;
        bool nextOnEdge = false;
        std::size_t fewest = SIZE_MAX;
        for (auto const& n : pattern.nodes) {
            if (bound(n.variable))
                continue;
            bool const onEdge = onPendingEdge(n.variable);
            std::size_t const count = nodeCandidates(n).size();
            if (!next || (onEdge && !nextOnEdge) || (onEdge == nextOnEdge && count < fewest)) {
                next = &n;
                nextOnEdge = onEdge;
                fewest = count;
            }
        }
        if (next)
            return bindNode(*next);
        if (best < pattern.edges.size()) {
            note("an edge of the pattern joins no variable");
            return false;
        }
        return accept(match);
    }
};

void Matcher::count() {
    ++tried_;
    if (tried_ > mostTried_)
        throw OverBudget{Limit::Candidates};
    // The clock costs more than a candidate: read it every 1024 of them.
    if (tried_ % 1024 == 0 && std::chrono::steady_clock::now() > deadline_)
        throw OverBudget{Limit::Time};
}

void Matcher::setBudget(std::int64_t candidates, std::chrono::steady_clock::time_point deadline) {
    mostTried_ = tried_ > INT64_MAX - candidates ? INT64_MAX : tried_ + candidates;
    deadline_ = deadline;
}

bool Matcher::forEach(Pattern const& pattern, std::function<bool(Match const&)> const& accept,
                      Match const& seed) {
    Search search(*this, pattern, accept, seed);
    return search.step();
}

bool Matcher::exists(Pattern const& pattern, Match const& seed) {
    std::function<bool(Match const&)> const any = [](Match const&) { return true; };
    return forEach(pattern, any, seed);
}

std::string Matcher::explain(Pattern const& pattern, std::string const& variable, Id at) {
    std::function<bool(Match const&)> const any = [](Match const&) { return true; };
    Search search(*this, pattern, any, {});
    search.explaining = true;
    auto it = search.nodeOf.find(variable);
    if (it == search.nodeOf.end())
        return fmt::format("the pattern has no variable '{}'", variable);
    std::vector<std::string> trail, listTrail;
    if (!search.bind(variable, at, trail))
        return search.bestReason;
    if (search.step())
        return "";
    return search.bestReason.empty() ? "no match" : search.bestReason;
}

} // namespace kiln::rules
