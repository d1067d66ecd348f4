// SourceJson.h: JSON that remembers where every value came from, and a reader that says so.
//
// Every file a user writes for Kiln (Commands, KernelGraphs, rule sets, search spaces, arch
// files) is JSON, and every mistake in one must be reported at file:line:col with the JSON
// pointer of the offending value. nlohmann's parser forgets positions once it has parsed, so
// Kiln parses JSON itself: parseJson() builds an nlohmann::ordered_json (member order kept) and
// a table from JSON pointer to the line and column where each value (and each member's key)
// starts. It is strict: no comments, no trailing commas, no duplicate keys, no raw control
// characters in strings, integers that fit in 64 bits, at most kMaxJsonDepth levels of nesting.
// Bytes that are not valid UTF-8 pass through unchanged.
//
// JsonValue reads the document the way a loader wants to: required and optional members,
// typed accessors whose failures read "expected a string, got a number", allowOnly() for
// unknown fields with a did-you-mean, and fail()/failInString() that throw a UserError located
// at the value (or at a character inside a string, for expression text).
#pragma once

#include "kiln/graph/Error.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln {

using OrderedJson = nlohmann::ordered_json;

/// The deepest nesting of arrays and objects parseJson() accepts.
inline constexpr int kMaxJsonDepth = 256;

/// Where a value starts in the text: 1-based line and column (columns count bytes) and the
/// 0-based byte offset.
struct SourcePosition {
    int line = 0;
    int column = 0;
    std::size_t offset = 0;
};

/// A parsed JSON text with its positions. Immutable once parsed; shared by the JsonValues that
/// read it.
class SourceDocument {
public:
    SourceDocument(std::string file, std::string text, OrderedJson root,
                   std::unordered_map<std::string, SourcePosition> values,
                   std::unordered_map<std::string, SourcePosition> keys);

    std::string const& file() const { return file_; }
    std::string const& text() const { return text_; }
    OrderedJson const& root() const { return root_; }

    /// Where the value at `pointer` starts (its first character: '{', '"', a digit...).
    std::optional<SourcePosition> valuePosition(std::string const& pointer) const;
    /// Where the key of the object member at `pointer` starts (its opening quote).
    std::optional<SourcePosition> keyPosition(std::string const& pointer) const;

    /// A location for `pointer`: the value's position, or the nearest enclosing value's.
    SourceLocation locate(std::string const& pointer) const;

private:
    std::string file_;
    std::string text_;
    OrderedJson root_;
    std::unordered_map<std::string, SourcePosition> values_;
    std::unordered_map<std::string, SourcePosition> keys_;
};

/// `pointer` extended by one reference token, escaped as RFC 6901 says ('~' -> "~0", '/' -> "~1").
std::string appendPointer(std::string const& pointer, std::string_view token);

/// The candidate nearest to `word` by edit distance (letters compared without case), if one is
/// near enough to be what the user meant; for did-you-mean messages.
std::optional<std::string> closestMatch(std::string_view word,
                                        std::span<std::string_view const> candidates);
std::optional<std::string> closestMatch(std::string_view word,
                                        std::span<std::string const> candidates);

/// One value of a SourceDocument, named by its JSON pointer. Cheap to copy. Every accessor that
/// meets something it did not expect throws a UserError located at the value.
class JsonValue {
public:
    JsonValue(std::shared_ptr<SourceDocument const> document, std::string pointer,
              OrderedJson const* value);

    /// The underlying nlohmann value.
    OrderedJson const& json() const { return *value_; }
    /// The RFC 6901 pointer of this value ("" for the root).
    std::string const& pointer() const { return pointer_; }
    std::string const& file() const { return document_->file(); }
    std::shared_ptr<SourceDocument const> const& document() const { return document_; }
    /// file, line and column where this value starts, and its pointer.
    SourceLocation location() const;
    /// The same, at the member's key rather than its value (for "unknown field" and the like);
    /// the value's location when this value is not an object member.
    SourceLocation keyLocation() const;

    bool isObject() const { return value_->is_object(); }
    bool isArray() const { return value_->is_array(); }
    bool isString() const { return value_->is_string(); }
    bool isNumber() const { return value_->is_number(); }
    bool isInteger() const;
    bool isBool() const { return value_->is_boolean(); }
    bool isNull() const { return value_->is_null(); }
    /// "an object", "an array", "a string", "a number", "a boolean" or "null", for messages.
    std::string_view typeName() const;

    // Objects. Each fails unless this value is an object.
    /// The member `key`; fails with "missing field 'key'" at this object when there is none.
    JsonValue operator[](std::string_view key) const;
    /// The member `key`, if present.
    std::optional<JsonValue> find(std::string_view key) const;
    bool has(std::string_view key) const;
    /// Members in the order of the file.
    std::vector<std::pair<std::string, JsonValue>> members() const;
    /// Fails at the first member whose key is not in `fields` ("unknown field 'shap' (did you
    /// mean 'shape'?)"), located at that key.
    void allowOnly(std::initializer_list<std::string_view> fields) const;
    void allowOnly(std::span<std::string_view const> fields) const;

    // Arrays. Each fails unless this value is an array.
    std::size_t size() const;
    /// Element `index`; fails when there is none.
    JsonValue operator[](std::size_t index) const;
    /// Elements in order.
    std::vector<JsonValue> elements() const;

    // Scalars. Each fails with "expected X, got Y" when the value has another type.
    std::string const& asString() const;
    /// A string that is not empty.
    std::string const& asNonEmptyString() const;
    /// An integer; a number with a fraction or out of [min, max] fails.
    std::int64_t asInt(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
    double asNumber() const;
    bool asBool() const;
    /// The index of the string among `choices`; otherwise fails with "unknown WHAT 'x' (did you
    /// mean 'y'?); expected one of a, b, c".
    std::size_t asChoice(std::span<std::string_view const> choices, std::string_view what) const;

    // Optional members with defaults.
    std::string stringOr(std::string_view key, std::string fallback) const;
    bool boolOr(std::string_view key, bool fallback) const;
    std::int64_t intOr(std::string_view key, std::int64_t fallback) const;

    /// Throws a UserError at this value.
    [[noreturn]] void fail(std::string message) const;
    /// Throws a UserError at this member's key (see keyLocation()).
    [[noreturn]] void failAtKey(std::string message) const;
    /// Throws a UserError at byte `offset` of this string's decoded text (an ExpressionError's
    /// offset). The column is that of the source character the decoded byte came from: for a
    /// string without escapes before `offset`, the opening quote's column + 1 + offset; each
    /// escape before it counts as many columns as it is written with ("\n" two, "\u00e9" six).
    /// An offset at or past the end points at the closing quote. The pointer is this value's.
    [[noreturn]] void failInString(std::size_t offset, std::string message) const;

private:
    void expectType(bool ok, std::string_view expected) const;

    std::shared_ptr<SourceDocument const> document_;
    std::string pointer_;
    OrderedJson const* value_;
};

/// Parses JSON `text` read from `file` (used only in messages); throws a UserError at the exact
/// line and column of the first syntax error.
JsonValue parseJson(std::string_view text, std::string const& file);

/// Reads and parses the file at `path`; a file that cannot be read is a UserError naming it.
JsonValue readJsonFile(std::string const& path);

/// The whole content of the file at `path`; a UserError naming it when it cannot be read.
std::string readTextFile(std::string const& path);

} // namespace kiln
