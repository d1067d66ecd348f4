// ArchLibrary.h: the set of known targets, loaded once per process.
//
// The database is generated at build time from C++ definitions (arch-db/generator/) and
// embedded in the library. Setting KILN_ARCH_FILE to a JSON file of the same schema replaces
// it at run time, for a target Kiln does not ship or corrected figures. Loading happens on the
// first ArchLibrary::get (thread-safe); later lookups are one hash lookup.
#pragma once

#include "kiln/arch-db/Arch.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::arch {

/// The environment variable that names a replacement database file.
inline constexpr char const* kArchFileVariable = "KILN_ARCH_FILE";

/// A loaded architecture database: every target by name.
class ArchLibrary {
public:
    /// The target of this name from the process-wide library; ArchError listing the known
    /// targets (and the closest one) when unknown.
    static Arch const& get(std::string_view target);
    /// The process-wide library: loadFromEnvironment() on first use, then the same object.
    static ArchLibrary const& instance();

    /// Loads KILN_ARCH_FILE when it is set and not empty, else the embedded database. Not
    /// cached: tests use it to check the replacement.
    static ArchLibrary loadFromEnvironment();
    /// The database compiled into the library.
    static ArchLibrary embedded();
    /// Parses a database; `origin` (a file name) prefixes error messages. ArchError on any
    /// structural problem, with the JSON location.
    static ArchLibrary fromJson(std::string_view text, std::string origin);
    /// Reads and parses a database file.
    static ArchLibrary fromFile(std::string const& path);
    /// The embedded database text, exactly as the generator wrote it.
    static std::string_view embeddedJson();

    /// The target of this name; ArchError when unknown.
    Arch const& target(std::string_view name) const;
    /// The target of this name, or null.
    Arch const* find(std::string_view name) const;
    /// Every target, sorted by name.
    std::vector<Arch> const& targets() const { return targets_; }
    /// Every target name, sorted.
    std::vector<std::string> targetNames() const;
    /// Where the database came from: "embedded" or the file name.
    std::string const& origin() const { return origin_; }
    /// The targets Kiln compiles for when a command names none and no GPU decides, in the
    /// database's order ("default_targets"): kiln emit and export take the first, kiln tune
    /// without a GPU ranks for each. Empty when a replacement file names none.
    std::vector<std::string> const& defaultTargets() const { return defaultTargets_; }
    /// The first default target; ArchError (UnknownTarget) when the database names none.
    std::string const& defaultTarget() const;

private:
    ArchLibrary(std::vector<Arch> targets, std::vector<std::string> defaultTargets,
                std::string origin);

    struct NameHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const {
            return std::hash<std::string_view>{}(text);
        }
    };

    std::vector<Arch> targets_;
    std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>> index_;
    std::vector<std::string> defaultTargets_;
    std::string origin_;
};

} // namespace kiln::arch
