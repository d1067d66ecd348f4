// JsonText.h: small pieces of JSON text handling shared by the parser and the reader
// (private to graph/src): how bytes are shown in messages, \u escapes and their UTF-8.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::json {

/// A byte as messages show it: 'x' when printable, else its hex value.
inline std::string describeByte(char c) {
    auto const u = static_cast<unsigned char>(c);
    if (u >= 0x21 && u < 0x7f)
        return fmt::format("'{}'", c);
    if (c == ' ')
        return "a space";
    return fmt::format("byte 0x{:02X}", u);
}

/// `s`, cut to `limit` bytes with "..." when longer, for quoting user text in messages.
inline std::string shorten(std::string_view s, std::size_t limit = 40) {
    if (s.size() <= limit)
        return std::string(s);
    return std::string(s.substr(0, limit)) + "...";
}

/// Appends code point `code` to `out` in UTF-8.
inline void appendUtf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

/// How many bytes UTF-8 takes for `code`.
inline int utf8Length(std::uint32_t code) {
    return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/// The value of 4 hex digits at text[at], if they are 4 hex digits.
inline std::optional<std::uint32_t> hex4(std::string_view text, std::size_t at) {
    if (at + 4 > text.size())
        return std::nullopt;
    std::uint32_t value = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
        char const c = text[k];
        if (!std::isxdigit(static_cast<unsigned char>(c)))
            return std::nullopt;
        int const digit =
            c <= '9' ? c - '0' : (std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
        value = value * 16 + static_cast<std::uint32_t>(digit);
    }
    return value;
}

/// UTF-16 surrogates, which \u escapes may pair up.
inline bool isHighSurrogate(std::uint32_t c) {
    return c >= 0xD800 && c <= 0xDBFF;
}
inline bool isLowSurrogate(std::uint32_t c) {
    return c >= 0xDC00 && c <= 0xDFFF;
}

} // namespace kiln::json
