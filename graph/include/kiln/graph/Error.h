// Error.h: the two ways Kiln fails.
//
// A UserError is bad input: a message that points into the user's file (file:line:col and the
// JSON pointer of the offending value) and a non-zero exit. An InternalError is a bug in Kiln.
// They are different types so that tests can insist that bad input never reaches an internal
// error, and so that the CLI can tell the user which of the two happened.
#pragma once

#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln {

/// Where in the user's input something is: file, 1-based line and column, and JSON pointer.
struct SourceLocation {
    std::string file;
    int line = 0;
    int column = 0;
    std::string pointer;

    /// "file:line:col" (or the parts that are known).
    std::string str() const;
};

/// Bad input. what() is the whole message: "file:line:col: error: MESSAGE [at POINTER]".
class UserError : public std::runtime_error {
public:
    explicit UserError(std::string message, SourceLocation location = {});

    /// The message without the location.
    std::string const& message() const { return message_; }
    SourceLocation const& location() const { return location_; }

private:
    std::string message_;
    SourceLocation location_;
};

/// A bug in Kiln: an invariant that does not hold.
class InternalError : public std::logic_error {
public:
    InternalError(std::string const& message, char const* file, int line);
};

/// `text` as a message may show it: valid UTF-8 as it is (an 'Ω' stays an 'Ω'), every byte that
/// is not part of a valid UTF-8 character, and every control character but a line break or a
/// tab (messages may span lines), as \xNN. UserError
/// applies it to its message, so that input echoed in a message never prints broken bytes.
std::string printable(std::string_view text);

/// The whole UTF-8 character that starts at byte `at` of `text` (one byte where the bytes there
/// are not a valid character), for messages that quote "the character at" a position.
std::string_view characterAt(std::string_view text, std::size_t at);

/// Throws a UserError formatted with fmt.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
    throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

} // namespace kiln

/// Checks an invariant of Kiln itself; a failure is an InternalError, never a UserError.
#define KILN_ASSERT(condition, ...)                                                                \
    do {                                                                                           \
        if (!(condition))                                                                          \
            throw ::kiln::InternalError(std::string("assertion failed: " #condition)               \
                                            __VA_OPT__(+": " + ::fmt::format(__VA_ARGS__)),        \
                                        __FILE__, __LINE__);                                       \
    } while (false)
