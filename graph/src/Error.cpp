#include "kiln/graph/Error.h"

#include <algorithm>

namespace kiln {

std::string SourceLocation::str() const {
    if (file.empty())
        return line > 0 ? fmt::format("{}:{}", line, column) : std::string();
    if (line <= 0)
        return file;
    return fmt::format("{}:{}:{}", file, line, column);
}

namespace {

// The length of the valid UTF-8 character at `at`, or 0 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
std::size_t utf8Length(std::string_view text, std::size_t at) {
    auto const byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
    unsigned char const lead = byte(0);
    std::size_t const length = lead < 0x80                    ? 1
                               : lead >= 0xC2 && lead <= 0xDF ? 2
                               : lead >= 0xE0 && lead <= 0xEF ? 3
                               : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                              : 0;
    if (length == 0 || at + length > text.size())
        return 0;
    for (std::size_t k = 1; k < length; ++k)
        if ((byte(k) & 0xC0) != 0x80)
            return 0;
    if (length == 3 && ((lead == 0xE0 && byte(1) < 0xA0) || (lead == 0xED && byte(1) > 0x9F)))
        return 0;
    if (length == 4 && ((lead == 0xF0 && byte(1) < 0x90) || (lead == 0xF4 && byte(1) > 0x8F)))
        return 0;
    return length;
}

} // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        std::size_t const length = utf8Length(text, at);
        auto const byte = static_cast<unsigned char>(text[at]);
        bool const control = byte == 0x7F || (byte < 0x20 && byte != '\n' && byte != '\t');
        if (length == 0 || (length == 1 && control)) {
            out += fmt::format("\\x{:02X}", byte);
            ++at;
        } else {
            out.append(text.substr(at, length));
            at += length;
        }
    }
    return out;
}

std::string_view characterAt(std::string_view text, std::size_t at) {
    if (at >= text.size())
        return {};
    return text.substr(at, std::max<std::size_t>(utf8Length(text, at), 1));
}

namespace {
std::string render(std::string const& message, SourceLocation const& where) {
    std::string out;
    if (std::string const at = where.str(); !at.empty())
        out = at + ": ";
    out += "error: " + message;
    if (!where.pointer.empty())
        out += " [at " + where.pointer + "]";
    return out;
}
} // namespace

UserError::UserError(std::string message, SourceLocation location)
    : std::runtime_error(render(printable(message), {printable(location.file), location.line,
                                                     location.column, printable(location.pointer)}))
    , message_(printable(message))
    , location_(std::move(location)) {}

InternalError::InternalError(std::string const& message, char const* file, int line)
    : std::logic_error(fmt::format("internal error: {} ({}:{})", message, file, line)) {}

} // namespace kiln
