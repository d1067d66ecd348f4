#include "kiln/rules/RuleJson.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/rules/RuleTemplate.h"

#include <fmt/format.h>
#include <set>

namespace kiln::rules {

namespace {

bool isVariableName(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

template <class E>
E kindOf(JsonValue const& v, std::span<E const> all, std::string_view what) {
    std::vector<std::string_view> names;
    for (E e : all)
        names.push_back(name(e));
    return all[v.asChoice(names, what)];
}

RuleExpression expression(JsonValue const& v, RuleScope const& scope) {
    std::string const text = v.isInteger() ? std::to_string(v.asInt()) : v.asString();
    RuleExpression e;
    try {
        e = parseRuleExpression(text, scope);
    } catch (ExpressionError const& error) {
        if (v.isString())
            v.failInString(error.offset(), error.message());
        v.fail(error.message());
    }
    if (divisionByZero(simplify(e.tree)))
        v.fail(fmt::format("'{}' divides by zero", text));
    return e;
}

// A `where`: an expression that is true or false, not a number.
RuleExpression condition(JsonValue const& v, RuleScope const& scope) {
    RuleExpression e = expression(v, scope);
    if (resultType(*e.tree) != DataType::Bool)
        v.fail(fmt::format("'where' must be a condition (a comparison, or conditions joined by && "
                           "or ||), not the number '{}'",
                           e.text));
    return e;
}

// Reads the variables, edges and negatives of one pattern.
class PatternReader {
public:
    explicit PatternReader(std::set<std::string> outer)
        : outer_(std::move(outer)) {}

    Pattern read(JsonValue const& v, std::set<std::string> const& parameters) {
        v.allowOnly({"nodes", "edges", "not", "lists"});
        Pattern p;
        if (auto nodes = v.find("nodes")) {
            for (auto const& [variable, spec] : nodes->members()) {
                if (!isVariableName(variable))
                    spec.failAtKey(fmt::format(
                        "'{}' is not a variable name (letters, digits and '_')", variable));
                if (outer_.count(variable) || declared_.count(variable))
                    spec.failAtKey(fmt::format("variable '{}' is declared twice", variable));
                declared_.insert(variable);
                p.nodes.push_back(node(variable, spec));
            }
        }
        std::map<std::string, JsonValue> bounds;
        if (auto lists = v.find("lists"))
            for (auto const& [variable, spec] : lists->members())
                bounds.emplace(variable, spec);
        if (auto edges = v.find("edges"))
            for (auto const& e : edges->elements())
                p.edges.push_back(edge(e, /*inRewrite=*/false));
        for (auto const& [variable, spec] : bounds) {
            if (!lists_.count(variable))
                spec.failAtKey(
                    fmt::format("'{}' is not a variadic port list ('...{}') of this pattern",
                                variable, variable));
            spec.allowOnly({"min", "max"});
            for (auto& e : p.edges)
                for (auto* list : {&e.tails, &e.heads})
                    if (list->rest == variable) {
                        list->minRest = static_cast<int>(spec.intOr("min", 0));
                        list->maxRest = static_cast<int>(spec.intOr("max", -1));
                    }
        }
        RuleScope scope{allVariables(), parameters};
        for (std::size_t k = 0; k < p.nodes.size(); ++k)
            if (auto where = v["nodes"][p.nodes[k].variable].find("where"))
                p.nodes[k].where = condition(*where, scope);
        if (auto negatives = v.find("not"))
            for (auto const& n : negatives->elements()) {
                PatternReader inner(allVariables());
                p.negatives.push_back(inner.read(n, parameters));
            }
        return p;
    }

    std::set<std::string> allVariables() const {
        std::set<std::string> all = outer_;
        all.insert(declared_.begin(), declared_.end());
        all.insert(lists_.begin(), lists_.end());
        return all;
    }
    std::set<std::string> const& edgeVariables() const { return edgeVariables_; }
    std::set<std::string> const& nodeVariables() const { return declared_; }
    std::set<std::string> const& lists() const { return lists_; }

    NodePattern node(std::string const& variable, JsonValue const& spec) {
        spec.allowOnly({"dim", "op", "where", "doc"});
        NodePattern n{.variable = variable, .at = spec.location()};
        bool const dim = spec.has("dim"), op = spec.has("op");
        if (dim == op)
            spec.fail(fmt::format(
                "variable '{}' needs exactly one of \"dim\" (a dimension kind) or \"op\" (an "
                "operation kind)",
                variable));
        n.control = op;
        JsonValue const kinds = spec[op ? "op" : "dim"];
        std::vector<JsonValue> list =
            kinds.isArray() ? kinds.elements() : std::vector<JsonValue>{kinds};
        for (auto const& k : list) {
            if (k.isString() && k.asString() == "*")
                continue;
            if (op)
                n.operationKinds.push_back(kindOf(k, allOperationKinds(), "operation kind"));
            else
                n.dimensionKinds.push_back(kindOf(k, allDimensionKinds(), "dimension kind"));
        }
        return n;
    }

    void use(JsonValue const& at, std::string const& variable) {
        if (!declared_.count(variable) && !outer_.count(variable))
            at.fail(fmt::format("unknown variable '{}'; declare it under \"nodes\"", variable));
    }

    PortList ports(JsonValue const& v, bool single) {
        PortList list;
        std::vector<JsonValue> items = v.isArray() ? v.elements() : std::vector<JsonValue>{v};
        if (!v.isArray() && !single)
            v.fail(fmt::format("expected an array of variables, got {}", v.typeName()));
        for (std::size_t k = 0; k < items.size(); ++k) {
            std::string const& name = items[k].asNonEmptyString();
            if (name.starts_with("...")) {
                if (single)
                    items[k].fail(
                        "a variadic list cannot stand for a single operation or dimension");
                if (k + 1 != items.size())
                    items[k].fail(fmt::format(
                        "'{}' must be the last port: a variadic list takes the rest", name));
                std::string const rest = name.substr(3);
                if (!isVariableName(rest))
                    items[k].fail(fmt::format("'{}' is not a variadic variable ('...name')", name));
                if ((declared_.count(rest) || outer_.count(rest)) && !lists_.count(rest) &&
                    !outerLists_.count(rest))
                    items[k].fail(fmt::format("'{}' is a node variable, not a list", rest));
                list.rest = rest;
                lists_.insert(rest);
            } else {
                use(items[k], name);
                list.fixed.push_back(name);
            }
        }
        return list;
    }

    EdgePattern edge(JsonValue const& e, bool inRewrite) {
        EdgePattern p{.at = e.location()};
        int const forms =
            (e.has("edge") ? 1 : 0) + (e.has("control") ? 1 : 0) + (e.has("mapping") ? 1 : 0);
        if (forms != 1)
            e.fail("an edge needs exactly one of \"edge\" (a coordinate edge kind), \"control\" (a "
                   "control edge "
                   "kind) or \"mapping\" (a role)");
        if (e.has("edge")) {
            e.allowOnly({"edge", "as", "tails", "heads"});
            p.graph = EdgePattern::Graph::Coordinate;
            p.coordinateKind = kindOf(e["edge"], allCoordinateEdgeKinds(), "coordinate edge kind");
            p.tails = ports(e["tails"], false);
            p.heads = ports(e["heads"], false);
            Arity const a = arity(p.coordinateKind);
            auto checkArity = [&](PortList const& list, int lo, int hi, char const* which) {
                int const n = static_cast<int>(list.fixed.size());
                if (n > hi && hi >= 0)
                    e[which].fail(
                        fmt::format("{} takes at most {} {}", name(p.coordinateKind), hi, which));
                if (!list.rest && n < lo)
                    e[which].fail(
                        fmt::format("{} takes at least {} {}", name(p.coordinateKind), lo, which));
            };
            checkArity(p.tails, a.minTails, a.maxTails, "tails");
            checkArity(p.heads, a.minHeads, a.maxHeads, "heads");
        } else if (e.has("control")) {
            e.allowOnly({"control", "as", "from", "to"});
            p.graph = EdgePattern::Graph::Control;
            p.controlKind = kindOf(e["control"], allControlEdgeKinds(), "control edge kind");
            p.tails = ports(e["from"], true);
            p.heads = ports(e["to"], true);
        } else {
            e.allowOnly({"mapping", "as", "op", "dim"});
            p.graph = EdgePattern::Graph::Mapping;
            p.role = e["mapping"].asNonEmptyString();
            p.tails = ports(e["op"], true);
            p.heads = ports(e["dim"], true);
        }
        if (auto as = e.find("as")) {
            p.variable = as->asNonEmptyString();
            if (!isVariableName(p.variable))
                as->fail(fmt::format("'{}' is not a variable name", p.variable));
            if (declared_.count(p.variable) || outer_.count(p.variable) ||
                edgeVariables_.count(p.variable))
                as->fail(fmt::format("variable '{}' is declared twice", p.variable));
            edgeVariables_.insert(p.variable);
        } else
            p.variable = fmt::format("${}{}", inRewrite ? "new" : "edge", counter_++);
        return p;
    }

    void declare(std::string const& variable) { declared_.insert(variable); }
    void allowOuterList(std::string const& list) { outerLists_.insert(list); }

private:
    std::set<std::string> outer_, declared_, lists_, edgeVariables_, outerLists_;
    int counter_ = 0;
};

std::optional<DataType> dataTypeOf(JsonValue const& v) {
    auto t = parseDataType(v.asString());
    if (!t)
        return std::nullopt;
    return t;
}

NodeTemplate nodeTemplate(std::string const& variable, JsonValue const& spec,
                          RuleScope const& scope, std::set<std::string> const& bound) {
    spec.allowOnly({"dim", "op", "size", "stride", "axis", "name", "dtype", "shape", "expr",
                    "transA", "transB", "combine", "doc"});
    NodeTemplate t{.variable = variable, .at = spec.location()};
    if (spec.has("dim") == spec.has("op"))
        spec.fail(fmt::format("new node '{}' needs exactly one of \"dim\" or \"op\"", variable));
    t.control = spec.has("op");
    if (t.control) {
        t.operationKind = kindOf(spec["op"], allOperationKinds(), "operation kind");
        for (auto const* field : {"size", "stride", "axis", "shape"})
            if (spec.has(field))
                spec[field].failAtKey(
                    fmt::format("\"{}\" is an attribute of dimensions, not of operations", field));
    } else {
        t.dimensionKind = kindOf(spec["dim"], allDimensionKinds(), "dimension kind");
        for (auto const* field : {"expr", "transA", "transB", "combine"})
            if (spec.has(field))
                spec[field].failAtKey(
                    fmt::format("\"{}\" is an attribute of operations, not of dimensions", field));
    }
    if (auto v = spec.find("size"))
        t.size = expression(*v, scope);
    if (auto v = spec.find("stride"))
        t.stride = expression(*v, scope);
    if (auto v = spec.find("expr"))
        t.expression = expression(*v, scope);
    if (auto v = spec.find("shape"))
        for (auto const& s : v->elements())
            t.shape.push_back(expression(s, scope));
    if (auto v = spec.find("axis"))
        t.axis = static_cast<int>(v->asInt(0, 2));
    t.name = spec.stringOr("name", "");
    if (auto v = spec.find("dtype")) {
        std::string const& text = v->asString();
        if (text.starts_with("like ")) {
            t.dtypeFrom = text.substr(5);
            if (!bound.count(t.dtypeFrom))
                v->fail(fmt::format("'like {}': unknown variable '{}'", t.dtypeFrom, t.dtypeFrom));
        } else if (!(t.dtype = dataTypeOf(*v)))
            v->fail(fmt::format("unknown dtype '{}'; expected f16, bf16, f32, f64, i32, i64, bool "
                                "or 'like VARIABLE'",
                                text));
    }
    t.transposeA = spec.boolOr("transA", false);
    t.transposeB = spec.boolOr("transB", false);
    if (auto v = spec.find("combine")) {
        auto c = parseCombine(v->asString());
        if (!c)
            v->fail(
                fmt::format("unknown combine '{}'; expected sum, max, min or mean", v->asString()));
        t.combine = c;
    }
    return t;
}

Rewrite rewrite(JsonValue const& v, PatternReader& pattern, Pattern const& match,
                std::set<std::string> const& parameters) {
    v.allowOnly({"add", "set", "retarget", "wrap", "remove"});
    Rewrite r;
    std::set<std::string> bound = pattern.allVariables();
    std::set<std::string> const matchedNodes = pattern.nodeVariables();
    if (auto add = v.find("add")) {
        add->allowOnly({"nodes", "edges"});
        if (auto nodes = add->find("nodes"))
            for (auto const& [variable, spec] : nodes->members()) {
                if (!isVariableName(variable))
                    spec.failAtKey(fmt::format("'{}' is not a variable name", variable));
                if (bound.count(variable))
                    spec.failAtKey(
                        fmt::format("new node '{}' has the name of a matched variable", variable));
                r.addNodes.push_back(
                    nodeTemplate(variable, spec, RuleScope{bound, parameters}, bound));
                bound.insert(variable);
                pattern.declare(variable);
            }
        if (auto edges = add->find("edges"))
            for (auto const& e : edges->elements()) {
                for (auto const& l : pattern.lists())
                    pattern.allowOuterList(l);
                EdgePattern edge = pattern.edge(e, /*inRewrite=*/true);
                for (auto const* list : {&edge.tails, &edge.heads})
                    if (list->rest && !std::any_of(match.edges.begin(), match.edges.end(),
                                                   [&](EdgePattern const& m) {
                                                       return m.tails.rest == list->rest ||
                                                              m.heads.rest == list->rest;
                                                   }))
                        e.fail(fmt::format("'...{}' is not bound by the match", *list->rest));
                r.addEdges.push_back(std::move(edge));
            }
    }
    RuleScope const scope{bound, parameters};
    if (auto set = v.find("set"))
        for (auto const& [variable, spec] : set->members()) {
            if (!bound.count(variable))
                spec.failAtKey(fmt::format("unknown variable '{}'", variable));
            spec.allowOnly({"size", "stride", "shape", "expr"});
            AttributeUpdate u{.variable = variable, .at = spec.location()};
            if (auto s = spec.find("size"))
                u.size = expression(*s, scope);
            if (auto s = spec.find("stride"))
                u.stride = expression(*s, scope);
            if (auto s = spec.find("expr")) {
                // Only an operation computes an expression: on a dimension it would be ignored.
                std::string const name = variable; // (a structured binding is not captured)
                bool const dimension =
                    std::any_of(
                        match.nodes.begin(), match.nodes.end(),
                        [&](NodePattern const& n) { return n.variable == name && !n.control; }) ||
                    std::any_of(r.addNodes.begin(), r.addNodes.end(), [&](NodeTemplate const& n) {
                        return n.variable == name && !n.control;
                    });
                if (dimension)
                    s->fail(fmt::format("'{}' is a dimension, which has no 'expr' to set (set its "
                                        "'size', 'stride' or 'shape')",
                                        variable));
                u.expression = expression(*s, scope);
            }
            if (auto s = spec.find("shape")) {
                u.shape.emplace();
                for (auto const& e : s->elements())
                    u.shape->push_back(expression(e, scope));
            }
            r.updates.push_back(std::move(u));
        }
    if (auto retargets = v.find("retarget"))
        for (auto const& t : retargets->elements()) {
            t.allowOnly({"from", "to"});
            Retarget rt{t["from"].asNonEmptyString(), t["to"].asNonEmptyString(), t.location()};
            for (auto const* field : {"from", "to"})
                if (!bound.count(field == std::string("from") ? rt.from : rt.to))
                    t[field].fail(fmt::format("unknown variable '{}'", t[field].asString()));
            r.retargets.push_back(std::move(rt));
        }
    if (auto wrap = v.find("wrap")) {
        wrap->allowOnly({"loop", "body"});
        Wrap w{.loop = (*wrap)["loop"].asNonEmptyString(), .at = wrap->location()};
        if (!bound.count(w.loop))
            (*wrap)["loop"].fail(fmt::format("unknown variable '{}'", w.loop));
        for (auto const& item : (*wrap)["body"].elements()) {
            std::string const& op = item.asNonEmptyString();
            if (!bound.count(op))
                item.fail(fmt::format("unknown variable '{}'", op));
            w.body.push_back(op);
        }
        if (w.body.empty())
            (*wrap)["body"].fail("a loop body needs at least one operation");
        r.wrap = std::move(w);
    }
    if (auto remove = v.find("remove"))
        for (auto const& item : remove->elements()) {
            std::string const& variable = item.asNonEmptyString();
            if (!matchedNodes.count(variable) && !pattern.edgeVariables().count(variable))
                item.fail(fmt::format(
                    "'{}' is not a matched node or named edge (edges to remove need \"as\")",
                    variable));
            r.remove.push_back(variable);
            r.removeAt.push_back(item.location());
        }
    return r;
}

Strategy strategy(JsonValue const& v, RuleSet const& rules) {
    Strategy s{.at = v.location()};
    auto ruleList = [&](JsonValue const& list) {
        std::vector<std::string> names;
        for (auto const& item : list.elements()) {
            std::string const& n = item.asNonEmptyString();
            if (!rules.find(n))
                item.fail(fmt::format("unknown rule '{}' in the strategy", n));
            names.push_back(n);
        }
        return names;
    };
    if (v.isString()) {
        static constexpr std::string_view leaves[] = {"once", "fixpoint", "first"};
        std::size_t const k = v.asChoice(leaves, "strategy");
        s.kind = k == 0   ? Strategy::Kind::Once
                 : k == 1 ? Strategy::Kind::Fixpoint
                          : Strategy::Kind::First;
        return s;
    }
    v.allowOnly({"once", "fixpoint", "first", "seq", "repeat", "try", "do", "budget"});
    if (auto leaf = v.find("once")) {
        s.kind = Strategy::Kind::Once;
        s.rules = ruleList(*leaf);
    } else if (auto fixpoint = v.find("fixpoint")) {
        s.kind = Strategy::Kind::Fixpoint;
        s.rules = ruleList(*fixpoint);
        s.budget = v.intOr("budget", s.budget);
        if (s.budget < 1)
            v["budget"].fail("a budget must be at least 1");
    } else if (auto first = v.find("first")) {
        s.kind = Strategy::Kind::First;
        s.rules = ruleList(*first);
    } else if (auto seq = v.find("seq")) {
        s.kind = Strategy::Kind::Seq;
        for (auto const& child : seq->elements())
            s.children.push_back(strategy(child, rules));
    } else if (auto repeat = v.find("repeat")) {
        s.kind = Strategy::Kind::Repeat;
        s.times = repeat->asInt(0, 1 << 20);
        for (auto const& child : v["do"].elements())
            s.children.push_back(strategy(child, rules));
    } else if (auto attempt = v.find("try")) {
        s.kind = Strategy::Kind::Try;
        for (auto const& child : attempt->elements())
            s.children.push_back(strategy(child, rules));
    } else
        v.fail("a strategy needs one of once, fixpoint, first, seq, repeat or try");
    if (v.has("budget") && s.kind != Strategy::Kind::Fixpoint)
        v["budget"].failAtKey("only a fixpoint has a budget");
    if (v.has("do") && s.kind != Strategy::Kind::Repeat)
        v["do"].failAtKey("only repeat has \"do\"");
    return s;
}

Rule rule(JsonValue const& v, std::set<std::string> const& parameters) {
    v.allowOnly({"name", "doc", "priority", "match", "where", "rewrite"});
    Rule r{.name = v["name"].asNonEmptyString(), .at = v.location()};
    r.doc = v.stringOr("doc", "");
    r.priority = static_cast<int>(v.intOr("priority", 0));
    PatternReader pattern({});
    r.match = pattern.read(v["match"], parameters);
    if (r.match.nodes.empty())
        v["match"].fail("a pattern needs at least one node");
    for (auto const& e : r.match.edges)
        if (e.tails.fixed.empty() && e.heads.fixed.empty())
            v["match"].fail("every edge of a pattern must name at least one node variable");
    if (auto where = v.find("where"))
        r.where = condition(*where, RuleScope{pattern.allVariables(), parameters});
    if (auto rw = v.find("rewrite"))
        r.rewrite = rewrite(*rw, pattern, r.match, parameters);
    return r;
}

RuleTest ruleTest(JsonValue const& v) {
    v.allowOnly({"name", "command", "before", "params", "expect", "check", "problem"});
    RuleTest t{.name = v["name"].asNonEmptyString(),
               .command = v["command"].asNonEmptyString(),
               .at = v.location()};
    if (auto before = v.find("before"))
        for (auto const& b : before->elements())
            t.before.push_back(b.asNonEmptyString());
    if (auto params = v.find("params"))
        for (auto const& [name, value] : params->members())
            t.params[name] = value.asInt();
    JsonValue const expect = v["expect"];
    expect.allowOnly({"counts", "error"});
    if (auto counts = expect.find("counts"))
        for (auto const& [kind, n] : counts->members()) {
            if (!parseDimensionKind(kind) && !parseOperationKind(kind) &&
                !parseCoordinateEdgeKind(kind) && !parseControlEdgeKind(kind))
                n.failAtKey(fmt::format("'{}' is no dimension, operation or edge kind", kind));
            t.expectCounts[kind] = n.asInt(0);
        }
    if (auto error = expect.find("error"))
        t.expectError = error->asNonEmptyString();
    t.check = v.boolOr("check", !t.expectError.has_value());
    if (auto problem = v.find("problem")) {
        problem->members(); // an object; its names are checked against the Command when it runs
        t.problem = *problem;
    }
    return t;
}

// Every location the set keeps, for the error it may report once applied.
void relocate(Pattern& p, ExpandedRuleSet const& e) {
    for (auto& n : p.nodes)
        n.at = e.source(n.at);
    for (auto& edge : p.edges)
        edge.at = e.source(edge.at);
    for (auto& negative : p.negatives)
        relocate(negative, e);
}

void relocate(Strategy& s, ExpandedRuleSet const& e) {
    s.at = e.source(s.at);
    for (auto& child : s.children)
        relocate(child, e);
}

void relocate(RuleSet& set, ExpandedRuleSet const& e) {
    for (auto& p : set.parameters)
        p.validAt = e.source(p.validAt);
    relocate(set.strategy, e);
    for (auto& r : set.rules) {
        r.at = e.source(r.at);
        relocate(r.match, e);
        for (auto& n : r.rewrite.addNodes)
            n.at = e.source(n.at);
        for (auto& edge : r.rewrite.addEdges)
            edge.at = e.source(edge.at);
        for (auto& u : r.rewrite.updates)
            u.at = e.source(u.at);
        for (auto& t : r.rewrite.retargets)
            t.at = e.source(t.at);
        if (r.rewrite.wrap)
            r.rewrite.wrap->at = e.source(r.rewrite.wrap->at);
        for (auto& at : r.rewrite.removeAt)
            at = e.source(at);
    }
    for (auto& t : set.tests)
        t.at = e.source(t.at);
}

RuleSet readExpandedRuleSet(JsonValue const& root) {
    root.allowOnly({"ruleset", "version", "doc", "params", "strategy", "rules", "tests"});
    RuleSet set{.name = root["ruleset"].asNonEmptyString(), .file = root.file()};
    if (root["version"].asInt() != 1)
        root["version"].fail(fmt::format(
            "unsupported rule set version {}; this Kiln reads version 1", root["version"].asInt()));
    set.doc = root.stringOr("doc", "");
    std::set<std::string> parameters;
    if (auto params = root.find("params"))
        for (auto const& [name, spec] : params->members()) {
            if (!isVariableName(name))
                spec.failAtKey(fmt::format("'{}' is not a parameter name", name));
            Parameter p{.name = name};
            if (spec.isInteger())
                p.fallback = spec.asInt();
            else if (spec.isObject()) {
                spec.allowOnly({"default", "doc", "valid"});
                if (auto d = spec.find("default"))
                    p.fallback = d->asInt();
                p.doc = spec.stringOr("doc", "");
            } else if (!(spec.isString() && spec.asString() == "int"))
                spec.fail("a parameter is \"int\", a default integer, or {\"default\": N, \"doc\": "
                          "\"...\", \"valid\": \"...\"}");
            parameters.insert(name);
            set.parameters.push_back(std::move(p));
        }
    // Conditions may name any of the set's parameters: read once all are declared.
    if (auto params = root.find("params"))
        for (auto& p : set.parameters)
            if (JsonValue const spec = (*params)[p.name]; spec.isObject())
                if (auto valid = spec.find("valid")) {
                    p.valid = expression(*valid, RuleScope{{}, parameters});
                    p.validAt = valid->location();
                }
    std::set<std::string> names;
    for (auto const& r : root["rules"].elements()) {
        set.rules.push_back(rule(r, parameters));
        if (!names.insert(set.rules.back().name).second)
            r["name"].fail(fmt::format("rule '{}' is defined twice", set.rules.back().name));
    }
    if (set.rules.empty())
        root["rules"].fail("a rule set needs at least one rule");
    if (auto s = root.find("strategy"))
        set.strategy = strategy(*s, set);
    else
        set.strategy.at = root.location();
    if (auto tests = root.find("tests"))
        for (auto const& t : tests->elements())
            set.tests.push_back(ruleTest(t));
    return set;
}

} // namespace

RuleSet readRuleSet(JsonValue const& root) {
    ExpandedRuleSet const expanded = expandRuleTemplates(root);
    if (!expanded.hasTemplates())
        return readExpandedRuleSet(root);
    RuleSet set;
    try {
        set = readExpandedRuleSet(expanded.root());
    } catch (UserError const& error) {
        throw expanded.relocate(error);
    }
    relocate(set, expanded);
    return set;
}

RuleSet parseRuleSet(std::string_view text, std::string const& file) {
    return readRuleSet(parseJson(text, file));
}

RuleSet loadRuleSet(std::string const& path) {
    return readRuleSet(readJsonFile(path));
}

} // namespace kiln::rules
