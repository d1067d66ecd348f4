#include "kiln/graph/Verify.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"

#include <algorithm>
#include <boost/graph/strong_components.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

namespace kiln {

namespace {

using DK = DimensionKind;
using OK = OperationKind;

bool satisfies(RoleNeeds needs, DK kind) {
    switch (needs) {
    case RoleNeeds::User:
        return kind == DK::User;
    case RoleNeeds::Value:
        return holdsData(kind) && kind != DK::User;
    case RoleNeeds::Shared:
        return kind == DK::Shared;
    case RoleNeeds::Counter:
        return kind == DK::ForLoop || kind == DK::Unroll;
    case RoleNeeds::Target:
        return (holdsData(kind) && kind != DK::User) || kind == DK::ForLoop || kind == DK::Unroll;
    }
    return false;
}

std::string_view needsText(RoleNeeds needs) {
    switch (needs) {
    case RoleNeeds::User:
        return "a User dimension";
    case RoleNeeds::Value:
        return "a data dimension other than User";
    case RoleNeeds::Shared:
        return "a Shared dimension";
    case RoleNeeds::Counter:
        return "a ForLoop or Unroll dimension";
    case RoleNeeds::Target:
        return "a data dimension other than User, or a ForLoop or Unroll dimension";
    }
    return "?";
}

bool needsSize(DK kind) {
    return kind == DK::User || kind == DK::SubDimension || kind == DK::Linear ||
           kind == DK::MacroTile;
}

// The kinds of operations with `property`, as a sentence's subject with its verb: "If has",
// "Kernel, ForLoop and If have".
std::string kindsWith(bool OperationKindInfo::*property) {
    std::vector<std::string_view> names;
    for (auto const& row : operationKinds)
        if (row.*property)
            names.push_back(row.name);
    if (names.size() == 1)
        return fmt::format("{} has", names[0]);
    std::string const last(names.back());
    names.pop_back();
    return fmt::format("{} and {} have", fmt::join(names, ", "), last);
}

std::string countText(std::size_t n, std::string_view noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string rangeText(int min, int max) {
    if (max < 0)
        return fmt::format("at least {}", min);
    if (min == max)
        return fmt::format("exactly {}", min);
    return fmt::format("{} to {}", min, max);
}

std::string idList(std::vector<Id> const& ids) {
    std::vector<std::string> parts;
    for (Id id : ids)
        parts.push_back(fmt::format("#{}", id));
    return fmt::format("{}", fmt::join(parts, ", "));
}

// The strongly connected components of a directed graph that contain a cycle (more than one
// node, or one node with an edge to itself), each sorted, in order of their smallest node.
std::vector<std::vector<Id>> cycles(std::vector<Id> const& nodes,
                                    std::vector<std::pair<Id, Id>> const& arcs) {
    std::map<Id, std::size_t> number;
    for (Id n : nodes)
        number.emplace(n, number.size());
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> g(nodes.size());
    std::set<Id> selfLoops;
    for (auto const& [from, to] : arcs) {
        if (from == to)
            selfLoops.insert(from);
        add_edge(number.at(from), number.at(to), g);
    }
    std::vector<int> component(nodes.size());
    int const count = boost::strong_components(
        g, boost::make_iterator_property_map(component.begin(), get(boost::vertex_index, g)));
    std::vector<std::vector<Id>> members(static_cast<std::size_t>(count));
    for (std::size_t k = 0; k < nodes.size(); ++k)
        members[static_cast<std::size_t>(component[k])].push_back(nodes[k]);
    std::vector<std::vector<Id>> result;
    for (auto& m : members)
        if (m.size() > 1 || (m.size() == 1 && selfLoops.count(m[0]))) {
            std::sort(m.begin(), m.end());
            result.push_back(std::move(m));
        }
    std::sort(result.begin(), result.end());
    return result;
}

class Verifier {
public:
    explicit Verifier(KernelGraph const& graph)
        : g_(graph) {}

    std::vector<Problem> run() {
        for (Id d : g_.coordinates.nodes())
            checkDimension(d);
        for (Id e : g_.coordinates.edges())
            checkCoordinateEdge(e);
        checkTransformCycles();
        checkKernel();
        for (Id op : g_.control.nodes())
            checkOperation(op);
        for (Id e : g_.control.edges())
            checkControlEdge(e);
        checkControlCycles();
        for (auto const& [op, connections] : g_.mapping.all())
            if (!g_.control.isNode(op))
                report(op, fmt::format("the Mapping connects #{}, which is not an operation", op));

        std::stable_sort(problems_.begin(), problems_.end(),
                         [](Problem const& a, Problem const& b) { return a.element < b.element; });
        std::set<std::pair<Id, std::string>> seen;
        std::erase_if(problems_, [&](Problem const& p) {
            return !seen.insert({p.element, p.message}).second;
        });
        return std::move(problems_);
    }

private:
    void report(Id element, std::string message) {
        problems_.push_back({element, std::move(message)});
    }

    std::string dimensionText(Id d) const {
        return fmt::format("#{} {}", d, name(g_.coordinates.node(d).kind));
    }
    std::string operationText(Id op) const {
        return fmt::format("#{} {}", op, name(g_.control.node(op).kind));
    }

    // Coordinates.

    void checkDimension(Id d) {
        Dimension const& dim = g_.coordinates.node(d);
        if (needsSize(dim.kind) && !dim.size)
            report(d, "needs a size");
        if (dim.kind == DK::SubDimension) {
            if (!dim.stride)
                report(d, "needs a stride");
            if (dim.axis < 0)
                report(d, "needs an axis (0 or more)");
        }
        if (holdsData(dim.kind) && !dim.dtype)
            report(d, "needs an element type");
        if (dim.kind == DK::User)
            checkTensorName(d, dim);
        if (!dim.shape.empty() && dim.size) {
            ExprPtr product = literal(1);
            for (auto const& s : dim.shape)
                product = product * s;
            auto const elements = literalInt(simplify(product));
            auto const size = literalInt(simplify(dim.size));
            if (elements && size && *elements != *size)
                report(d, fmt::format("shape has {} elements but size is {}", *elements, *size));
        }
        checkExpression(d, "size", dim.size);
        checkExpression(d, "stride", dim.stride);
        for (std::size_t k = 0; k < dim.shape.size(); ++k)
            checkExpression(d, fmt::format("shape[{}]", k), dim.shape[k]);
    }

    void checkTensorName(Id d, Dimension const& dim) {
        auto const* argument = g_.findArgument(dim.name);
        if (!argument) {
            report(d, fmt::format("names tensor '{}', which is not an argument of the graph",
                                  dim.name));
            return;
        }
        if (argument->kind != KernelArgument::Kind::Tensor) {
            report(d, fmt::format("names '{}', which is a {} argument, not a tensor", dim.name,
                                  name(argument->kind)));
            return;
        }
        if (dim.dtype && *dim.dtype != argument->dtype)
            report(d, fmt::format("holds {} but tensor '{}' is {}", name(*dim.dtype), dim.name,
                                  name(argument->dtype)));
    }

    void checkCoordinateEdge(Id e) {
        CoordinateEdgeKind const kind = g_.coordinates.edge(e).kind;
        auto const tails = g_.coordinates.tails(e), heads = g_.coordinates.heads(e);
        Arity const a = arity(kind);
        auto const fits = [](std::size_t n, int min, int max) {
            return static_cast<int>(n) >= min && (max < 0 || static_cast<int>(n) <= max);
        };
        if (!fits(tails.size(), a.minTails, a.maxTails))
            report(e, fmt::format("has {}; {} takes {}", countText(tails.size(), "tail"),
                                  name(kind), rangeText(a.minTails, a.maxTails)));
        if (!fits(heads.size(), a.minHeads, a.maxHeads))
            report(e, fmt::format("has {}; {} takes {}", countText(heads.size(), "head"),
                                  name(kind), rangeText(a.minHeads, a.maxHeads)));
        // The Hypergraph only joins nodes to edges; kept for graphs assembled some other way.
        for (auto const& [ends, what] : {std::pair{&tails, "tail"}, std::pair{&heads, "head"}})
            for (Id n : *ends) {
                if (!g_.coordinates.isNode(n))
                    report(e, fmt::format("{} #{} is not a dimension", what, n));
                else if (kind == CoordinateEdgeKind::DataFlow &&
                         !holdsData(g_.coordinates.node(n).kind))
                    report(e, fmt::format("{} {} holds no data", what, dimensionText(n)));
            }
    }

    void checkTransformCycles() {
        std::vector<std::pair<Id, Id>> arcs;
        for (Id e : g_.coordinates.edges())
            if (isTransform(g_.coordinates.edge(e).kind))
                for (Id t : g_.coordinates.tails(e))
                    for (Id h : g_.coordinates.heads(e))
                        arcs.emplace_back(t, h);
        for (auto const& cycle : cycles(g_.coordinates.nodes(), arcs)) {
            std::vector<Id> edges;
            for (Id e : g_.coordinates.edges()) {
                if (!isTransform(g_.coordinates.edge(e).kind))
                    continue;
                auto const in = [&](Id n) {
                    return std::binary_search(cycle.begin(), cycle.end(), n);
                };
                auto const tails = g_.coordinates.tails(e), heads = g_.coordinates.heads(e);
                if (std::any_of(tails.begin(), tails.end(), in) &&
                    std::any_of(heads.begin(), heads.end(), in))
                    edges.push_back(e);
            }
            std::sort(edges.begin(), edges.end());
            report(edges.front(),
                   fmt::format("coordinate transforms form a cycle through dimensions "
                               "{} (edges {})",
                               idList(cycle), idList(edges)));
        }
    }

    // Control.

    void checkKernel() {
        std::vector<Id> kernels;
        for (Id op : g_.control.nodes())
            if (g_.control.node(op).kind == OK::Kernel)
                kernels.push_back(op);
        std::sort(kernels.begin(), kernels.end());
        if (kernels.empty()) {
            if (!g_.control.nodes().empty())
                report(0, "has no Kernel operation");
            return;
        }
        for (std::size_t k = 1; k < kernels.size(); ++k)
            report(kernels[k], fmt::format("is a second Kernel (the first is #{})", kernels[0]));
        Id const kernel = kernels[0];
        for (Id e : g_.control.incoming(kernel))
            report(kernel, fmt::format("has an incoming {} edge #{}; the Kernel is the root",
                                       name(g_.control.edge(e).kind), e));

        std::set<Id> reached{kernel};
        std::vector<Id> work{kernel};
        while (!work.empty()) {
            Id const op = work.back();
            work.pop_back();
            for (Id e : g_.control.outgoing(op))
                for (Id next : g_.control.heads(e))
                    if (reached.insert(next).second)
                        work.push_back(next);
        }
        for (Id op : g_.control.nodes())
            if (!reached.count(op) && g_.control.node(op).kind != OK::Kernel)
                report(op,
                       fmt::format("is not reached from the Kernel #{} by control edges", kernel));
    }

    void checkOperation(Id op) {
        Operation const& o = g_.control.node(op);
        ExpressionUse const use = info(o.kind).expression;
        if (use == ExpressionUse::Condition && !o.expression)
            report(op, "needs a condition");
        if (use == ExpressionUse::Value && !o.expression)
            report(op, "needs an expression");
        checkExpression(op, use == ExpressionUse::Condition ? "condition" : "expression",
                        o.expression);
        checkRoles(op, o.kind);
    }

    void checkRoles(Id op, OK kind) {
        auto const rules = info(kind).roles;
        for (auto const& rule : rules) {
            auto const found = g_.mapping.find(op, rule.role);
            if (!found) {
                report(op, fmt::format("needs a '{}' connection to {}", rule.role,
                                       needsText(rule.needs)));
                continue;
            }
            if (!g_.coordinates.isNode(*found)) {
                report(op,
                       fmt::format("'{}' names #{}, which is not a dimension", rule.role, *found));
                continue;
            }
            if (!satisfies(rule.needs, g_.coordinates.node(*found).kind))
                report(op, fmt::format("'{}' is {}; {} needs {} there", rule.role,
                                       dimensionText(*found), name(kind), needsText(rule.needs)));
        }
        for (auto const& c : g_.mapping.connections(op)) {
            bool const known = std::any_of(rules.begin(), rules.end(),
                                           [&](RoleRule const& r) { return c.role == r.role; });
            if (!known)
                report(op, fmt::format("has a '{}' connection, which {} does not use", c.role,
                                       name(kind)));
        }
    }

    void checkControlEdge(Id e) {
        ControlEdgeKind const kind = g_.control.edge(e).kind;
        auto const tails = g_.control.tails(e), heads = g_.control.heads(e);
        if (tails.size() != 1 || heads.size() != 1) {
            report(e,
                   fmt::format("has {} and {}; a control edge joins one operation to one",
                               countText(tails.size(), "tail"), countText(heads.size(), "head")));
            return;
        }
        OK const from = g_.control.node(tails[0]).kind, to = g_.control.node(heads[0]).kind;
        switch (kind) {
        case ControlEdgeKind::Sequence:
            break;
        case ControlEdgeKind::Body:
            if (!info(from).body)
                report(e, fmt::format("starts at {}; only {} a Body", operationText(tails[0]),
                                      kindsWith(&OperationKindInfo::body)));
            break;
        case ControlEdgeKind::Else:
            if (!info(from).elseBranch)
                report(e, fmt::format("starts at {}; only {} an Else", operationText(tails[0]),
                                      kindsWith(&OperationKindInfo::elseBranch)));
            break;
        case ControlEdgeKind::Initialize:
        case ControlEdgeKind::ForLoopIncrement:
            if (!info(from).loopAssignments)
                report(e, fmt::format("starts at {}; only {} {} edges", operationText(tails[0]),
                                      kindsWith(&OperationKindInfo::loopAssignments), name(kind)));
            if (to != OK::Assign)
                report(e, fmt::format("ends at {}; {} edges end at an Assign",
                                      operationText(heads[0]), name(kind)));
            break;
        }
    }

    void checkControlCycles() {
        std::vector<std::pair<Id, Id>> arcs;
        std::vector<std::pair<Id, std::pair<Id, Id>>> edges;
        for (Id e : g_.control.edges()) {
            auto const tails = g_.control.tails(e), heads = g_.control.heads(e);
            if (tails.size() == 1 && heads.size() == 1) {
                arcs.emplace_back(tails[0], heads[0]);
                edges.push_back({e, {tails[0], heads[0]}});
            }
        }
        for (auto const& cycle : cycles(g_.control.nodes(), arcs)) {
            auto const in = [&](Id n) { return std::binary_search(cycle.begin(), cycle.end(), n); };
            std::vector<Id> inside;
            for (auto const& [e, ends] : edges)
                if (in(ends.first) && in(ends.second))
                    inside.push_back(e);
            std::sort(inside.begin(), inside.end());
            report(inside.front(), fmt::format("control edges form a cycle through operations {} "
                                               "(edges {})",
                                               idList(cycle), idList(inside)));
        }
    }

    // Expressions.

    void checkExpression(Id owner, std::string const& what, ExprPtr const& e) {
        if (!e)
            return;
        using namespace expr;
        auto const dimension = [&](Id d, std::string_view leaf) {
            if (!g_.coordinates.isNode(d)) {
                report(owner,
                       fmt::format("{} reads {}#{}, which names no dimension", what, leaf, d));
                return false;
            }
            return true;
        };
        if (auto const* size = std::get_if<DimensionSize>(e.get()))
            dimension(size->dimension, "size");
        else if (auto const* stride = std::get_if<DimensionStride>(e.get()))
            dimension(stride->dimension, "stride");
        else if (auto const* i = std::get_if<Index>(e.get()))
            dimension(i->dimension, "index");
        else if (auto const* v = std::get_if<DataValue>(e.get())) {
            if (dimension(v->dimension, "value")) {
                Dimension const& dim = g_.coordinates.node(v->dimension);
                if (!holdsData(dim.kind))
                    report(owner, fmt::format("{} reads value#{}, but {} holds no data", what,
                                              v->dimension, dimensionText(v->dimension)));
                else if (dim.dtype && *dim.dtype != v->type)
                    report(owner, fmt::format("{} reads value#{} as {}, but #{} holds {}", what,
                                              v->dimension, name(v->type), v->dimension,
                                              name(*dim.dtype)));
            }
        } else if (auto const* a = std::get_if<Argument>(e.get())) {
            auto const* argument = g_.findArgument(a->name);
            if (!argument)
                report(owner,
                       fmt::format("{} reads argument '{}', which the graph does not declare", what,
                                   a->name));
            else if (argument->kind == KernelArgument::Kind::Tensor)
                report(owner,
                       fmt::format("{} reads '{}', which is a tensor, not a value", what, a->name));
            else if (argument->dtype != a->type)
                report(owner, fmt::format("{} reads argument '{}' as {}, but it is declared {}",
                                          what, a->name, name(a->type), name(argument->dtype)));
        } else if (auto const* t = std::get_if<Tag>(e.get()))
            report(owner, fmt::format("{} reads '{}', a Command tag bound to no dimension", what,
                                      t->name));
        else if (auto const* u = std::get_if<Unary>(e.get()))
            checkExpression(owner, what, u->arg);
        else if (auto const* b = std::get_if<Binary>(e.get())) {
            checkExpression(owner, what, b->lhs);
            checkExpression(owner, what, b->rhs);
        } else if (auto const* sel = std::get_if<Select>(e.get())) {
            checkExpression(owner, what, sel->condition);
            checkExpression(owner, what, sel->ifTrue);
            checkExpression(owner, what, sel->ifFalse);
        } else if (auto const* c = std::get_if<Convert>(e.get()))
            checkExpression(owner, what, c->arg);
    }

    KernelGraph const& g_;
    std::vector<Problem> problems_;
};

} // namespace

std::vector<Problem> verify(KernelGraph const& graph) {
    return Verifier(graph).run();
}

std::string describe(KernelGraph const& graph, Problem const& problem) {
    Id const id = problem.element;
    if (id == 0)
        return "graph: " + problem.message;
    std::string_view kind;
    if (graph.coordinates.isNode(id))
        kind = name(graph.coordinates.node(id).kind);
    else if (graph.coordinates.isEdge(id))
        kind = name(graph.coordinates.edge(id).kind);
    else if (graph.control.isNode(id))
        kind = name(graph.control.node(id).kind);
    else if (graph.control.isEdge(id))
        kind = name(graph.control.edge(id).kind);
    if (kind.empty())
        return fmt::format("#{}: {}", id, problem.message);
    return fmt::format("#{} {}: {}", id, kind, problem.message);
}

std::string describe(KernelGraph const& graph, std::vector<Problem> const& problems) {
    std::vector<std::string> parts;
    for (auto const& p : problems)
        parts.push_back(describe(graph, p));
    return fmt::format("{}", fmt::join(parts, "; "));
}

void verifyOrFail(KernelGraph const& graph, SourceLocation where) {
    auto const problems = verify(graph);
    if (!problems.empty())
        throw UserError("graph is not valid: " + describe(graph, problems), std::move(where));
}

void check(KernelGraph const& graph, std::string_view when) {
    auto const problems = verify(graph);
    if (!problems.empty())
        throw InternalError(
            fmt::format("graph is not valid after {}: {}", when, describe(graph, problems)),
            __FILE__, __LINE__);
}

} // namespace kiln
