#include "kiln/graph/Evaluate.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/ExpressionText.h"

namespace kiln {

using namespace expr;

Value Environment::argument(Argument const& a) const {
    fail("argument '{}' has no value here", a.name);
}
Value Environment::tag(Tag const& t) const {
    fail("value '{}' has no value here", t.name);
}
Value Environment::dimensionSize(Id dimension) const {
    fail("the size of dimension #{} is not known here", dimension);
}
Value Environment::dimensionStride(Id dimension) const {
    fail("the stride of dimension #{} is not known here", dimension);
}
Value Environment::index(Id dimension) const {
    fail("the index of dimension #{} is only known inside the kernel", dimension);
}
Value Environment::dataValue(DataValue const& d) const {
    fail("the value of dimension #{} is only known inside the kernel", d.dimension);
}

namespace {
Value eval(Expression const& e, Environment const& env) {
    if (auto const* b = std::get_if<Binary>(&e)) {
        // Short-circuit, so that `i < n && a[i]`-style guards never evaluate the right side.
        if (b->op == BinaryOp::LogicalAnd || b->op == BinaryOp::LogicalOr) {
            bool const lhs = eval(*b->lhs, env).asBool();
            if (lhs == (b->op == BinaryOp::LogicalOr))
                return Value::boolean(lhs);
            return Value::boolean(eval(*b->rhs, env).asBool());
        }
        return convertValue(resultType(e), apply(b->op, eval(*b->lhs, env), eval(*b->rhs, env)));
    }
    if (auto const* l = std::get_if<Literal>(&e))
        return l->value;
    if (auto const* a = std::get_if<Argument>(&e))
        return convertValue(a->type, env.argument(*a));
    if (auto const* t = std::get_if<Tag>(&e))
        return convertValue(t->type, env.tag(*t));
    if (auto const* s = std::get_if<DimensionSize>(&e))
        return env.dimensionSize(s->dimension);
    if (auto const* s = std::get_if<DimensionStride>(&e))
        return env.dimensionStride(s->dimension);
    if (auto const* i = std::get_if<Index>(&e))
        return env.index(i->dimension);
    if (auto const* d = std::get_if<DataValue>(&e))
        return convertValue(d->type, env.dataValue(*d));
    if (auto const* u = std::get_if<Unary>(&e))
        return convertValue(resultType(e), apply(u->op, eval(*u->arg, env)));
    if (auto const* s = std::get_if<Select>(&e))
        return convertValue(resultType(e), eval(*s->condition, env).asBool()
                                               ? eval(*s->ifTrue, env)
                                               : eval(*s->ifFalse, env));
    auto const& c = std::get<Convert>(e);
    return convertValue(c.type, eval(*c.arg, env));
}
} // namespace

Value evaluate(Expression const& e, Environment const& env) {
    return eval(e, env);
}

std::int64_t evaluateInt(Expression const& e, Environment const& env) {
    Value const v = eval(e, env);
    if (v.isFloat())
        fail("'{}' is {} where an integer is needed", toString(e), name(v.type));
    return v.i;
}

} // namespace kiln
