// Status.h: errors as values for the runtime (Error, Status, Expected<T>).
//
// Every runtime call that can fail returns a Status or an Expected<T>; nothing in the launcher
// crashes or only logs. An Error carries a code (for callers that react: skip a test when there
// is no driver) and a complete message naming the call, the driver's error name and string, the
// kernel and the target where they apply. Reading the value of an Expected that holds an error
// is a bug in the caller and throws BadExpectedAccess with the error's message.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kiln::runtime {

/// What went wrong, coarsely; the message says the rest.
enum class ErrorCode : std::uint8_t {
    NoDriver,          ///< the platform's driver library is missing or unusable
    NoDevice,          ///< the driver works but there is no device (or not that ordinal)
    DriverError,       ///< a driver call failed
    JitFailed,         ///< PTX (or other device code) failed to compile at load
    InvalidManifest,   ///< a kernel manifest is malformed
    ArgumentMismatch,  ///< launch arguments do not match the kernel's parameters
    LaunchOutOfLimits, ///< grid, block or shared memory beyond the device's or kernel's limits
    InvalidArgument,   ///< a caller passed something unusable (sizes, null memory)
    NotFound,          ///< a file or a kernel entry that does not exist
    Unsupported,       ///< a platform or feature this build or driver does not have
};

/// The code's name ("NoDriver", ...).
std::string_view name(ErrorCode code);

/// One failure: a code and a complete, user-facing message.
class Error {
public:
    /// An error with its message; the message is never truncated.
    Error(ErrorCode code, std::string message)
        : code_(code)
        , message_(std::move(message)) {}

    /// What went wrong, coarsely.
    ErrorCode code() const { return code_; }
    /// The whole message.
    std::string const& message() const { return message_; }
    /// The same error with "context: " in front of its message.
    Error withContext(std::string_view context) const;

private:
    ErrorCode code_;
    std::string message_;
};

/// Thrown by Expected::value() on an error: a bug in the caller, who should have checked.
class BadExpectedAccess : public std::logic_error {
public:
    explicit BadExpectedAccess(Error const& error)
        : std::logic_error("value() of an Expected holding an error: " + error.message()) {}
};

/// Success, or one Error.
class [[nodiscard]] Status {
public:
    /// Success.
    Status() = default;
    /// The failure `error`.
    Status(Error error)
        : error_(std::move(error)) {} // NOLINT: implicit by design

    /// Whether this is success.
    bool ok() const { return !error_.has_value(); }
    /// Whether this is success.
    explicit operator bool() const { return ok(); }
    /// The error; precondition: !ok().
    Error const& error() const { return *error_; }
    /// The error's message, or "ok".
    std::string message() const { return ok() ? std::string("ok") : error_->message(); }

private:
    std::optional<Error> error_;
};

/// A value of type T, or an Error.
template <class T>
class [[nodiscard]] Expected {
public:
    /// Holds a value.
    Expected(T value)
        : state_(std::in_place_index<0>, std::move(value)) {} // NOLINT
    /// Holds an error.
    Expected(Error error)
        : state_(std::in_place_index<1>, std::move(error)) {} // NOLINT

    /// Whether a value is held.
    bool ok() const { return state_.index() == 0; }
    /// Whether a value is held.
    explicit operator bool() const { return ok(); }

    /// The value; throws BadExpectedAccess when an error is held.
    T& value() & { return check(), std::get<0>(state_); }
    /// The value; throws BadExpectedAccess when an error is held.
    T const& value() const& { return check(), std::get<0>(state_); }
    /// The value, moved out; throws BadExpectedAccess when an error is held.
    T&& value() && { return check(), std::get<0>(std::move(state_)); }
    T& operator*() & { return value(); }
    T const& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    T const* operator->() const { return &value(); }

    /// The error; precondition: !ok().
    Error const& error() const { return std::get<1>(state_); }
    /// Success, or the error.
    Status status() const { return ok() ? Status() : Status(error()); }

private:
    void check() const {
        if (!ok())
            throw BadExpectedAccess(error());
    }
    std::variant<T, Error> state_;
};

} // namespace kiln::runtime

#define KILN_RUNTIME_CONCAT_INNER(a, b) a##b
#define KILN_RUNTIME_CONCAT(a, b) KILN_RUNTIME_CONCAT_INNER(a, b)

/// Returns the error of a Status-valued expression from the enclosing function.
#define KILN_RETURN_IF_ERROR(expr)                                                                 \
    do {                                                                                           \
        if (::kiln::runtime::Status kilnStatus_ = (expr); !kilnStatus_.ok())                       \
            return kilnStatus_.error();                                                            \
    } while (false)

/// `KILN_ASSIGN_OR_RETURN(auto x, f())`: declares x from f()'s value, or returns its error.
#define KILN_ASSIGN_OR_RETURN(lhs, expr)                                                           \
    KILN_ASSIGN_OR_RETURN_IMPL(KILN_RUNTIME_CONCAT(kilnExpected_, __LINE__), lhs, expr)
#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                                                 \
    auto tmp = (expr);                                                                             \
    if (!tmp.ok())                                                                                 \
        return tmp.error();                                                                        \
    lhs = std::move(tmp).value()
