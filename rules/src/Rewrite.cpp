#include "kiln/rules/Rewrite.h"

#include "kiln/graph/Verify.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace kiln::rules {

namespace {

// Every Index/DataValue/size/stride leaf on `from` becomes one on `to`.
ExprPtr retarget(ExprPtr const& e, Id from, Id to) {
    using namespace expr;
    if (!e)
        return e;
    if (auto const* i = std::get_if<Index>(e.get()); i && i->dimension == from)
        return index(to);
    if (auto const* d = std::get_if<DataValue>(e.get()); d && d->dimension == from)
        return dataValue(to, d->type);
    if (auto const* s = std::get_if<DimensionSize>(e.get()); s && s->dimension == from)
        return dimensionSize(to);
    if (auto const* s = std::get_if<DimensionStride>(e.get()); s && s->dimension == from)
        return dimensionStride(to);
    if (auto const* u = std::get_if<Unary>(e.get()))
        return unary(u->op, retarget(u->arg, from, to));
    if (auto const* b = std::get_if<Binary>(e.get()))
        return binary(b->op, retarget(b->lhs, from, to), retarget(b->rhs, from, to));
    if (auto const* s = std::get_if<Select>(e.get()))
        return select(retarget(s->condition, from, to), retarget(s->ifTrue, from, to),
                      retarget(s->ifFalse, from, to));
    if (auto const* c = std::get_if<Convert>(e.get()))
        return convert(c->type, retarget(c->arg, from, to));
    return e;
}

class Rewriter {
public:
    Rewriter(Rule const& rule, Match const& match, KernelGraph const& graph,
             RuleContext const& context, std::int64_t number)
        : rule_(rule)
        , graph_(graph)
        , vars_(match.elements)
        , lists_(match.lists)
        , context_(context)
        , number_(number) {
        context_.graph = &graph_;
        context_.nodes = &vars_;
        context_.lists = &lists_;
        for (auto const& [v, id] : match.elements)
            parents_.push_back(id);
        std::sort(parents_.begin(), parents_.end());
    }

    KernelGraph run(Application& application) {
        Rewrite const& r = rule_.rewrite;
        for (auto const& t : r.addNodes)
            addNode(t, application);
        for (auto const& u : r.updates)
            update(u);
        for (auto const& e : r.addEdges)
            addEdge(e, application);
        for (auto const& t : r.retargets)
            retargetUses(t);
        if (r.wrap)
            wrap(*r.wrap, application);
        remove(r, application);
        if (auto problems = verify(graph_); !problems.empty())
            fail("rule '{}' would leave the graph invalid, so it was not applied:\n{}", rule_.name,
                 describe(graph_, problems));
        return std::move(graph_);
    }

private:
    Id var(std::string const& v) const {
        auto it = vars_.find(v);
        KILN_ASSERT(it != vars_.end(), "rule '{}': variable '{}' is not bound", rule_.name, v);
        return it->second;
    }

    std::vector<Id> ports(PortList const& list) const {
        std::vector<Id> ids;
        for (auto const& v : list.fixed)
            ids.push_back(var(v));
        if (list.rest) {
            auto it = lists_.find(*list.rest);
            KILN_ASSERT(it != lists_.end(), "rule '{}': list '...{}' is not bound", rule_.name,
                        *list.rest);
            ids.insert(ids.end(), it->second.begin(), it->second.end());
        }
        return ids;
    }

    ExprPtr value(std::optional<RuleExpression> const& e) const {
        if (!e)
            return nullptr;
        try {
            return instantiate(*e, context_);
        } catch (UserError const& error) {
            throw UserError(fmt::format("rule '{}' (application {}): in '{}': {}", rule_.name,
                                        number_, e->text, error.message()),
                            rule_.at);
        }
    }

    // A dimension's size: positive wherever the rule's arithmetic decides it now.
    ExprPtr size(std::optional<RuleExpression> const& e, std::string const& variable) const {
        ExprPtr const v = value(e);
        if (auto const n = literalInt(v); n && *n <= 0)
            throw UserError(fmt::format("rule '{}' (application {}): the size of '{}', '{}', is "
                                        "{}; a dimension's size must be positive",
                                        rule_.name, number_, variable, e->text, *n),
                            rule_.at);
        return v;
    }

    void remember(Id id, Application& application) {
        graph_.provenance[id] = {rule_.name, number_, parents_};
        application.added.push_back(id);
    }

    void addNode(NodeTemplate const& t, Application& application) {
        Id id = 0;
        if (t.control) {
            Operation op{.kind = t.operationKind,
                         .expression = value(t.expression),
                         .dtype = t.dtype,
                         .transposeA = t.transposeA,
                         .transposeB = t.transposeB,
                         .name = t.name};
            if (t.combine)
                op.combine = *t.combine;
            id = graph_.addOperation(std::move(op));
        } else {
            Dimension d{.kind = t.dimensionKind,
                        .size = size(t.size, t.variable),
                        .stride = value(t.stride),
                        .axis = t.axis.value_or(-1),
                        .name = t.name,
                        .dtype = t.dtype};
            if (!t.dtypeFrom.empty()) {
                Id const from = var(t.dtypeFrom);
                d.dtype = graph_.coordinates.isNode(from) ? graph_.coordinates.node(from).dtype
                                                          : graph_.control.node(from).dtype;
            }
            for (auto const& s : t.shape)
                d.shape.push_back(value(s));
            id = graph_.addDimension(std::move(d));
        }
        vars_[t.variable] = id;
        remember(id, application);
    }

    void update(AttributeUpdate const& u) {
        Id const id = var(u.variable);
        if (graph_.control.isNode(id)) {
            if (u.expression)
                graph_.control.node(id).expression = value(u.expression);
            return;
        }
        Dimension& d = graph_.coordinates.node(id);
        if (u.size)
            d.size = size(u.size, u.variable);
        if (u.stride)
            d.stride = value(u.stride);
        if (u.shape) {
            d.shape.clear();
            for (auto const& s : *u.shape)
                d.shape.push_back(value(s));
        }
    }

    void addEdge(EdgePattern const& e, Application& application) {
        switch (e.graph) {
        case EdgePattern::Graph::Coordinate: {
            Id const id =
                graph_.addCoordinateEdge(e.coordinateKind, ports(e.tails), ports(e.heads));
            vars_[e.variable] = id;
            remember(id, application);
            break;
        }
        case EdgePattern::Graph::Control: {
            Id const id =
                graph_.addControlEdge(e.controlKind, var(e.tails.fixed[0]), var(e.heads.fixed[0]));
            vars_[e.variable] = id;
            remember(id, application);
            break;
        }
        case EdgePattern::Graph::Mapping:
            graph_.mapping.connect(var(e.tails.fixed[0]), e.role, var(e.heads.fixed[0]));
            break;
        }
    }

    void retargetUses(Retarget const& t) {
        Id const from = var(t.from), to = var(t.to);
        for (auto const& [op, connections] : std::map(graph_.mapping.all()))
            for (auto const& c : connections)
                if (c.dimension == from)
                    graph_.mapping.connect(op, c.role, to);
        for (Id op : graph_.control.nodes()) {
            auto& operation = graph_.control.node(op);
            operation.expression = retarget(operation.expression, from, to);
        }
    }

    // The control edges of `kind` into (incoming) or out of `op`.
    std::vector<Id> controlEdges(Id op, ControlEdgeKind kind, bool incoming) const {
        std::vector<Id> found;
        for (Id e : incoming ? graph_.control.incoming(op) : graph_.control.outgoing(op))
            if (graph_.control.edge(e).kind == kind)
                found.push_back(e);
        return found;
    }

    Id addControl(ControlEdgeKind kind, Id from, Id to, Application& application) {
        for (Id e : graph_.control.outgoing(from))
            if (graph_.control.edge(e).kind == kind && graph_.control.heads(e)[0] == to)
                return e;
        Id const id = graph_.addControlEdge(kind, from, to);
        remember(id, application);
        return id;
    }

    void removeControl(Id edge, Application& application) {
        graph_.control.remove(edge);
        application.removed.push_back(edge);
    }

    // Takes `op` out of the control graph, joining what came before it to what came after.
    void detach(Id op, Application& application) {
        std::vector<std::pair<ControlEdgeKind, Id>> before;
        std::vector<Id> after;
        for (auto kind : {ControlEdgeKind::Sequence, ControlEdgeKind::Body, ControlEdgeKind::Else})
            for (Id e : controlEdges(op, kind, true)) {
                before.emplace_back(kind, graph_.control.tails(e)[0]);
                removeControl(e, application);
            }
        for (Id e : controlEdges(op, ControlEdgeKind::Sequence, false)) {
            after.push_back(graph_.control.heads(e)[0]);
            removeControl(e, application);
        }
        for (auto const& [kind, from] : before)
            for (Id to : after)
                addControl(kind, from, to, application);
    }

    void wrap(Wrap const& w, Application& application) {
        Id const loop = var(w.loop);
        // The loop takes the place of the last body operation that has one.
        auto placed = [&](Id op) {
            for (auto kind :
                 {ControlEdgeKind::Sequence, ControlEdgeKind::Body, ControlEdgeKind::Else})
                if (!controlEdges(op, kind, true).empty())
                    return true;
            return false;
        };
        std::optional<Id> anchorOp;
        for (auto const& v : w.body)
            if (placed(var(v)))
                anchorOp = var(v);
        if (!anchorOp)
            fail("rule '{}' wraps operations none of which has a place in the control graph",
                 rule_.name);
        Id const anchor = *anchorOp;
        for (auto const& v : w.body)
            if (var(v) != anchor)
                detach(var(v), application);
        // The loop takes the anchor's place.
        for (auto kind : {ControlEdgeKind::Sequence, ControlEdgeKind::Body, ControlEdgeKind::Else})
            for (Id e : controlEdges(anchor, kind, true)) {
                Id const from = graph_.control.tails(e)[0];
                removeControl(e, application);
                addControl(kind, from, loop, application);
            }
        for (Id e : controlEdges(anchor, ControlEdgeKind::Sequence, false)) {
            Id const to = graph_.control.heads(e)[0];
            removeControl(e, application);
            addControl(ControlEdgeKind::Sequence, loop, to, application);
        }
        addControl(ControlEdgeKind::Body, loop, var(w.body.front()), application);
        for (std::size_t k = 0; k + 1 < w.body.size(); ++k)
            addControl(ControlEdgeKind::Sequence, var(w.body[k]), var(w.body[k + 1]), application);
    }

    void remove(Rewrite const& r, Application& application) {
        // Edges (and mapping connections) first, then nodes.
        std::vector<Id> nodes;
        for (std::size_t k = 0; k < r.remove.size(); ++k) {
            std::string const& v = r.remove[k];
            if (auto const* mapping = mappingEdge(v)) {
                graph_.mapping.disconnect(var(mapping->tails.fixed[0]), mapping->role);
                continue;
            }
            Id const id = var(v);
            if (graph_.coordinates.isEdge(id))
                graph_.coordinates.remove(id);
            else if (graph_.control.isEdge(id))
                graph_.control.remove(id);
            else {
                nodes.push_back(id);
                continue;
            }
            application.removed.push_back(id);
        }
        for (Id id : nodes) {
            if (graph_.coordinates.isNode(id)) {
                auto touching = graph_.coordinates.outgoing(id);
                auto incoming = graph_.coordinates.incoming(id);
                touching.insert(touching.end(), incoming.begin(), incoming.end());
                if (!touching.empty())
                    fail("rule '{}' removes dimension #{} but leaves {} edge #{} touching it; "
                         "remove or "
                         "re-connect that edge in the same rule",
                         rule_.name, id, name(graph_.coordinates.edge(touching[0]).kind),
                         touching[0]);
                if (auto users = graph_.mapping.users(id); !users.empty())
                    fail("rule '{}' removes dimension #{} but operation #{} still uses it; "
                         "retarget it in "
                         "the same rule",
                         rule_.name, id, users[0]);
                graph_.coordinates.remove(id);
            } else {
                auto touching = graph_.control.outgoing(id);
                auto incoming = graph_.control.incoming(id);
                touching.insert(touching.end(), incoming.begin(), incoming.end());
                if (!touching.empty())
                    fail("rule '{}' removes operation #{} but leaves {} edge #{} touching it; "
                         "remove or "
                         "re-connect that edge in the same rule",
                         rule_.name, id, name(graph_.control.edge(touching[0]).kind), touching[0]);
                graph_.removeOperation(id);
            }
            graph_.provenance.erase(id);
            application.removed.push_back(id);
        }
    }

    EdgePattern const* mappingEdge(std::string const& v) const {
        for (auto const& e : rule_.match.edges)
            if (e.variable == v && e.graph == EdgePattern::Graph::Mapping)
                return &e;
        return nullptr;
    }

    Rule const& rule_;
    KernelGraph graph_;
    std::map<std::string, Id> vars_;
    std::map<std::string, std::vector<Id>> lists_;
    RuleContext context_;
    std::int64_t number_;
    std::vector<Id> parents_;
};

} // namespace

Application applyRewrite(Rule const& rule, Match const& match, KernelGraph& graph,
                         RuleContext const& context, std::int64_t number) {
    Application application{.rule = rule.name, .number = number, .match = match};
    graph = Rewriter(rule, match, graph, context, number).run(application);
    return application;
}

} // namespace kiln::rules
