#include "kiln/graph/Error.h"

namespace kiln {

std::string SourceLocation::str() const {
    if (file.empty())
        return line > 0 ? fmt::format("{}:{}", line, column) : std::string();
    if (line <= 0)
        return file;
    return fmt::format("{}:{}:{}", file, line, column);
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
    : std::runtime_error(render(message, location))
    , message_(std::move(message))
    , location_(std::move(location)) {}

InternalError::InternalError(std::string const& message, char const* file, int line)
    : std::logic_error(fmt::format("internal error: {} ({}:{})", message, file, line)) {}

} // namespace kiln
