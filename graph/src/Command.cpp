#include "kiln/graph/Command.h"

#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <cctype>
#include <fmt/ranges.h>

namespace kiln {

bool isIdentifier(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

namespace {

bool sameShape(std::vector<ExprPtr> const& a, std::vector<ExprPtr> const& b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (!equal(simplify(a[k]), simplify(b[k])))
            return false;
    return true;
}

std::string shapeText(std::vector<ExprPtr> const& shape) {
    if (shape.empty())
        return "a scalar";
    std::vector<std::string> parts;
    for (auto const& s : shape)
        parts.push_back(toString(s));
    return fmt::format("{}", fmt::join(parts, " x "));
}

ExprPtr product(std::vector<ExprPtr> const& shape) {
    ExprPtr p = literal(1);
    for (auto const& s : shape)
        p = p * s;
    return simplify(p);
}

void collectTags(Expression const& e, std::vector<std::string>& tags) {
    if (auto const* t = std::get_if<expr::Tag>(&e)) {
        if (std::find(tags.begin(), tags.end(), t->name) == tags.end())
            tags.push_back(t->name);
    } else if (auto const* u = std::get_if<expr::Unary>(&e))
        collectTags(*u->arg, tags);
    else if (auto const* b = std::get_if<expr::Binary>(&e)) {
        collectTags(*b->lhs, tags);
        collectTags(*b->rhs, tags);
    } else if (auto const* s = std::get_if<expr::Select>(&e)) {
        collectTags(*s->condition, tags);
        collectTags(*s->ifTrue, tags);
        collectTags(*s->ifFalse, tags);
    } else if (auto const* c = std::get_if<expr::Convert>(&e))
        collectTags(*c->arg, tags);
}

} // namespace

DataType multiplyResultType(DataType a, DataType b) {
    bool const half =
        a == DataType::F16 || a == DataType::BF16 || b == DataType::F16 || b == DataType::BF16;
    return half ? DataType::F32 : a;
}

ExprPtr CommandValueNames::name(std::string_view n) const {
    if (auto it = command_.values().find(std::string(n)); it != command_.values().end())
        return tag(std::string(n), it->second.dtype);
    if (auto const* s = command_.findScalar(n))
        return argument(s->name, s->dtype);
    if (command_.isSize(n))
        fail("'{}' is a size; element-wise expressions use values and scalars", n);
    if (command_.findTensor(n))
        fail("'{}' is a tensor; load it and use the load's tag", n);
    return nullptr;
}

ExprPtr Command::size(std::string const& n) {
    if (!isSize(n))
        sizes_.push_back(n);
    return argument(n, DataType::I64);
}

Command& Command::tensor(std::string n, DataType dtype, std::vector<ExprPtr> shape,
                         std::vector<ExprPtr> strides, SourceLocation where) {
    if (!isIdentifier(n))
        throw UserError(fmt::format("'{}' is not a valid argument name", n), where);
    if (findTensor(n) || findScalar(n) || isSize(n))
        throw UserError(fmt::format("argument '{}' is declared twice", n), where);
    if (shape.empty())
        throw UserError(fmt::format("tensor '{}' needs at least one axis", n), where);
    if (strides.empty()) {
        strides.resize(shape.size());
        strides.back() = literal(1);
        for (std::size_t k = shape.size() - 1; k-- > 0;)
            strides[k] = simplify(strides[k + 1] * shape[k + 1]);
    }
    if (strides.size() != shape.size())
        throw UserError(
            fmt::format("tensor '{}' has {} axes but {} strides", n, shape.size(), strides.size()),
            where);
    tensors_.push_back(
        {std::move(n), dtype, std::move(shape), std::move(strides), std::move(where)});
    return *this;
}

Command& Command::scalar(std::string n, DataType dtype, SourceLocation where) {
    if (!isIdentifier(n))
        throw UserError(fmt::format("'{}' is not a valid argument name", n), where);
    if (findTensor(n) || findScalar(n) || isSize(n))
        throw UserError(fmt::format("argument '{}' is declared twice", n), where);
    scalars_.push_back({std::move(n), dtype, std::move(where)});
    return *this;
}

std::string Command::freshTag(std::string_view stem) {
    std::string base;
    for (char c : stem)
        base += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!isIdentifier(base))
        base = "v";
    std::string candidate = base;
    for (int n = 1; values_.count(candidate) || findScalar(candidate) || findTensor(candidate) ||
                    isSize(candidate);
         ++n)
        candidate = fmt::format("{}{}", base, n);
    return candidate;
}

std::string Command::loadTiled(std::string const& t) {
    return add({.kind = CommandOpKind::LoadTiled, .tag = freshTag(t), .tensor = t});
}

std::string Command::loadLinear(std::string const& t) {
    return add({.kind = CommandOpKind::LoadLinear, .tag = freshTag(t), .tensor = t});
}

void Command::storeTiled(std::string const& t, std::string const& value) {
    add({.kind = CommandOpKind::StoreTiled, .tensor = t, .inputs = {value}});
}

void Command::storeLinear(std::string const& t, std::string const& value) {
    add({.kind = CommandOpKind::StoreLinear, .tensor = t, .inputs = {value}});
}

std::string Command::execute(std::string_view text, std::optional<DataType> dtype) {
    ExprPtr e;
    try {
        e = parseExpression(text, CommandValueNames(*this));
    } catch (ExpressionError const& error) {
        fail("in '{}' at offset {}: {}", text, error.offset(), error.message());
    }
    return add(
        {.kind = CommandOpKind::Execute, .tag = freshTag("e"), .expression = e, .dtype = dtype});
}

std::string Command::multiply(std::string const& lhs, std::string const& rhs, bool transposeA,
                              bool transposeB) {
    return add({.kind = CommandOpKind::Multiply,
                .tag = freshTag("mm"),
                .inputs = {lhs, rhs},
                .transposeA = transposeA,
                .transposeB = transposeB});
}

std::string Command::reduce(std::string const& value, Combine combine) {
    return add({.kind = CommandOpKind::Reduce,
                .tag = freshTag("r"),
                .inputs = {value},
                .combine = combine});
}

std::string Command::add(CommandOperation op) {
    auto const error = [&](std::string message) { throw UserError(std::move(message), op.where); };
    auto const opName = kiln::name(op.kind);
    auto const input = [&](std::size_t k, std::string_view role) -> ValueInfo const& {
        if (k >= op.inputs.size())
            error(fmt::format("{} needs a {}", opName, role));
        auto it = values_.find(op.inputs[k]);
        if (it == values_.end())
            error(fmt::format("{} {} '{}' is not defined by an earlier operation", opName, role,
                              op.inputs[k]));
        return it->second;
    };
    auto const tensorArg = [&]() -> TensorArgument const& {
        auto const* t = findTensor(op.tensor);
        if (!t)
            error(op.tensor.empty() ? fmt::format("{} needs a tensor", opName)
                                    : fmt::format("{} of unknown tensor '{}'", opName, op.tensor));
        return *t;
    };

    bool const produces = definesTag(op.kind);
    if (produces) {
        if (!isIdentifier(op.tag))
            error(fmt::format("'{}' is not a valid tag (letters, digits and '_')", op.tag));
        if (values_.count(op.tag))
            error(fmt::format("tag '{}' is defined twice", op.tag));
        if (findScalar(op.tag) || findTensor(op.tag) || isSize(op.tag))
            error(fmt::format("tag '{}' has the name of an argument", op.tag));
    }

    ValueInfo result;
    switch (op.kind) {
    case CommandOpKind::LoadTiled: {
        auto const& t = tensorArg();
        result = {t.dtype, t.shape};
        break;
    }
    case CommandOpKind::LoadLinear: {
        auto const& t = tensorArg();
        result = {t.dtype, {product(t.shape)}};
        break;
    }
    case CommandOpKind::StoreTiled:
    case CommandOpKind::StoreLinear: {
        auto const& t = tensorArg();
        auto const& v = input(0, "value");
        bool const linear = op.kind == CommandOpKind::StoreLinear;
        auto const expected = linear ? std::vector<ExprPtr>{product(t.shape)} : t.shape;
        if (!sameShape(v.shape, expected))
            error(fmt::format("{} of '{}' ({}) into tensor '{}' ({})", opName, op.inputs[0],
                              shapeText(v.shape), t.name, shapeText(expected)));
        // A stride of 0 broadcasts a load; stored, the elements of that axis share one place
        // and the workitems that own them race for it.
        for (std::size_t k = 0; k < t.strides.size(); ++k)
            if (literalInt(t.strides[k]) == std::int64_t{0} &&
                literalInt(t.shape[k]) != std::int64_t{1})
                error(fmt::format("{} into tensor '{}', whose axis {} has stride 0: its {} "
                                  "elements would share one place (a stride of 0 broadcasts "
                                  "what is loaded; a stored tensor needs a place per element)",
                                  opName, t.name, k, toString(t.shape[k])));
        break;
    }
    case CommandOpKind::Execute: {
        if (!op.expression)
            error("Execute needs an expression");
        std::vector<std::string> tags;
        collectTags(*op.expression, tags);
        if (tags.empty())
            error("Execute needs at least one tensor value in its expression");
        for (auto const& tagName : tags)
            if (!values_.count(tagName))
                error(
                    fmt::format("Execute uses '{}', which no earlier operation defines", tagName));
        // The result has the shape of the tag of most axes (the first such); a tag of one axis
        // fewer, that shape without its last axis (a Reduce's result), is broadcast along it.
        std::size_t widest = 0;
        for (std::size_t k = 1; k < tags.size(); ++k)
            if (values_.at(tags[k]).shape.size() > values_.at(tags[widest]).shape.size())
                widest = k;
        auto const& full = values_.at(tags[widest]).shape;
        std::vector<ExprPtr> const reduced(full.begin(), full.end() - 1);
        for (std::size_t k = 0; k < tags.size(); ++k) {
            auto const& other = values_.at(tags[k]).shape;
            if (k == widest || sameShape(full, other))
                continue;
            std::string const mixed =
                fmt::format("Execute mixes shapes: '{}' is {} but '{}' is {}", tags[widest],
                            shapeText(full), tags[k], shapeText(other));
            if (other.size() == full.size())
                error(mixed);
            if (other.size() + 1 == full.size() && !sameShape(reduced, other))
                error(fmt::format("{}; a value of one axis fewer is broadcast along the last "
                                  "axis, so it must be {}",
                                  mixed, shapeText(reduced)));
            if (other.size() + 1 < full.size())
                error(fmt::format("{}; a value is broadcast only along the last axis, so it must "
                                  "be {} or {}",
                                  mixed, shapeText(full), shapeText(reduced)));
        }
        result = {op.dtype.value_or(resultType(*op.expression)), full};
        if (result.dtype == DataType::Bool)
            result.dtype = DataType::I32;
        break;
    }
    case CommandOpKind::Multiply: {
        auto const& a = input(0, "lhs");
        auto const& b = input(1, "rhs");
        if (op.inputs.size() != 2)
            error("Multiply takes exactly two inputs: lhs and rhs");
        if (a.shape.size() != 2 || b.shape.size() != 2)
            error(fmt::format("Multiply needs matrices: lhs '{}' is {}, rhs '{}' is {}",
                              op.inputs[0], shapeText(a.shape), op.inputs[1], shapeText(b.shape)));
        if (a.dtype != b.dtype)
            error(fmt::format("Multiply of {} by {}: lhs and rhs need one type",
                              kiln::name(a.dtype), kiln::name(b.dtype)));
        ExprPtr const m = a.shape[op.transposeA ? 1 : 0], ka = a.shape[op.transposeA ? 0 : 1];
        ExprPtr const kb = b.shape[op.transposeB ? 1 : 0], n = b.shape[op.transposeB ? 0 : 1];
        if (!equal(simplify(ka), simplify(kb)))
            error(fmt::format(
                "Multiply: inner sizes differ: lhs '{}' gives {} x {}, rhs '{}' gives "
                "{} x {}",
                op.inputs[0], toString(m), toString(ka), op.inputs[1], toString(kb), toString(n)));
        result = {op.dtype.value_or(multiplyResultType(a.dtype, b.dtype)), {m, n}};
        break;
    }
    case CommandOpKind::Reduce: {
        auto const& v = input(0, "value");
        if (v.shape.size() < 2)
            error(fmt::format(
                "Reduce of '{}' ({}): it reduces the last axis, so it needs at least two",
                op.inputs[0], shapeText(v.shape)));
        if (op.combine == Combine::Mean && !isFloat(v.dtype))
            error(fmt::format("Reduce of '{}' ({}): a mean of integers is not defined; convert "
                              "them to a floating-point type first",
                              op.inputs[0], kiln::name(v.dtype)));
        result = {v.dtype, std::vector<ExprPtr>(v.shape.begin(), v.shape.end() - 1)};
        break;
    }
    }

    if (produces)
        values_[op.tag] = result;
    std::string tagName = op.tag;
    operations_.push_back(std::move(op));
    return tagName;
}

TensorArgument const* Command::findTensor(std::string_view n) const {
    for (auto const& t : tensors_)
        if (t.name == n)
            return &t;
    return nullptr;
}

ScalarArgument const* Command::findScalar(std::string_view n) const {
    for (auto const& s : scalars_)
        if (s.name == n)
            return &s;
    return nullptr;
}

bool Command::isSize(std::string_view n) const {
    return std::find(sizes_.begin(), sizes_.end(), n) != sizes_.end();
}

} // namespace kiln
