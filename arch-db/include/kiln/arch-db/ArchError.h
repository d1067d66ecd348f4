// ArchError.h: the one error type of arch-db, for unknown names and malformed databases.
//
// An unknown target must never silently fall back to a default: every lookup that fails throws
// ArchError, whose message lists what is known and suggests the closest name ("did you mean").
// A malformed database (embedded or KILN_ARCH_FILE) names the file and the JSON location.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::arch {

/// A user-facing error from the architecture database.
class ArchError : public std::runtime_error {
public:
    /// What went wrong, for callers that react differently (tests, `kiln arch`).
    enum class Kind {
        UnknownTarget,
        UnknownInstruction,
        UnknownCapability,
        UnknownFact,
        MalformedDatabase,
    };

    ArchError(Kind kind, std::string message, std::string suggestion = {});

    /// What went wrong.
    Kind kind() const { return kind_; }
    /// The closest known name for an unknown-name error, or empty.
    std::string const& suggestion() const { return suggestion_; }

    /// An unknown-name error: "<what> '<name>' is unknown<context>; did you mean '<x>'? known
    /// <plural>: a, b, c". `known` need not be sorted.
    static ArchError unknownName(Kind kind, std::string_view what, std::string_view name,
                                 std::string_view context, std::span<std::string const> known);

private:
    Kind kind_;
    std::string suggestion_;
};

/// The known name closest to `name` by edit distance, if it is close enough to be a likely typo
/// (case-insensitive distance at most max(2, |name| / 3)); empty otherwise.
std::string closestName(std::string_view name, std::span<std::string const> known);

} // namespace kiln::arch
