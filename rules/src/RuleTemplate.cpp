#include "kiln/rules/RuleTemplate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>
#include <unordered_map>

namespace kiln::rules {

namespace {

bool isPlaceholderName(std::string_view s) {
    auto const upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    if (s.empty() || !upper(s[0]))
        return false;
    return std::all_of(s.begin(), s.end(),
                       [&](char c) { return upper(c) || (c >= '0' && c <= '9') || c == '_'; });
}

/// "{NAME}" at [begin, end) of a string.
struct Use {
    std::size_t begin, end;
    std::string name;
};

/// Every placeholder in `text`, in order: '{', a capital letter, capitals, digits or '_', '}'.
/// Other braces are text.
std::vector<Use> placeholdersIn(std::string_view text) {
    auto const nameCharacter = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    std::vector<Use> uses;
    for (std::size_t at = text.find('{'); at != std::string_view::npos;
         at = text.find('{', at + 1)) {
        std::size_t end = at + 1;
        while (end < text.size() && nameCharacter(text[end]))
            ++end;
        std::string_view const name = text.substr(at + 1, end - at - 1);
        if (end < text.size() && text[end] == '}' && isPlaceholderName(name))
            uses.push_back({at, end + 1, std::string(name)});
    }
    return uses;
}

/// A string as a JSON literal that the source walk of failInString decodes byte for byte:
/// only '"', '\' and control characters escaped, every other byte as it is.
std::string literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += {'\\', c};
        else if (static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
            out += c;
    }
    return out + "\"";
}

int hexDigit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/// How many source bytes after `from` (just past an opening quote) hold the first `decoded`
/// bytes of the string: the walk JsonValue::failInString makes.
std::size_t sourceBytes(std::string_view text, std::size_t from, std::size_t decoded) {
    std::size_t at = from, done = 0;
    while (done < decoded && at < text.size() && text[at] != '"') {
        if (text[at] != '\\') {
            ++at;
            ++done;
            continue;
        }
        if (at + 1 < text.size() && text[at + 1] == 'u') {
            std::uint32_t code = 0;
            for (std::size_t k = at + 2; k < at + 6 && k < text.size(); ++k)
                code = code * 16 + static_cast<std::uint32_t>(std::max(hexDigit(text[k]), 0));
            bool const surrogate = code >= 0xD800 && code <= 0xDBFF;
            done += surrogate ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
            at += surrogate ? 12 : 6;
        } else {
            at += 2;
            ++done;
        }
    }
    return std::min(at, text.size()) - from;
}

/// The inverse for a literal written by literal(): decoded bytes in its first `bytes` bytes.
std::size_t decodedBytes(std::string_view text, std::size_t from, std::size_t bytes) {
    std::size_t at = from, done = 0;
    while (at < from + bytes && at < text.size()) {
        at += text[at] != '\\' ? 1 : at + 1 < text.size() && text[at + 1] == 'u' ? 6 : 2;
        ++done;
    }
    return done;
}

/// One template's table: the placeholders each axis binds, and its rows.
struct Axis {
    std::string name;
    JsonValue rows;
    bool plain = false; ///< rows are values that bind the axis's own name
};

/// The values of one instance.
struct Instance {
    int index = -1;
    std::string label; ///< "ROLE=rhs of rule 'stage-{ROLE}'"
    std::map<std::string, JsonValue> values;
};

class Expander {
public:
    explicit Expander(JsonValue const& written)
        : written_(written)
        , document_(*written.document()) {}

    ExpandedRuleSet run() {
        JsonValue const rules = written_["rules"];
        std::vector<std::pair<std::string, OrderedJson>> members;
        OrderedJson expandedRules = OrderedJson::array();
        record(rules, "/rules", -1);
        for (auto const& rule : rules.elements()) {
            if (rule.isObject() && rule.has("for_each")) {
                expandTemplate(rule, expandedRules);
                continue;
            }
            if (auto name = rule.isObject() ? rule.find("name") : std::nullopt;
                name && name->isString())
                makers_.emplace(name->asString(), fmt::format("the rule at {}", rule.pointer()));
            expandedRules.push_back(
                verbatim(rule, fmt::format("/rules/{}", expandedRules.size()), -1));
        }
        OrderedJson root = OrderedJson::object();
        record(written_, "", -1);
        for (auto const& [key, value] : written_.members()) {
            std::string const pointer = appendPointer("", key);
            recordKey(value, pointer);
            if (key == "rules")
                root[key] = expandedRules;
            else if (key == "strategy")
                root[key] = strategy(value, pointer);
            else
                root[key] = verbatim(value, pointer, -1);
        }
        auto document = std::make_shared<SourceDocument const>(
            document_.file(), document_.text() + literals_, std::move(root), std::move(values_),
            std::move(keys_));
        JsonValue expanded(document, "", &document->root());
        return ExpandedRuleSet(written_, std::move(expanded), std::move(origins_),
                               std::move(substitutions_), std::move(labels_));
    }

private:
    // The value at `pointer` of the expansion came from `from`.
    void recordKey(JsonValue const& member, std::string const& pointer) {
        if (auto p = document_.keyPosition(member.pointer()))
            keys_[pointer] = *p;
    }

    void record(JsonValue const& from, std::string const& pointer, int instance) {
        if (auto p = document_.valuePosition(from.pointer()))
            values_[pointer] = *p;
        origins_[pointer] = {from.pointer(), instance};
    }

    void grow(std::size_t n, JsonValue const& at) {
        size_ += n;
        if (size_ > kMaxExpandedSize)
            at.fail(fmt::format("expanding the templates of this rule set writes more than {} "
                                "values and characters, the most a rule set may expand to",
                                kMaxExpandedSize));
    }

    /// `from` as it is (a plain rule, a value from a table, what is not rules).
    OrderedJson verbatim(JsonValue const& from, std::string const& pointer, int instance) {
        grow(1 + (from.isString() ? from.asString().size() : 0), from);
        record(from, pointer, instance);
        if (from.isObject()) {
            OrderedJson object = OrderedJson::object();
            for (auto const& [key, value] : from.members()) {
                std::string const member = appendPointer(pointer, key);
                grow(key.size(), value);
                recordKey(value, member);
                object[key] = verbatim(value, member, instance);
            }
            return object;
        }
        if (from.isArray()) {
            OrderedJson array = OrderedJson::array();
            for (auto const& element : from.elements())
                array.push_back(
                    verbatim(element, fmt::format("{}/{}", pointer, array.size()), instance));
            return array;
        }
        return from.json();
    }

    /// A strategy, each rule list's template names replaced by their instances' names.
    OrderedJson strategy(JsonValue const& from, std::string const& pointer) {
        record(from, pointer, -1);
        if (from.isObject()) {
            OrderedJson object = OrderedJson::object();
            for (auto const& [key, value] : from.members()) {
                std::string const member = appendPointer(pointer, key);
                recordKey(value, member);
                object[key] = strategy(value, member);
            }
            return object;
        }
        if (!from.isArray())
            return verbatim(from, pointer, -1);
        OrderedJson array = OrderedJson::array();
        for (auto const& element : from.elements()) {
            auto const instances =
                element.isString() ? names_.find(element.asString()) : names_.end();
            if (instances == names_.end()) {
                array.push_back(strategy(element, fmt::format("{}/{}", pointer, array.size())));
                continue;
            }
            for (auto const& name : instances->second) {
                grow(1 + name.size(), element);
                record(element, fmt::format("{}/{}", pointer, array.size()), -1);
                array.push_back(name);
            }
        }
        return array;
    }

    /// Fails at the first placeholder in `value` (a table's value, written as it is).
    void noPlaceholders(JsonValue const& value) {
        auto const message = [](std::string const& name) {
            return fmt::format("a value in \"for_each\" cannot hold a placeholder ({{{}}}): it is "
                               "written into the rule as it is, not expanded again",
                               name);
        };
        if (value.isString()) {
            auto const uses = placeholdersIn(value.asString());
            if (!uses.empty())
                value.failInString(uses[0].begin, message(uses[0].name));
        }
        for (auto const& [key, member] : value.isObject()
                                             ? value.members()
                                             : std::vector<std::pair<std::string, JsonValue>>{}) {
            if (auto const uses = placeholdersIn(key); !uses.empty())
                member.failAtKey(message(uses[0].name));
            noPlaceholders(member);
        }
        if (value.isArray())
            for (auto const& element : value.elements())
                noPlaceholders(element);
    }

    /// Reads a template's table: its axes, and where each placeholder is bound.
    std::vector<Axis> table(JsonValue const& table, std::map<std::string, JsonValue>& bound,
                            std::size_t& count) {
        if (!table.isObject())
            table.fail(fmt::format("\"for_each\" must be an object of axes, each a list of rows "
                                   "(such as {{\"ROLE\": [\"lhs\", \"rhs\"]}}), not {}",
                                   table.typeName()));
        if (table.members().empty())
            table.fail("\"for_each\" needs at least one axis");
        std::vector<Axis> axes;
        count = 1;
        for (auto const& [name, rows] : table.members()) {
            if (!rows.isArray())
                rows.fail(fmt::format("axis '{}' must be an array of rows, not {}", name,
                                      rows.typeName()));
            if (rows.size() == 0)
                rows.fail(fmt::format("axis '{}' has no rows; an axis needs at least one", name));
            Axis axis{.name = name, .rows = rows, .plain = !rows[0].isObject()};
            auto const bind = [&](std::string const& placeholder, JsonValue const& at) {
                if (!isPlaceholderName(placeholder))
                    at.failAtKey(fmt::format(
                        "'{}' is not a placeholder name (a capital letter, then capitals, digits "
                        "and '_'){}",
                        placeholder,
                        axis.plain ? "; an axis of plain values binds the axis's own name" : ""));
                if (!bound.emplace(placeholder, at).second)
                    at.failAtKey(
                        fmt::format("placeholder {{{}}} is bound by two axes", placeholder));
            };
            if (axis.plain)
                bind(name, rows);
            std::vector<std::pair<std::string, JsonValue>> const first =
                axis.plain ? std::vector<std::pair<std::string, JsonValue>>{} : rows[0].members();
            for (std::size_t k = 0; k < rows.size(); ++k) {
                JsonValue const row = rows[k];
                if (row.isObject() == axis.plain)
                    row.fail(
                        fmt::format("every row of axis '{}' must be {}, as its first row is", name,
                                    axis.plain ? "a plain value" : "an object of placeholders"));
                if (axis.plain) {
                    noPlaceholders(row);
                    continue;
                }
                if (row.members().empty())
                    row.fail("a row must bind at least one placeholder");
                for (auto const& [placeholder, value] : row.members()) {
                    if (k == 0)
                        bind(placeholder, value);
                    else if (!rows[0].has(placeholder))
                        value.failAtKey(fmt::format(
                            "the first row of axis '{}' does not bind {{{}}}; every row of an "
                            "axis binds the same placeholders",
                            name, placeholder));
                    noPlaceholders(value);
                }
                for (auto const& [placeholder, value] : first)
                    if (!row.has(placeholder))
                        row.fail(
                            fmt::format("this row of axis '{}' does not bind {{{}}}, which its "
                                        "first row binds",
                                        name, placeholder));
            }
            if (count > kMaxTemplateInstances / rows.size())
                table.fail(fmt::format("\"for_each\" makes more than {} instances, the most a "
                                       "template may have",
                                       kMaxTemplateInstances));
            count *= rows.size();
            axes.push_back(std::move(axis));
        }
        return axes;
    }

    /// Fails at the first unknown placeholder under `value` and notes the ones it uses.
    void uses(JsonValue const& value, std::map<std::string, JsonValue> const& bound,
              std::set<std::string>& used) {
        auto const check = [&](std::string const& text, auto const& fail) {
            for (auto const& use : placeholdersIn(text)) {
                if (bound.count(use.name)) {
                    used.insert(use.name);
                    continue;
                }
                std::vector<std::string> names;
                for (auto const& [name, at] : bound)
                    names.push_back(name);
                auto const near = closestMatch(use.name, std::span<std::string const>(names));
                fail(use.begin,
                     fmt::format("unknown placeholder {{{}}}{}; \"for_each\" binds {}", use.name,
                                 near ? fmt::format(" (did you mean {{{}}}?)", *near) : "",
                                 fmt::join(names, ", ")));
            }
        };
        if (value.isString())
            check(value.asString(), [&](std::size_t offset, std::string message) {
                value.failInString(offset, std::move(message));
            });
        if (value.isObject())
            for (auto const& entry : value.members()) {
                JsonValue const& member = entry.second;
                check(entry.first, [&](std::size_t, std::string message) {
                    member.failAtKey(std::move(message));
                });
                uses(member, bound, used);
            }
        if (value.isArray())
            for (auto const& element : value.elements())
                uses(element, bound, used);
    }

    void expandTemplate(JsonValue const& rule, OrderedJson& out) {
        std::map<std::string, JsonValue> bound;
        std::size_t count = 0;
        std::vector<Axis> const axes = table(rule["for_each"], bound, count);
        JsonValue const name = rule["name"];
        std::string const& written = name.asNonEmptyString();
        std::set<std::string> used;
        for (auto const& [key, value] : rule.members())
            if (key != "for_each")
                uses(value, bound, used);
        for (auto const& [placeholder, at] : bound)
            if (!used.count(placeholder))
                at.failAtKey(fmt::format("placeholder {{{}}} is bound here but rule '{}' does not "
                                         "use it",
                                         placeholder, written));
        std::vector<std::string> labelNames;
        for (auto const& use : placeholdersIn(written))
            if (std::find(labelNames.begin(), labelNames.end(), use.name) == labelNames.end())
                labelNames.push_back(use.name);
        if (labelNames.empty())
            for (auto const& [placeholder, at] : bound)
                labelNames.push_back(placeholder);

        std::vector<std::size_t> row(axes.size(), 0);
        for (std::size_t n = 0; n < count; ++n) {
            Instance instance{.index = static_cast<int>(labels_.size())};
            for (std::size_t k = 0; k < axes.size(); ++k) {
                JsonValue const value = axes[k].rows[row[k]];
                if (axes[k].plain)
                    instance.values.emplace(axes[k].name, value);
                else
                    for (auto const& [placeholder, v] : value.members())
                        instance.values.emplace(placeholder, v);
            }
            std::vector<std::string> parts;
            for (auto const& placeholder : labelNames) {
                OrderedJson const& v = instance.values.at(placeholder).json();
                parts.push_back(fmt::format(
                    "{}={}", placeholder,
                    v.is_string() && !v.get<std::string>().empty()
                        ? v.get<std::string>()
                        : v.dump(-1, ' ', false, OrderedJson::error_handler_t::replace)));
            }
            instance.label = fmt::format("{} of rule '{}'", fmt::join(parts, ", "), written);
            labels_.push_back(instance.label);

            std::string const pointer = fmt::format("/rules/{}", out.size());
            record(rule, pointer, instance.index);
            OrderedJson expanded = OrderedJson::object();
            for (auto const& [key, value] : rule.members()) {
                if (key == "for_each")
                    continue;
                std::string const member = appendPointer(pointer, key);
                recordKey(value, member);
                if (auto v = substitute(value, member, instance))
                    expanded[key] = std::move(*v);
            }
            if (expanded.contains("name") && expanded["name"].is_string()) {
                std::string const made = expanded["name"].get<std::string>();
                if (auto const other = makers_.find(made); other != makers_.end())
                    name.fail(fmt::format("in instance {}: rule '{}' is made twice, also by {}; "
                                          "a template's name tells its instances apart",
                                          instance.label, made, other->second));
                makers_.emplace(made, "instance " + instance.label);
                names_[written].push_back(made);
            }
            out.push_back(std::move(expanded));
            for (std::size_t k = axes.size(); k-- > 0;) {
                if (++row[k] < axes[k].rows.size())
                    break;
                row[k] = 0;
            }
        }
    }

    /// `text` with the instance's values in place of its placeholders; nullopt when it is
    /// exactly a placeholder bound to null. The pieces say where each placeholder was.
    std::string replaced(std::string const& text, Instance const& instance,
                         std::vector<ExpandedRuleSet::Substitution::Piece>& pieces,
                         auto const& fail) {
        std::string out;
        std::size_t done = 0;
        for (auto const& use : placeholdersIn(text)) {
            OrderedJson const& value = instance.values.at(use.name).json();
            if (!value.is_string() && !value.is_number_integer())
                fail(use.begin,
                     fmt::format("in instance {}: {{{}}} is {} here, which can only stand for a "
                                 "whole string \"{{{}}}\", not for a part of one",
                                 instance.label, use.name, instance.values.at(use.name).typeName(),
                                 use.name));
            out += text.substr(done, use.begin - done);
            std::size_t const begin = out.size();
            out += value.is_string() ? value.get<std::string>() : value.dump();
            pieces.push_back({begin, out.size(), use.begin, use.end});
            done = use.end;
        }
        return out + text.substr(done);
    }

    std::optional<OrderedJson> substitute(JsonValue const& from, std::string const& pointer,
                                          Instance const& instance) {
        if (from.isString()) {
            std::string const& text = from.asString();
            auto const uses = placeholdersIn(text);
            if (uses.size() == 1 && uses[0].begin == 0 && uses[0].end == text.size()) {
                JsonValue const& value = instance.values.at(uses[0].name);
                if (value.isNull())
                    return std::nullopt;
                return verbatim(value, pointer, instance.index);
            }
            if (uses.empty())
                return verbatim(from, pointer, instance.index);
            ExpandedRuleSet::Substitution s{.written = *document_.valuePosition(from.pointer())};
            std::string out =
                replaced(text, instance, s.pieces, [&](std::size_t offset, std::string message) {
                    from.failInString(offset, std::move(message));
                });
            grow(1 + out.size(), from);
            record(from, pointer, instance.index);
            s.literal = document_.text().size() + literals_.size();
            literals_ += literal(out);
            values_[pointer] = {s.written.line, s.written.column, s.literal};
            substitutions_.emplace(pointer, std::move(s));
            return OrderedJson(std::move(out));
        }
        if (from.isObject()) {
            grow(1, from);
            record(from, pointer, instance.index);
            OrderedJson object = OrderedJson::object();
            for (auto const& entry : from.members()) {
                JsonValue const& value = entry.second;
                std::vector<ExpandedRuleSet::Substitution::Piece> pieces;
                std::string const name =
                    replaced(entry.first, instance, pieces, [&](std::size_t, std::string message) {
                        value.failAtKey(std::move(message));
                    });
                grow(name.size(), value);
                if (object.contains(name))
                    value.failAtKey(fmt::format("in instance {}: key '{}' appears twice once "
                                                "placeholders are replaced",
                                                instance.label, name));
                std::string const member = appendPointer(pointer, name);
                if (auto v = substitute(value, member, instance)) {
                    recordKey(value, member);
                    object[name] = std::move(*v);
                }
            }
            return object;
        }
        if (from.isArray()) {
            grow(1, from);
            record(from, pointer, instance.index);
            OrderedJson array = OrderedJson::array();
            for (auto const& element : from.elements())
                if (auto v =
                        substitute(element, fmt::format("{}/{}", pointer, array.size()), instance))
                    array.push_back(std::move(*v));
            return array;
        }
        return verbatim(from, pointer, instance.index);
    }

    JsonValue written_;
    SourceDocument const& document_;
    std::unordered_map<std::string, SourcePosition> values_, keys_;
    std::map<std::string, ExpandedRuleSet::Origin> origins_;
    std::map<std::string, ExpandedRuleSet::Substitution> substitutions_;
    std::vector<std::string> labels_;
    std::string literals_;
    std::size_t size_ = 0;
    std::map<std::string, std::vector<std::string>> names_; ///< template name -> its instances'
    std::map<std::string, std::string> makers_; ///< rule name -> what made it, for duplicates
};

} // namespace

ExpandedRuleSet::ExpandedRuleSet(JsonValue written, std::optional<JsonValue> expanded,
                                 std::map<std::string, Origin> origins,
                                 std::map<std::string, Substitution> substitutions,
                                 std::vector<std::string> instances)
    : written_(std::move(written))
    , expanded_(std::move(expanded))
    , origins_(std::move(origins))
    , substitutions_(std::move(substitutions))
    , instances_(std::move(instances)) {}

ExpandedRuleSet::Origin const* ExpandedRuleSet::originOf(std::string const& pointer,
                                                         std::string& rest) const {
    std::string prefix = pointer;
    rest.clear();
    for (;;) {
        if (auto it = origins_.find(prefix); it != origins_.end())
            return &it->second;
        std::size_t const slash = prefix.rfind('/');
        if (slash == std::string::npos)
            return nullptr;
        rest = prefix.substr(slash) + rest;
        prefix.resize(slash);
    }
}

SourceLocation ExpandedRuleSet::source(SourceLocation const& at) const {
    if (!expanded_ || at.file != written_.file())
        return at;
    std::string rest;
    Origin const* origin = originOf(at.pointer, rest);
    if (!origin)
        return at;
    SourceLocation where = at;
    where.pointer = origin->pointer + rest;
    // A column inside a string that placeholders changed: the same character of the written
    // string, or the placeholder that wrote it.
    auto const s = substitutions_.find(at.pointer);
    if (s != substitutions_.end() && at.line == s->second.written.line &&
        at.column > s->second.written.column) {
        Substitution const& sub = s->second;
        std::string const& text = expanded_->document()->text();
        std::size_t const walked = static_cast<std::size_t>(at.column - sub.written.column - 1);
        std::size_t const offset = decodedBytes(text, sub.literal + 1, walked);
        std::size_t writtenOffset = offset;
        for (auto const& piece : sub.pieces) {
            if (offset < piece.expandedBegin)
                break;
            writtenOffset = offset < piece.expandedEnd
                                ? piece.writtenBegin
                                : offset - piece.expandedEnd + piece.writtenEnd;
        }
        where.column = sub.written.column + 1 +
                       static_cast<int>(sourceBytes(text, sub.written.offset + 1, writtenOffset));
    }
    return where;
}

UserError ExpandedRuleSet::relocate(UserError const& error) const {
    SourceLocation const& at = error.location();
    if (!expanded_ || at.file != written_.file())
        return error;
    std::string rest;
    Origin const* origin = originOf(at.pointer, rest);
    std::string message = error.message();
    if (origin && origin->instance >= 0)
        message = fmt::format("in instance {}: {}", instances_[origin->instance], message);
    return UserError(std::move(message), source(at));
}

ExpandedRuleSet expandRuleTemplates(JsonValue const& written) {
    bool templates = false;
    if (written.isObject())
        if (auto rules = written.find("rules"); rules && rules->isArray())
            for (auto const& rule : rules->elements())
                templates = templates || (rule.isObject() && rule.has("for_each"));
    if (!templates)
        return ExpandedRuleSet(written, std::nullopt, {}, {}, {});
    return Expander(written).run();
}

} // namespace kiln::rules
