#include "kiln/graph/KernelGraph.h"

#include <algorithm>
#include <queue>
#include <set>

namespace kiln {

void Mapping::connect(Id operation, std::string role, Id dimension) {
    auto& list = connections_[operation];
    for (auto& c : list)
        if (c.role == role) {
            c.dimension = dimension;
            return;
        }
    list.push_back({std::move(role), dimension});
}

void Mapping::disconnect(Id operation, std::string_view role) {
    auto it = connections_.find(operation);
    if (it == connections_.end())
        return;
    std::erase_if(it->second, [&](Connection const& c) { return c.role == role; });
    if (it->second.empty())
        connections_.erase(it);
}

void Mapping::forget(Id operation) {
    connections_.erase(operation);
}

std::optional<Id> Mapping::find(Id operation, std::string_view role) const {
    auto it = connections_.find(operation);
    if (it == connections_.end())
        return std::nullopt;
    for (auto const& c : it->second)
        if (c.role == role)
            return c.dimension;
    return std::nullopt;
}

Id Mapping::get(Id operation, std::string_view role) const {
    auto found = find(operation, role);
    KILN_ASSERT(found, "operation {} has no '{}' connection", operation, role);
    return *found;
}

std::vector<Connection> const& Mapping::connections(Id operation) const {
    static std::vector<Connection> const none;
    auto it = connections_.find(operation);
    return it == connections_.end() ? none : it->second;
}

std::vector<Id> Mapping::users(Id dimension) const {
    std::vector<Id> result;
    for (auto const& [op, list] : connections_)
        for (auto const& c : list)
            if (c.dimension == dimension) {
                result.push_back(op);
                break;
            }
    return result;
}

Id KernelGraph::addDimension(Dimension d) {
    Id const id = nextId_++;
    coordinates.addNode(id, std::move(d));
    return id;
}

Id KernelGraph::addCoordinateEdge(CoordinateEdgeKind kind, std::vector<Id> const& tails,
                                  std::vector<Id> const& heads) {
    Id const id = nextId_++;
    coordinates.addEdge(id, CoordinateEdge{kind}, tails, heads);
    return id;
}

Id KernelGraph::addOperation(Operation op) {
    Id const id = nextId_++;
    control.addNode(id, std::move(op));
    return id;
}

Id KernelGraph::addControlEdge(ControlEdgeKind kind, Id from, Id to) {
    Id const id = nextId_++;
    control.addEdge(id, ControlEdge{kind}, {from}, {to});
    return id;
}

void KernelGraph::removeOperation(Id op) {
    for (Id e : control.outgoing(op))
        control.remove(e);
    for (Id e : control.incoming(op))
        control.remove(e);
    control.remove(op);
    mapping.forget(op);
}

void KernelGraph::removeDimension(Id dimension) {
    for (Id e : coordinates.outgoing(dimension))
        coordinates.remove(e);
    for (Id e : coordinates.incoming(dimension))
        coordinates.remove(e);
    coordinates.remove(dimension);
}

KernelArgument const* KernelGraph::findArgument(std::string_view argName) const {
    for (auto const& a : arguments)
        if (a.name == argName)
            return &a;
    return nullptr;
}

Id KernelGraph::kernel() const {
    for (Id op : control.nodes())
        if (control.node(op).kind == OperationKind::Kernel)
            return op;
    KILN_ASSERT(false, "the control graph has no Kernel operation");
    return 0;
}

std::vector<Id> KernelGraph::successors(Id op, ControlEdgeKind kind) const {
    std::vector<Id> result;
    for (Id e : control.outgoing(op))
        if (control.edge(e).kind == kind)
            result.push_back(control.heads(e)[0]);
    return result;
}

std::vector<Id> KernelGraph::sequence(Id op, ControlEdgeKind kind) const {
    // The operations reachable from the heads of op's `kind` edges along Sequence edges.
    std::vector<Id> members = successors(op, kind);
    std::set<Id> seen(members.begin(), members.end());
    for (std::size_t i = 0; i < members.size(); ++i)
        for (Id next : successors(members[i], ControlEdgeKind::Sequence))
            if (seen.insert(next).second)
                members.push_back(next);

    // Kahn's algorithm over the Sequence edges among them, smallest id first among the ready.
    std::map<Id, int> waiting;
    for (Id m : members)
        waiting[m] = 0;
    for (Id m : members)
        for (Id next : successors(m, ControlEdgeKind::Sequence))
            ++waiting[next];
    std::priority_queue<Id, std::vector<Id>, std::greater<>> ready;
    for (auto const& [m, count] : waiting)
        if (count == 0)
            ready.push(m);
    std::vector<Id> order;
    while (!ready.empty()) {
        Id const m = ready.top();
        ready.pop();
        order.push_back(m);
        for (Id next : successors(m, ControlEdgeKind::Sequence))
            if (--waiting[next] == 0)
                ready.push(next);
    }
    KILN_ASSERT(order.size() == members.size(), "Sequence edges under operation {} form a cycle",
                op);
    return order;
}

} // namespace kiln
