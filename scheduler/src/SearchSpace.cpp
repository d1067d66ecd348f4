#include "kiln/scheduler/SearchSpace.h"

#include "kiln/graph/ExpressionText.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace kiln::scheduler {

namespace {

bool isParameterName(std::string_view s) {
    if (s.empty() || !(std::isupper(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

bool isPowerOfTwo(std::int64_t v) {
    return v > 0 && (v & (v - 1)) == 0;
}

std::vector<std::int64_t> readDomain(JsonValue const& spec) {
    if (!spec.isObject())
        spec.fail(fmt::format("expected an object with one of \"values\", \"range\" or \"pow2\", "
                              "got {}",
                              spec.typeName()));
    spec.allowOnly({"values", "range", "pow2", "doc"});
    int const kinds = int(spec.has("values")) + int(spec.has("range")) + int(spec.has("pow2"));
    if (kinds != 1)
        spec.fail("a parameter needs exactly one domain: \"values\" (a list), \"range\" ({\"min\", "
                  "\"max\", \"step\"}) or \"pow2\" ({\"min\", \"max\"})");
    std::vector<std::int64_t> values;
    if (auto list = spec.find("values")) {
        if (list->size() == 0)
            list->fail("a parameter's \"values\" must not be empty");
        if (static_cast<std::int64_t>(list->size()) > kMaxDomainSize)
            list->fail(fmt::format("more than {} values", kMaxDomainSize));
        std::set<std::int64_t> seen;
        for (auto const& v : list->elements()) {
            std::int64_t const x = v.asInt();
            if (!seen.insert(x).second)
                v.fail(fmt::format("the value {} is listed twice", x));
            values.push_back(x);
        }
        return values;
    }
    if (auto range = spec.find("range")) {
        if (!range->isObject())
            range->fail(fmt::format("expected an object {{\"min\", \"max\", \"step\"}}, got {}",
                                    range->typeName()));
        range->allowOnly({"min", "max", "step"});
        std::int64_t const lo =
            (*range)["min"].asInt(-(std::int64_t(1) << 40), std::int64_t(1) << 40);
        std::int64_t const hi =
            (*range)["max"].asInt(-(std::int64_t(1) << 40), std::int64_t(1) << 40);
        std::int64_t const step =
            range->has("step") ? (*range)["step"].asInt(1, std::int64_t(1) << 40) : 1;
        if (hi < lo)
            (*range)["max"].fail(
                fmt::format("the range is empty: \"max\" ({}) is below \"min\" ({})", hi, lo));
        if ((hi - lo) / step + 1 > kMaxDomainSize)
            range->fail(fmt::format("the range has {} values; at most {} are allowed",
                                    (hi - lo) / step + 1, kMaxDomainSize));
        for (std::int64_t x = lo; x <= hi; x += step)
            values.push_back(x);
        return values;
    }
    JsonValue const pow2 = spec["pow2"];
    if (!pow2.isObject())
        pow2.fail(fmt::format("expected an object {{\"min\", \"max\"}}, got {}", pow2.typeName()));
    pow2.allowOnly({"min", "max"});
    std::int64_t const lo = pow2["min"].asInt(1, std::int64_t(1) << 62);
    std::int64_t const hi = pow2["max"].asInt(1, std::int64_t(1) << 62);
    if (!isPowerOfTwo(lo))
        pow2["min"].fail(fmt::format("{} is not a power of two", lo));
    if (!isPowerOfTwo(hi))
        pow2["max"].fail(fmt::format("{} is not a power of two", hi));
    if (hi < lo)
        pow2["max"].fail(
            fmt::format("the range is empty: \"max\" ({}) is below \"min\" ({})", hi, lo));
    for (std::int64_t x = lo; x <= hi; x *= 2) {
        values.push_back(x);
        if (x == hi)
            break;
    }
    return values;
}

} // namespace

int SearchSpace::indexOf(std::string_view n) const {
    for (std::size_t i = 0; i < parameters.size(); ++i)
        if (parameters[i].name == n)
            return static_cast<int>(i);
    return -1;
}

std::int64_t SearchSpace::unconstrainedSize() const {
    std::int64_t size = 1;
    for (auto const& p : parameters) {
        auto const n = static_cast<std::int64_t>(p.values.size());
        if (size > std::numeric_limits<std::int64_t>::max() / n)
            return std::numeric_limits<std::int64_t>::max();
        size *= n;
    }
    return size;
}

SearchSpace parseSearchSpace(std::string_view text, std::string const& file) {
    JsonValue const root = parseJson(text, file);
    if (!root.isObject())
        root.fail(fmt::format("expected a search space object, got {}", root.typeName()));
    root.allowOnly({"space", "version", "doc", "pipeline", "parameters", "constraints"});
    SearchSpace space{.name = root["space"].asNonEmptyString(), .file = file};
    if (root["version"].asInt() != 1)
        root["version"].fail(
            fmt::format("unsupported search space version {}; this Kiln reads version 1",
                        root["version"].asInt()));
    space.doc = root.stringOr("doc", "");
    if (auto pipeline = root.find("pipeline"))
        space.pipeline = (std::filesystem::path(file).parent_path() / pipeline->asNonEmptyString())
                             .lexically_normal()
                             .string();

    JsonValue const params = root["parameters"];
    if (!params.isObject())
        params.fail(fmt::format("expected an object of parameters, got {}", params.typeName()));
    for (auto const& [name, spec] : params.members()) {
        std::string bare = name;
        if (bare.starts_with('$'))
            spec.failAtKey(
                fmt::format("write the parameter's name without '$': \"{}\"", bare.substr(1)));
        if (!isParameterName(bare))
            spec.failAtKey(fmt::format("'{}' is not a parameter name (an upper-case letter or '_', "
                                       "then letters, digits and '_')",
                                       bare));
        Parameter p{.name = bare, .doc = "", .values = readDomain(spec), .at = spec};
        p.doc = spec.stringOr("doc", "");
        space.parameters.push_back(std::move(p));
    }
    if (space.parameters.empty())
        params.fail("a search space needs at least one parameter");

    rules::RuleScope scope;
    scope.commandFacts = true; // checked for the Command being tuned (CommandFacts.h)
    for (auto const& p : space.parameters)
        scope.parameters.insert(p.name);
    if (auto constraints = root.find("constraints")) {
        for (auto const& c : constraints->elements()) {
            JsonValue source = c;
            std::string doc;
            if (c.isObject()) {
                c.allowOnly({"expr", "doc"});
                source = c["expr"];
                doc = c.stringOr("doc", "");
            } else if (!c.isString()) {
                c.fail(fmt::format("expected a constraint (an expression string, or an object "
                                   "with \"expr\" and \"doc\"), got {}",
                                   c.typeName()));
            }
            if (source.asString().empty())
                source.fail("a constraint must not be empty");
            Constraint constraint{.expression = {}, .doc = doc, .at = source};
            try {
                constraint.expression = rules::parseRuleExpression(source.asString(), scope);
            } catch (ExpressionError const& e) {
                source.failInString(e.offset(), e.message());
            }
            for (auto const& ph : constraint.expression.placeholders) {
                int const index = ph.kind == rules::Placeholder::Kind::Parameter
                                      ? space.indexOf(ph.attribute)
                                      : -1;
                constraint.parameterOf.push_back(index);
                constraint.lastParameter = std::max(constraint.lastParameter, index);
            }
            space.constraints.push_back(std::move(constraint));
        }
    }
    return space;
}

SearchSpace loadSearchSpace(std::string const& path) {
    return parseSearchSpace(readTextFile(path), path);
}

void checkAgainstPipeline(SearchSpace const& space, rules::Pipeline const& pipeline) {
    std::set<std::string> const known = rules::parameterNames(pipeline);
    std::vector<std::string> const names(known.begin(), known.end());
    for (auto const& p : space.parameters) {
        if (known.count(p.name))
            continue;
        auto near = closestMatch(p.name, std::span<std::string const>(names));
        p.at.failAtKey(fmt::format(
            "'{}' is not a parameter of pipeline '{}'{}; it reads {}", p.name, pipeline.name,
            near ? fmt::format(" (did you mean '{}'?)", *near) : "", fmt::join(names, ", ")));
    }
}

} // namespace kiln::scheduler
