#include "kiln/graph/CommandJson.h"

#include "kiln/graph/JsonExpression.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace kiln {

namespace {

constexpr std::array<std::string_view, 5> kCommandTypes = {"f16", "bf16", "f32", "f64", "i32"};
constexpr std::array<std::string_view, 4> kCombines = {"sum", "max", "min", "mean"};
/// The largest problem size: 2^40 elements along one axis is beyond any device.
constexpr std::int64_t kMaxProblemSize = std::int64_t(1) << 40;

DataType readDataType(JsonValue const& value) {
    // Kiln's other types (i64 for sizes, bool for comparisons) are not for tensors and scalars.
    if (value.isString() && parseDataType(value.asString()) &&
        std::find(kCommandTypes.begin(), kCommandTypes.end(), value.asString()) ==
            kCommandTypes.end())
        value.fail(fmt::format("Commands compute in f16, bf16, f32, f64 or i32, not {}",
                               value.asString()));
    return *parseDataType(kCommandTypes[value.asChoice(kCommandTypes, "dtype")]);
}

std::string didYouMean(std::string_view word, std::vector<std::string> const& candidates) {
    auto suggestion = closestMatch(word, std::span<std::string const>(candidates));
    return suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : std::string();
}

/// The first leaf of `e` that a shape may not use (graph leaves, tags), printed.
std::optional<std::string> graphLeaf(Expression const& e) {
    using namespace expr;
    if (std::holds_alternative<DimensionSize>(e) || std::holds_alternative<DimensionStride>(e) ||
        std::holds_alternative<Index>(e) || std::holds_alternative<DataValue>(e) ||
        std::holds_alternative<Tag>(e))
        return toString(e);
    std::optional<std::string> found;
    auto const visit = [&](ExprPtr const& child) {
        if (!found && child)
            found = graphLeaf(*child);
    };
    if (auto const* u = std::get_if<Unary>(&e))
        visit(u->arg);
    else if (auto const* b = std::get_if<Binary>(&e)) {
        visit(b->lhs);
        visit(b->rhs);
    } else if (auto const* s = std::get_if<Select>(&e)) {
        visit(s->condition);
        visit(s->ifTrue);
        visit(s->ifFalse);
    } else if (auto const* c = std::get_if<Convert>(&e))
        visit(c->arg);
    return found;
}

/// The names a shape or stride may use: sizes, each declared by its first use.
class SizeNames : public NameResolver {
public:
    SizeNames(Command& command, std::map<std::string, std::string, std::less<>> const& arguments)
        : command_(command)
        , arguments_(arguments) {}

    ExprPtr name(std::string_view n) const override {
        if (auto it = arguments_.find(n); it != arguments_.end())
            fail("'{}' is a {} argument; shapes and strides are expressions over sizes", n,
                 it->second);
        if (!isIdentifier(n))
            fail("'{}' is not a valid size name (letters, digits and '_')", n);
        return command_.size(std::string(n));
    }

private:
    Command& command_;
    std::map<std::string, std::string, std::less<>> const& arguments_;
};

/// The names an element-wise expression may use (CommandValueNames), with a did-you-mean and a
/// hint for tags that a later operation defines.
class ExecuteNames : public NameResolver {
public:
    ExecuteNames(Command const& command, std::map<std::string, int, std::less<>> const& laterTags)
        : command_(command)
        , values_(command)
        , laterTags_(laterTags) {}

    ExprPtr name(std::string_view n) const override {
        if (auto e = values_.name(n))
            return e;
        if (auto it = laterTags_.find(n); it != laterTags_.end())
            fail("'{}' is defined by a later operation (/operations/{}); operations run in order",
                 n, it->second);
        std::vector<std::string> candidates;
        for (auto const& [tagName, info] : command_.values())
            candidates.push_back(tagName);
        for (auto const& s : command_.scalars())
            candidates.push_back(s.name);
        if (auto suggestion = closestMatch(n, std::span<std::string const>(candidates)))
            fail("unknown name '{}' (did you mean '{}'?)", n, *suggestion);
        return nullptr;
    }

private:
    Command const& command_;
    CommandValueNames values_;
    std::map<std::string, int, std::less<>> const& laterTags_;
};

class CommandReader {
public:
    explicit CommandReader(JsonValue const& root)
        : root_(root) {}

    Command read() {
        root_.allowOnly(
            {"$schema", "command", "version", "doc", "arguments", "operations", "problem"});
        if (auto version = root_.find("version");
            version && version->asInt() != kCommandJsonVersion)
            version->fail(fmt::format("unsupported command version {}; this Kiln reads version {}",
                                      version->asInt(), kCommandJsonVersion));
        if (auto schema = root_.find("$schema"))
            schema->asString();
        if (auto doc = root_.find("doc"))
            doc->asString();
        JsonValue const nameValue = root_["command"];
        std::string const& commandName = nameValue.asNonEmptyString();
        // Kernel symbols derive from the name, so it must be an identifier in every target.
        if (!isIdentifier(commandName))
            nameValue.fail(fmt::format("'{}' is not a valid command name (letters, digits and '_', "
                                       "not starting with a digit)",
                                       commandName));
        Command command(commandName);
        readArguments(command, root_["arguments"]);
        readOperations(command, root_["operations"]);
        if (auto problem = root_.find("problem"))
            command.defaults = readProblem(command, *problem);
        return command;
    }

private:
    void readArguments(Command& command, JsonValue const& arguments) {
        auto const members = arguments.members();
        // Every argument's kind first, so that a shape naming a scalar or a tensor declared after
        // it is reported as such rather than declaring a size of that name.
        std::map<std::string, std::string, std::less<>> kinds;
        for (auto const& [argName, a] : members)
            if (a.isObject())
                kinds[argName] = a.has("scalar") ? "scalar" : "tensor";
        SizeNames const sizes(command, kinds);
        for (auto const& [argName, a] : members) {
            if (!a.isObject())
                a.fail(fmt::format("argument '{}' must be an object such as {{\"tensor\": \"f32\", "
                                   "\"shape\": [\"N\"]}} or {{\"scalar\": \"f32\"}}, not {}",
                                   argName, a.typeName()));
            SourceLocation const where = a.keyLocation();
            if (a.has("tensor")) {
                a.allowOnly({"tensor", "shape", "strides", "doc"});
                DataType const dtype = readDataType(a["tensor"]);
                JsonValue const shapeValue = a["shape"];
                if (shapeValue.size() == 0)
                    shapeValue.fail(fmt::format("tensor '{}' needs at least one axis", argName));
                std::vector<ExprPtr> shape, strides;
                for (auto const& entry : shapeValue.elements())
                    shape.push_back(readSize(entry, sizes, /*isStride=*/false));
                if (auto stridesValue = a.find("strides")) {
                    if (stridesValue->size() != shape.size())
                        stridesValue->fail(fmt::format(
                            "tensor '{}' has {} ax{} but {} stride{}", argName, shape.size(),
                            shape.size() == 1 ? "is" : "es", stridesValue->size(),
                            stridesValue->size() == 1 ? "" : "s"));
                    for (auto const& entry : stridesValue->elements())
                        strides.push_back(readSize(entry, sizes, /*isStride=*/true));
                }
                command.tensor(argName, dtype, std::move(shape), std::move(strides), where);
            } else if (a.has("scalar")) {
                a.allowOnly({"scalar", "doc"});
                command.scalar(argName, readDataType(a["scalar"]), where);
            } else {
                a.allowOnly({"tensor", "scalar", "shape", "strides", "doc"});
                a.fail(fmt::format("argument '{}' needs \"tensor\": DTYPE (with a \"shape\") or "
                                   "\"scalar\": DTYPE",
                                   argName));
            }
        }
    }

    ExprPtr readSize(JsonValue const& value, NameResolver const& sizes, bool isStride) {
        std::string_view const what = isStride ? "a stride" : "a shape entry";
        ExprPtr e = parseExpression(value, sizes);
        if (auto leaf = graphLeaf(*e)) {
            std::size_t const at = value.isString() ? value.asString().find(*leaf) : 0;
            value.failInString(
                at == std::string::npos ? 0 : at,
                fmt::format("{} cannot use '{}'; only sizes and numbers", what, *leaf));
        }
        if (!isInteger(resultType(*e)))
            value.fail(
                fmt::format("{} must be an integer, but this is {}", what, name(resultType(*e))));
        try {
            e = simplify(e);
        } catch (UserError const& error) {
            value.fail(error.message());
        }
        if (auto v = literalInt(e); v && (*v < 0 || (*v == 0 && !isStride)))
            value.fail(fmt::format("{} must be {}, got {}", what,
                                   isStride ? "non-negative" : "positive", *v));
        return e;
    }

    void readOperations(Command& command, JsonValue const& operations) {
        auto const list = operations.elements();
        if (list.empty())
            operations.fail("a command needs at least one operation");
        // Tags by the operation that defines them, to tell "defined later" from "undefined".
        std::map<std::string, int, std::less<>> laterTags;
        for (std::size_t k = 0; k < list.size(); ++k)
            if (list[k].isObject())
                if (auto t = list[k].find("tag"); t && t->isString())
                    laterTags.emplace(t->asString(), static_cast<int>(k));
        for (std::size_t k = 0; k < list.size(); ++k) {
            JsonValue const& o = list[k];
            if (!o.isObject())
                o.fail(fmt::format(
                    "expected an operation object such as {{\"op\": \"LoadTiled\", ...}}, "
                    "got {}",
                    o.typeName()));
            for (auto it = laterTags.begin(); it != laterTags.end();)
                it = it->second <= static_cast<int>(k) ? laterTags.erase(it) : std::next(it);
            readOperation(command, o, laterTags);
        }
    }

    void readOperation(Command& command, JsonValue const& o,
                       std::map<std::string, int, std::less<>> const& laterTags) {
        static std::vector<std::string_view> const opNames = [] {
            std::vector<std::string_view> names;
            for (auto kind : allCommandOpKinds())
                names.push_back(kiln::name(kind));
            return names;
        }();
        auto const kind = allCommandOpKinds()[o["op"].asChoice(opNames, "op")];
        CommandOpInfo const& row = info(kind);
        std::vector<std::string_view> allowed{"op"};
        for (auto const& f : row.fields)
            allowed.push_back(f.key);
        allowed.push_back("doc");
        o.allowOnly(allowed);
        CommandOperation op{.kind = kind, .where = o.location()};
        for (auto const& f : row.fields) {
            switch (f.field) {
            case CommandField::Tag:
                op.tag = readNewTag(command, o[f.key]);
                break;
            case CommandField::Tensor:
                op.tensor = readTensor(command, o[f.key]);
                break;
            case CommandField::Input:
                op.inputs.push_back(readValue(command, o[f.key], laterTags));
                break;
            case CommandField::Expression:
                op.expression = parseExpression(o[f.key], ExecuteNames(command, laterTags), false);
                break;
            case CommandField::DataType:
                if (auto dtype = o.find(f.key))
                    op.dtype = readDataType(*dtype);
                break;
            case CommandField::TransposeA:
                op.transposeA = o.boolOr(f.key, false);
                break;
            case CommandField::TransposeB:
                op.transposeB = o.boolOr(f.key, false);
                break;
            case CommandField::Combine:
                if (auto combine = o.find(f.key))
                    op.combine = *parseCombine(kCombines[combine->asChoice(kCombines, "combine")]);
                break;
            }
        }
        if (!row.locatedAt.empty())
            op.where = o[row.locatedAt].location();
        if (auto doc = o.find("doc"))
            doc->asString();
        std::string const tagName = op.tag;
        SourceLocation const tagAt = o.has("tag") ? o["tag"].location() : SourceLocation{};
        command.add(std::move(op));
        if (!tagName.empty())
            tagLocations_.emplace(tagName, tagAt);
    }

    std::string readNewTag(Command const& command, JsonValue const& value) {
        std::string const& t = value.asString();
        if (!isIdentifier(t))
            value.fail(fmt::format("'{}' is not a valid tag (letters, digits and '_')", t));
        if (auto it = tagLocations_.find(t); it != tagLocations_.end())
            value.fail(fmt::format("tag '{}' is defined twice; first at line {}, column {}", t,
                                   it->second.line, it->second.column));
        if (command.findTensor(t) || command.findScalar(t) || command.isSize(t))
            value.fail(fmt::format("tag '{}' has the name of an argument", t));
        return t;
    }

    static std::string readTensor(Command const& command, JsonValue const& value) {
        std::string const& t = value.asString();
        if (command.findTensor(t))
            return t;
        if (command.findScalar(t))
            value.fail(fmt::format("'{}' is a scalar, not a tensor", t));
        if (command.isSize(t))
            value.fail(fmt::format("'{}' is a size, not a tensor", t));
        std::vector<std::string> tensors;
        for (auto const& tensor : command.tensors())
            tensors.push_back(tensor.name);
        value.fail(fmt::format("unknown tensor '{}'{}", t, didYouMean(t, tensors)));
    }

    static std::string readValue(Command const& command, JsonValue const& value,
                                 std::map<std::string, int, std::less<>> const& laterTags) {
        std::string const& t = value.asString();
        if (command.values().count(t))
            return t;
        if (auto it = laterTags.find(t); it != laterTags.end())
            value.fail(
                fmt::format("'{}' is defined by a later operation (/operations/{}); operations "
                            "run in order",
                            t, it->second));
        if (command.findTensor(t))
            value.fail(fmt::format("'{}' is a tensor; load it and use the load's tag", t));
        if (command.findScalar(t))
            value.fail(fmt::format("'{}' is a scalar; use it in an Execute expression", t));
        std::vector<std::string> tags;
        for (auto const& [tagName, info] : command.values())
            tags.push_back(tagName);
        value.fail(
            fmt::format("'{}' is not defined by an earlier operation{}", t, didYouMean(t, tags)));
    }

    JsonValue root_;
    std::map<std::string, SourceLocation, std::less<>> tagLocations_;
};

} // namespace

std::map<std::string, double> readProblem(Command const& command, JsonValue const& problem) {
    std::map<std::string, double> values;
    for (auto const& [key, v] : problem.members()) {
        if (command.isSize(key)) {
            std::int64_t const n = v.asInt();
            if (n < 1 || n > kMaxProblemSize)
                v.fail(fmt::format("size '{}' must be an integer from 1 to {}, got {}", key,
                                   kMaxProblemSize, n));
            values[key] = static_cast<double>(n);
        } else if (auto const* s = command.findScalar(key)) {
            if (s->dtype == DataType::I32)
                values[key] =
                    static_cast<double>(v.asInt(std::numeric_limits<std::int32_t>::min(),
                                                std::numeric_limits<std::int32_t>::max()));
            else
                values[key] = v.asNumber();
        } else {
            std::vector<std::string> names = command.sizes();
            for (auto const& scalar : command.scalars())
                names.push_back(scalar.name);
            if (command.findTensor(key))
                v.failAtKey(
                    fmt::format("'{}' is a tensor; the problem gives sizes and scalars", key));
            v.failAtKey(fmt::format("unknown size or scalar '{}'{}", key, didYouMean(key, names)));
        }
    }
    for (auto const& size : command.sizes())
        if (!values.count(size))
            problem.fail(fmt::format("the problem gives no value for size '{}'", size));
    return values;
}

Command readCommand(JsonValue const& root) {
    return CommandReader(root).read();
}

Command parseCommand(std::string_view text, std::string const& file) {
    return readCommand(parseJson(text, file));
}

Command loadCommand(std::string const& path) {
    return readCommand(readJsonFile(path));
}

} // namespace kiln
