#include "kiln/rules/RuleExpression.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>

namespace kiln::rules {

namespace {

constexpr std::string_view kAttributes[] = {"size",   "stride", "axis",   "index",
                                            "value",  "count",  "transA", "transB",
                                            "shape0", "shape1", "shape2"};

class ScopeNames : public NameResolver {
public:
    ScopeNames(RuleScope const& scope, std::vector<Placeholder>& placeholders)
        : scope_(scope)
        , placeholders_(placeholders) {}

    ExprPtr name(std::string_view word) const override {
        std::string const n(word);
        if (n.starts_with('$')) {
            std::string const param = n.substr(1);
            if (!scope_.parameters.count(param))
                fail("unknown parameter '{}'{}", n, suggestion(param, scope_.parameters, "$"));
            return add({Placeholder::Kind::Parameter, "", param});
        }
        auto const dot = n.find('.');
        if (dot == std::string::npos)
            fail("unknown name '{}': write VARIABLE.ATTRIBUTE, $PARAMETER or arch.FACT", n);
        std::string const variable = n.substr(0, dot), attribute = n.substr(dot + 1);
        if (variable == "arch")
            return add({Placeholder::Kind::ArchFact, "", attribute});
        if (variable == "command") {
            if (!scope_.commandFacts)
                fail("'command.{}' is a fact of the Command a search space is tuned for; a rule "
                     "applies to any graph and cannot read it",
                     attribute);
            return add({Placeholder::Kind::CommandFact, "", attribute});
        }
        if (!scope_.variables.count(variable))
            fail("unknown variable '{}'{}", variable, suggestion(variable, scope_.variables, ""));
        if (std::find(std::begin(kAttributes), std::end(kAttributes), attribute) ==
            std::end(kAttributes))
            fail(
                "unknown attribute '{}' of '{}'; expected size, stride, axis, index, value, count, "
                "transA, transB or shape0..2",
                attribute, variable);
        return add({Placeholder::Kind::Attribute, variable, attribute});
    }

private:
    static std::string suggestion(std::string const& word, std::set<std::string> const& known,
                                  std::string_view prefix) {
        std::vector<std::string> const candidates(known.begin(), known.end());
        std::size_t best = std::string::npos, bestDistance = 3;
        for (std::size_t i = 0; i < candidates.size(); ++i) {
            // Levenshtein distance, small strings.
            auto const& c = candidates[i];
            std::vector<std::size_t> row(c.size() + 1);
            for (std::size_t j = 0; j <= c.size(); ++j)
                row[j] = j;
            for (std::size_t a = 1; a <= word.size(); ++a) {
                std::size_t diagonal = row[0];
                row[0] = a;
                for (std::size_t j = 1; j <= c.size(); ++j) {
                    std::size_t const up = row[j];
                    row[j] = std::min(
                        {row[j] + 1, row[j - 1] + 1, diagonal + (word[a - 1] == c[j - 1] ? 0 : 1)});
                    diagonal = up;
                }
            }
            if (row[c.size()] < bestDistance) {
                bestDistance = row[c.size()];
                best = i;
            }
        }
        return best == std::string::npos
                   ? ""
                   : fmt::format(" (did you mean '{}{}'?)", prefix, candidates[best]);
    }

    ExprPtr add(Placeholder p) const {
        for (std::size_t k = 0; k < placeholders_.size(); ++k)
            if (placeholders_[k].kind == p.kind && placeholders_[k].variable == p.variable &&
                placeholders_[k].attribute == p.attribute)
                return argument(fmt::format("@{}", k), DataType::I64);
        placeholders_.push_back(std::move(p));
        return argument(fmt::format("@{}", placeholders_.size() - 1), DataType::I64);
    }

    RuleScope const& scope_;
    std::vector<Placeholder>& placeholders_;
};

ExprPtr resolve(Placeholder const& p, RuleContext const& c) {
    switch (p.kind) {
    case Placeholder::Kind::Parameter: {
        auto it = c.parameters ? c.parameters->find(p.attribute) : decltype(c.parameters->end()){};
        if (!c.parameters || it == c.parameters->end())
            fail("parameter ${} has no value (give it with --params {}=...)", p.attribute,
                 p.attribute);
        return literal(it->second);
    }
    case Placeholder::Kind::ArchFact: {
        std::optional<std::int64_t> v = c.arch ? c.arch(p.attribute) : std::nullopt;
        if (!v)
            fail("arch.{} is not known{}", p.attribute,
                 c.arch ? " for this target" : " (no target given)");
        return literal(*v);
    }
    case Placeholder::Kind::CommandFact: // refused where a rule is parsed
        fail("command.{} has no value in a rule", p.attribute);
    case Placeholder::Kind::Attribute:
        break;
    }
    if (p.attribute == "count") {
        if (c.lists)
            if (auto it = c.lists->find(p.variable); it != c.lists->end())
                return literal(static_cast<std::int64_t>(it->second.size()));
        return literal(1);
    }
    auto it = c.nodes->find(p.variable);
    KILN_ASSERT(it != c.nodes->end(), "variable '{}' is not bound", p.variable);
    Id const id = it->second;
    KernelGraph const& g = *c.graph;
    if (p.attribute == "transA" || p.attribute == "transB") {
        if (!g.control.isNode(id))
            fail("'{}.{}': '{}' is not an operation", p.variable, p.attribute, p.variable);
        Operation const& op = g.control.node(id);
        return literal((p.attribute == "transA" ? op.transposeA : op.transposeB) ? 1 : 0);
    }
    if (!g.coordinates.isNode(id))
        fail("'{}.{}': '{}' is not a dimension", p.variable, p.attribute, p.variable);
    Dimension const& d = g.coordinates.node(id);
    if (p.attribute == "size") {
        if (!d.size)
            fail("'{}' (#{}) has no size", p.variable, id);
        return d.size;
    }
    if (p.attribute == "stride") {
        if (!d.stride)
            fail("'{}' (#{}) has no stride", p.variable, id);
        return d.stride;
    }
    if (p.attribute == "axis")
        return literal(d.axis);
    if (p.attribute.starts_with("shape")) {
        auto const k = static_cast<std::size_t>(p.attribute.back() - '0');
        if (k >= d.shape.size())
            fail("'{}' (#{}) has {} axes, so no {}", p.variable, id, d.shape.size(), p.attribute);
        return d.shape[k];
    }
    if (p.attribute == "index")
        return index(id);
    // value
    if (!d.dtype)
        fail("'{}' (#{}) holds no values", p.variable, id);
    return dataValue(id, *d.dtype);
}

ExprPtr substitute(ExprPtr const& e, std::vector<ExprPtr> const& values) {
    using namespace expr;
    if (auto const* a = std::get_if<Argument>(e.get()); a && a->name.starts_with('@'))
        return values[static_cast<std::size_t>(std::stoul(a->name.substr(1)))];
    if (auto const* u = std::get_if<Unary>(e.get()))
        return unary(u->op, substitute(u->arg, values));
    if (auto const* b = std::get_if<Binary>(e.get()))
        return binary(b->op, substitute(b->lhs, values), substitute(b->rhs, values));
    if (auto const* s = std::get_if<Select>(e.get()))
        return select(substitute(s->condition, values), substitute(s->ifTrue, values),
                      substitute(s->ifFalse, values));
    if (auto const* c = std::get_if<Convert>(e.get()))
        return convert(c->type, substitute(c->arg, values));
    return e;
}

} // namespace

RuleExpression parseRuleExpression(std::string const& text, RuleScope const& scope) {
    RuleExpression e{text, nullptr, {}};
    e.tree = parseExpression(text, ScopeNames(scope, e.placeholders));
    return e;
}

ExprPtr instantiate(RuleExpression const& e, RuleContext const& context) {
    std::vector<ExprPtr> values;
    values.reserve(e.placeholders.size());
    for (auto const& p : e.placeholders)
        values.push_back(resolve(p, context));
    ExprPtr const value = simplify(substitute(e.tree, values));
    if (ExprPtr const zero = divisionByZero(value))
        fail("'{}' divides by zero (at '{}')", e.text, toString(zero));
    return value;
}

GuardValue evaluateGuard(RuleExpression const& e, RuleContext const& context) {
    ExprPtr const value = instantiate(e, context);
    GuardValue g;
    g.value = toString(value);
    if (auto const* l = std::get_if<expr::Literal>(value.get())) {
        g.holds = l->value.asBool();
        return g;
    }
    g.decided = false;
    return g;
}

} // namespace kiln::rules
