// The JSON parser behind parseJson() (SourceJson.h): strict RFC 8259 JSON, recording where
// each value and key starts, with an exact line and column for the first syntax error.
#include "JsonText.h"
#include "kiln/graph/SourceJson.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace kiln {

namespace {

using namespace json;

class Parser {
public:
    Parser(std::string_view text, std::string const& file)
        : text_(text)
        , file_(file) {}

    OrderedJson parseDocument() {
        if (text_.substr(0, 3) == "\xEF\xBB\xBF") // a UTF-8 byte order mark
            pos_ = lineStart_ = 3;
        skipSpace("");
        if (atEnd())
            error(here(),
                  text_.empty() ? "the file is empty; expected a JSON value"
                                : "the file holds only white space; expected a JSON value",
                  "");
        OrderedJson root = parseValue("", 0);
        skipSpace("");
        if (!atEnd())
            error(here(), fmt::format("unexpected {} after the JSON value", describeByte(peek())),
                  "");
        return root;
    }

    std::unordered_map<std::string, SourcePosition> values;
    std::unordered_map<std::string, SourcePosition> keys;

private:
    bool atEnd() const { return pos_ >= text_.size(); }
    char peek() const { return text_[pos_]; }
    SourcePosition here() const { return {line_, static_cast<int>(pos_ - lineStart_ + 1), pos_}; }

    [[noreturn]] void error(SourcePosition at, std::string message,
                            std::string const& pointer) const {
        throw UserError(std::move(message), SourceLocation{file_, at.line, at.column, pointer});
    }

    void skipSpace(std::string const& pointer) {
        while (!atEnd()) {
            char const c = peek();
            if (c == '\n') {
                ++line_;
                lineStart_ = ++pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == '/' && pos_ + 1 < text_.size() &&
                       (text_[pos_ + 1] == '/' || text_[pos_ + 1] == '*')) {
                error(here(), "comments are not allowed in JSON", pointer);
            } else {
                return;
            }
        }
    }

    OrderedJson parseValue(std::string const& pointer, int depth) {
        SourcePosition const start = here();
        values[pointer] = start;
        char const c = peek();
        switch (c) {
        case '{':
            return parseObject(pointer, depth + 1);
        case '[':
            return parseArray(pointer, depth + 1);
        case '"':
            return parseString(pointer);
        case '\'':
            error(start, "strings need double quotes, not single quotes", pointer);
        case '}':
        case ']':
        case ',':
        case ':':
            error(start, fmt::format("unexpected '{}'; expected a value", c), pointer);
        default:
            break;
        }
        if (c == '-' || std::isdigit(static_cast<unsigned char>(c)))
            return parseNumber(pointer);
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
            return parseWord(pointer);
        error(start, fmt::format("unexpected {}; expected a value", describeByte(c)), pointer);
    }

    void checkDepth(SourcePosition at, int depth, std::string const& pointer) const {
        if (depth > kMaxJsonDepth)
            error(at, fmt::format("arrays and objects nest deeper than {} levels", kMaxJsonDepth),
                  pointer);
    }

    [[noreturn]] void unterminated(std::string_view what, SourcePosition open,
                                   std::string const& pointer) const {
        error(here(),
              fmt::format("unexpected end of file in the {} that starts at line {}, column {}",
                          what, open.line, open.column),
              pointer);
    }

    OrderedJson parseObject(std::string const& pointer, int depth) {
        SourcePosition const open = here();
        checkDepth(open, depth, pointer);
        ++pos_;
        OrderedJson object = OrderedJson::object();
        auto& members = object.get_ref<OrderedJson::object_t&>();
        std::unordered_map<std::string, SourcePosition> seen;
        skipSpace(pointer);
        if (!atEnd() && peek() == '}') {
            ++pos_;
            return object;
        }
        for (;;) {
            skipSpace(pointer);
            if (atEnd())
                unterminated("object", open, pointer);
            if (peek() != '"') {
                if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_' ||
                    peek() == '\'')
                    error(here(), "keys need double quotes", pointer);
                error(
                    here(),
                    fmt::format("expected a key in double quotes, found {}", describeByte(peek())),
                    pointer);
            }
            SourcePosition const keyAt = here();
            std::string key = parseString(pointer);
            std::string member = appendPointer(pointer, key);
            if (auto it = seen.find(key); it != seen.end())
                error(keyAt,
                      fmt::format("duplicate key '{}' (first at line {}, column {})", shorten(key),
                                  it->second.line, it->second.column),
                      member);
            seen.emplace(key, keyAt);
            keys[member] = keyAt;
            skipSpace(pointer);
            if (atEnd())
                unterminated("object", open, pointer);
            if (peek() != ':')
                error(here(),
                      fmt::format("expected ':' after the key '{}', found {}", shorten(key),
                                  describeByte(peek())),
                      member);
            ++pos_;
            skipSpace(member);
            if (atEnd())
                unterminated("object", open, pointer);
            OrderedJson value = parseValue(member, depth);
            members.emplace_back(std::move(key), std::move(value));
            skipSpace(pointer);
            if (atEnd())
                unterminated("object", open, pointer);
            if (peek() == '}') {
                ++pos_;
                return object;
            }
            if (peek() != ',')
                error(here(),
                      fmt::format("expected ',' or '}}' after a member, found {}",
                                  describeByte(peek())),
                      pointer);
            SourcePosition const comma = here();
            ++pos_;
            skipSpace(pointer);
            if (!atEnd() && peek() == '}')
                error(comma, "trailing comma before '}'", pointer);
        }
    }

    OrderedJson parseArray(std::string const& pointer, int depth) {
        SourcePosition const open = here();
        checkDepth(open, depth, pointer);
        ++pos_;
        OrderedJson array = OrderedJson::array();
        auto& elements = array.get_ref<OrderedJson::array_t&>();
        skipSpace(pointer);
        if (!atEnd() && peek() == ']') {
            ++pos_;
            return array;
        }
        for (;;) {
            skipSpace(pointer);
            if (atEnd())
                unterminated("array", open, pointer);
            std::string element = appendPointer(pointer, std::to_string(elements.size()));
            elements.push_back(parseValue(element, depth));
            skipSpace(pointer);
            if (atEnd())
                unterminated("array", open, pointer);
            if (peek() == ']') {
                ++pos_;
                return array;
            }
            if (peek() != ',')
                error(here(),
                      fmt::format("expected ',' or ']' after an element, found {}",
                                  describeByte(peek())),
                      pointer);
            SourcePosition const comma = here();
            ++pos_;
            skipSpace(pointer);
            if (!atEnd() && peek() == ']')
                error(comma, "trailing comma before ']'", pointer);
        }
    }

    std::string parseString(std::string const& pointer) {
        SourcePosition const open = here();
        ++pos_;
        std::string out;
        for (;;) {
            if (atEnd())
                error(open, "unterminated string", pointer);
            char const c = peek();
            auto const u = static_cast<unsigned char>(c);
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (c == '\\') {
                out += parseEscape(pointer);
                continue;
            }
            if (c == '\n' || c == '\r')
                error(here(), "line break inside a string (a missing closing quote?)", pointer);
            if (u < 0x20)
                error(here(),
                      fmt::format(
                          "control character U+{:04X} inside a string; write it as an escape", u),
                      pointer);
            out += c;
            ++pos_;
        }
    }

    std::string parseEscape(std::string const& pointer) {
        SourcePosition const at = here();
        ++pos_;
        if (atEnd())
            error(at, "unterminated string", pointer);
        char const c = peek();
        ++pos_;
        switch (c) {
        case '"':
            return "\"";
        case '\\':
            return "\\";
        case '/':
            return "/";
        case 'b':
            return "\b";
        case 'f':
            return "\f";
        case 'n':
            return "\n";
        case 'r':
            return "\r";
        case 't':
            return "\t";
        case 'u':
            break;
        default:
            error(
                at,
                fmt::format(
                    "invalid escape '\\{}'; JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
                    std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c)
                                                                : describeByte(c)),
                pointer);
        }
        auto code = hex4(text_, pos_);
        if (!code)
            error(at, "'\\u' needs four hexadecimal digits", pointer);
        pos_ += 4;
        if (isLowSurrogate(*code))
            error(
                at,
                fmt::format("'\\u{:04X}' is the second half of a surrogate pair without the first",
                            *code),
                pointer);
        if (isHighSurrogate(*code)) {
            auto low = text_.substr(pos_, 2) == "\\u" ? hex4(text_, pos_ + 2) : std::nullopt;
            if (!low || !isLowSurrogate(*low))
                error(at,
                      fmt::format("'\\u{:04X}' starts a surrogate pair that has no second half",
                                  *code),
                      pointer);
            pos_ += 6;
            *code = 0x10000 + ((*code - 0xD800) << 10) + (*low - 0xDC00);
        }
        std::string out;
        appendUtf8(out, *code);
        return out;
    }

    OrderedJson parseNumber(std::string const& pointer) {
        SourcePosition const start = here();
        auto const digit = [&] {
            return !atEnd() && std::isdigit(static_cast<unsigned char>(peek()));
        };
        auto const digits = [&](std::string_view after) {
            if (!digit())
                error(here(), fmt::format("expected a digit after {}", after), pointer);
            while (digit())
                ++pos_;
        };
        bool integral = true;
        if (peek() == '-')
            ++pos_;
        if (!atEnd() && peek() == '0') {
            ++pos_;
            if (digit())
                error(start, "numbers cannot start with 0 (no octal, no leading zeros)", pointer);
        } else {
            digits("'-'");
        }
        if (!atEnd() && peek() == '.') {
            integral = false;
            ++pos_;
            digits("'.'");
        }
        if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
            integral = false;
            ++pos_;
            if (!atEnd() && (peek() == '+' || peek() == '-'))
                ++pos_;
            digits("the exponent's 'e'");
        }
        std::string_view const token = text_.substr(start.offset, pos_ - start.offset);
        char const* const first = token.data();
        char const* const last = token.data() + token.size();
        if (integral) {
            std::int64_t value = 0;
            auto [end, ec] = std::from_chars(first, last, value);
            if (ec != std::errc() || end != last)
                error(start, fmt::format("integer {} does not fit in 64 bits", shorten(token)),
                      pointer);
            return OrderedJson(value);
        }
        double value = 0;
        auto [end, ec] = std::from_chars(first, last, value);
        if (ec == std::errc::result_out_of_range) {
            // Too large, or so small that it rounds to zero: strtod tells which.
            value = std::strtod(std::string(token).c_str(), nullptr);
            if (std::isinf(value))
                error(start, fmt::format("number {} is too large for a double", shorten(token)),
                      pointer);
        } else if (ec != std::errc() || end != last) {
            error(start, fmt::format("cannot read the number {}", shorten(token)), pointer);
        }
        return OrderedJson(value);
    }

    OrderedJson parseWord(std::string const& pointer) {
        SourcePosition const start = here();
        while (!atEnd() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_'))
            ++pos_;
        std::string_view const word = text_.substr(start.offset, pos_ - start.offset);
        if (word == "true")
            return OrderedJson(true);
        if (word == "false")
            return OrderedJson(false);
        if (word == "null")
            return OrderedJson(nullptr);
        std::string_view const hint = word == "NaN" || word == "Infinity"
                                          ? "; JSON has no NaN or Infinity"
                                          : "; strings need double quotes";
        error(start, fmt::format("unexpected word '{}'{}", shorten(word), hint), pointer);
    }

    std::string_view text_;
    std::string const& file_;
    std::size_t pos_ = 0;
    int line_ = 1;
    std::size_t lineStart_ = 0;
};

} // namespace

JsonValue parseJson(std::string_view text, std::string const& file) {
    Parser parser(text, file);
    OrderedJson root = parser.parseDocument();
    auto document = std::make_shared<SourceDocument const>(
        file, std::string(text), std::move(root), std::move(parser.values), std::move(parser.keys));
    return JsonValue(document, "", &document->root());
}

} // namespace kiln
