#include "kiln/graph/SourceJson.h"

#include "JsonText.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace kiln {

using namespace json;

std::string readTextFile(std::string const& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw UserError("cannot read this file: it is a directory", SourceLocation{path});
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        int const code = errno;
        throw UserError(
            fmt::format("cannot read this file: {}", code ? std::strerror(code) : "cannot open it"),
            SourceLocation{path});
    }
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad())
        throw UserError("cannot read this file: a read failed", SourceLocation{path});
    return std::move(content).str();
}

JsonValue readJsonFile(std::string const& path) {
    return parseJson(readTextFile(path), path);
}

// ---------------------------------------------------------------------------------------------
// SourceDocument and helpers
// ---------------------------------------------------------------------------------------------

SourceDocument::SourceDocument(std::string file, std::string text, OrderedJson root,
                               std::unordered_map<std::string, SourcePosition> values,
                               std::unordered_map<std::string, SourcePosition> keys)
    : file_(std::move(file))
    , text_(std::move(text))
    , root_(std::move(root))
    , values_(std::move(values))
    , keys_(std::move(keys)) {}

std::optional<SourcePosition> SourceDocument::valuePosition(std::string const& pointer) const {
    if (auto it = values_.find(pointer); it != values_.end())
        return it->second;
    return std::nullopt;
}

std::optional<SourcePosition> SourceDocument::keyPosition(std::string const& pointer) const {
    if (auto it = keys_.find(pointer); it != keys_.end())
        return it->second;
    return std::nullopt;
}

SourceLocation SourceDocument::locate(std::string const& pointer) const {
    std::string parent = pointer;
    for (;;) {
        if (auto at = valuePosition(parent))
            return {file_, at->line, at->column, pointer};
        if (parent.empty())
            return {file_, 0, 0, pointer};
        parent.erase(parent.rfind('/'));
    }
}

std::string appendPointer(std::string const& pointer, std::string_view token) {
    std::string out = pointer;
    out.reserve(pointer.size() + token.size() + 1);
    out += '/';
    for (char c : token) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

namespace {

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions), without case.
std::size_t editDistance(std::string_view a, std::string_view b) {
    auto const lower = [](char c) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    };
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t const cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

template <class S>
std::optional<std::string> closest(std::string_view word, std::span<S const> candidates) {
    if (word.size() > 64)
        return std::nullopt;
    std::size_t const allowed = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
    std::optional<std::string> best;
    std::size_t bestDistance = allowed + 1;
    for (auto const& candidate : candidates) {
        std::string_view const c = candidate;
        if (c == word || c.size() > 64)
            continue;
        std::size_t const distance = editDistance(word, c);
        if (distance < bestDistance && distance < std::max(word.size(), c.size())) {
            best = std::string(c);
            bestDistance = distance;
        }
    }
    return best;
}

template <class S>
std::string joinNames(std::span<S const> names) {
    std::string out;
    for (auto const& n : names) {
        if (!out.empty())
            out += ", ";
        out += std::string_view(n);
    }
    return out;
}

std::string describeNumber(OrderedJson const& v) {
    if (v.is_number_float())
        return fmt::format("{}", v.get<double>());
    if (v.is_number_unsigned())
        return fmt::format("{}", v.get<std::uint64_t>());
    return fmt::format("{}", v.get<std::int64_t>());
}

} // namespace

std::optional<std::string> closestMatch(std::string_view word,
                                        std::span<std::string_view const> candidates) {
    return closest(word, candidates);
}

std::optional<std::string> closestMatch(std::string_view word,
                                        std::span<std::string const> candidates) {
    return closest(word, candidates);
}

// ---------------------------------------------------------------------------------------------
// JsonValue
// ---------------------------------------------------------------------------------------------

JsonValue::JsonValue(std::shared_ptr<SourceDocument const> document, std::string pointer,
                     OrderedJson const* value)
    : document_(std::move(document))
    , pointer_(std::move(pointer))
    , value_(value) {
    KILN_ASSERT(document_ && value_, "a JsonValue needs a document and a value");
}

SourceLocation JsonValue::location() const {
    return document_->locate(pointer_);
}

SourceLocation JsonValue::keyLocation() const {
    if (auto at = document_->keyPosition(pointer_))
        return {document_->file(), at->line, at->column, pointer_};
    return location();
}

bool JsonValue::isInteger() const {
    if (value_->is_number_integer())
        return true;
    if (!value_->is_number_float())
        return false;
    double const d = value_->get<double>();
    return std::isfinite(d) && d == std::trunc(d) && std::abs(d) < 9.2e18;
}

std::string_view JsonValue::typeName() const {
    switch (value_->type()) {
    case OrderedJson::value_t::object:
        return "an object";
    case OrderedJson::value_t::array:
        return "an array";
    case OrderedJson::value_t::string:
        return "a string";
    case OrderedJson::value_t::boolean:
        return "a boolean";
    case OrderedJson::value_t::null:
        return "null";
    case OrderedJson::value_t::number_integer:
    case OrderedJson::value_t::number_unsigned:
    case OrderedJson::value_t::number_float:
        return "a number";
    default:
        return "a value of unknown type";
    }
}

void JsonValue::expectType(bool ok, std::string_view expected) const {
    if (!ok)
        fail(fmt::format("expected {}, got {}", expected, typeName()));
}

std::optional<JsonValue> JsonValue::find(std::string_view key) const {
    expectType(isObject(), "an object");
    auto const& object = value_->get_ref<OrderedJson::object_t const&>();
    for (auto const& [k, v] : object)
        if (k == key)
            return JsonValue(document_, appendPointer(pointer_, key), &v);
    return std::nullopt;
}

JsonValue JsonValue::operator[](std::string_view key) const {
    if (auto member = find(key))
        return *member;
    fail(fmt::format("missing field '{}'", key));
}

bool JsonValue::has(std::string_view key) const {
    return find(key).has_value();
}

std::vector<std::pair<std::string, JsonValue>> JsonValue::members() const {
    expectType(isObject(), "an object");
    std::vector<std::pair<std::string, JsonValue>> out;
    for (auto const& [k, v] : value_->get_ref<OrderedJson::object_t const&>())
        out.emplace_back(k, JsonValue(document_, appendPointer(pointer_, k), &v));
    return out;
}

void JsonValue::allowOnly(std::initializer_list<std::string_view> fields) const {
    allowOnly(std::span<std::string_view const>(fields.begin(), fields.size()));
}

void JsonValue::allowOnly(std::span<std::string_view const> fields) const {
    for (auto const& [key, member] : members()) {
        if (std::find(fields.begin(), fields.end(), key) != fields.end())
            continue;
        if (auto suggestion = closestMatch(key, fields))
            member.failAtKey(
                fmt::format("unknown field '{}' (did you mean '{}'?)", shorten(key), *suggestion));
        member.failAtKey(
            fmt::format("unknown field '{}'; expected one of {}", shorten(key), joinNames(fields)));
    }
}

std::size_t JsonValue::size() const {
    expectType(isArray(), "an array");
    return value_->size();
}

JsonValue JsonValue::operator[](std::size_t index) const {
    if (index >= size())
        fail(fmt::format("expected at least {} elements, got {}", index + 1, size()));
    return JsonValue(document_, appendPointer(pointer_, std::to_string(index)), &(*value_)[index]);
}

std::vector<JsonValue> JsonValue::elements() const {
    std::vector<JsonValue> out;
    out.reserve(size());
    for (std::size_t k = 0; k < value_->size(); ++k)
        out.emplace_back(document_, appendPointer(pointer_, std::to_string(k)), &(*value_)[k]);
    return out;
}

std::string const& JsonValue::asString() const {
    expectType(isString(), "a string");
    return value_->get_ref<std::string const&>();
}

std::string const& JsonValue::asNonEmptyString() const {
    auto const& s = asString();
    if (s.empty())
        fail("expected a non-empty string");
    return s;
}

std::int64_t JsonValue::asInt(std::int64_t min, std::int64_t max) const {
    expectType(isNumber(), "an integer");
    if (!isInteger())
        fail(fmt::format("expected an integer, got {}", describeNumber(*value_)));
    std::int64_t const v = value_->is_number_float()
                               ? static_cast<std::int64_t>(value_->get<double>())
                               : value_->get<std::int64_t>();
    if (v < min || v > max) {
        constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
        constexpr auto highest = std::numeric_limits<std::int64_t>::max();
        if (max == highest)
            fail(fmt::format("expected an integer of at least {}, got {}", min, v));
        if (min == lowest)
            fail(fmt::format("expected an integer of at most {}, got {}", max, v));
        fail(fmt::format("expected an integer from {} to {}, got {}", min, max, v));
    }
    return v;
}

double JsonValue::asNumber() const {
    expectType(isNumber(), "a number");
    return value_->get<double>();
}

bool JsonValue::asBool() const {
    expectType(isBool(), "a boolean (true or false)");
    return value_->get<bool>();
}

std::size_t JsonValue::asChoice(std::span<std::string_view const> choices,
                                std::string_view what) const {
    auto const& s = asString();
    for (std::size_t k = 0; k < choices.size(); ++k)
        if (choices[k] == s)
            return k;
    std::string message = fmt::format("unknown {} '{}'", what, shorten(s));
    if (auto suggestion = closestMatch(s, choices))
        message += fmt::format(" (did you mean '{}'?)", *suggestion);
    message += fmt::format("; expected one of {}", joinNames(choices));
    fail(std::move(message));
}

std::string JsonValue::stringOr(std::string_view key, std::string fallback) const {
    if (auto member = find(key))
        return member->asString();
    return fallback;
}

bool JsonValue::boolOr(std::string_view key, bool fallback) const {
    auto member = find(key);
    return member ? member->asBool() : fallback;
}

std::int64_t JsonValue::intOr(std::string_view key, std::int64_t fallback) const {
    auto member = find(key);
    return member ? member->asInt() : fallback;
}

void JsonValue::fail(std::string message) const {
    throw UserError(std::move(message), location());
}

void JsonValue::failAtKey(std::string message) const {
    throw UserError(std::move(message), keyLocation());
}

void JsonValue::failInString(std::size_t offset, std::string message) const {
    SourceLocation where = location();
    auto const start = document_->valuePosition(pointer_);
    std::string const& text = document_->text();
    if (!isString() || !start || start->offset >= text.size() || text[start->offset] != '"')
        throw UserError(std::move(message), std::move(where));
    // Walk the source from the opening quote, decoding as the parser did, until `offset` bytes
    // of decoded text lie behind.
    std::size_t at = start->offset + 1;
    std::size_t decoded = 0;
    while (decoded < offset && at < text.size() && text[at] != '"') {
        if (text[at] != '\\') {
            ++at;
            ++decoded;
            continue;
        }
        if (at + 1 < text.size() && text[at + 1] == 'u') {
            std::uint32_t code = hex4(text, at + 2).value_or(0);
            std::size_t width = 6;
            if (isHighSurrogate(code)) {
                code = 0x10000;
                width = 12;
            }
            decoded += static_cast<std::size_t>(utf8Length(code));
            at += width;
        } else {
            at += 2;
            ++decoded;
        }
    }
    where.column = start->column + static_cast<int>(std::min(at, text.size()) - start->offset);
    throw UserError(std::move(message), std::move(where));
}

} // namespace kiln
