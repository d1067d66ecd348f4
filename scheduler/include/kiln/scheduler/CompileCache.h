// CompileCache.h: compiled candidates kept on disk by the hash of what made them.
//
// Compiling a candidate (lowering, emitting, assembling) costs far more than measuring it, and a
// sweep run again, resumed, or run with another strategy proposes many points compiled before.
// The cache stores, under a key of everything the compile depends on (the caller's parts: the
// request, the pipeline's hash, Kiln's version...), the files the compile wrote and what the
// compiler answered, so that any later process restores them instead of compiling again.
//
// Layout: FOLDER/KEY/entry.json (the answer, and per stored file its suffix, size and hash)
// and FOLDER/KEY/file-N (the files). An entry appears by one rename of a finished temporary
// folder, so readers never see half of one, and concurrent writers of the same key (16 compile
// processes of one sweep, or two sweeps) leave one whole entry. An entry whose files are missing
// or differ from what entry.json says is treated as absent and replaced by the next store.
//
// Entries are never evicted automatically: the cache grows by one entry per distinct compile.
// bytes() says how large it is and clear() empties it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::scheduler {

class CompileCache {
public:
    /// The cache in `folder` (created on first store).
    explicit CompileCache(std::filesystem::path folder);

    /// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln/compiled, else $HOME/.cache/kiln/compiled;
    /// empty when none can be determined or KILN_CACHE_DIR is "off".
    static std::optional<std::filesystem::path> defaultFolder();

    /// A key (32 hex digits: the 128-bit FNV-1a hash) of `parts`, each prefixed with its length
    /// so that ("ab", "c") and ("a", "bc") differ. The same in every process and build.
    static std::string key(std::vector<std::string_view> const& parts);

    /// When `key` is stored: writes each stored file to `artifact + suffix`, removes
    /// `artifact + suffix` for each suffix the store asked for but found no file, and returns
    /// what the compiler answered. Otherwise (also for a damaged entry, or when the files cannot
    /// be written) nothing.
    std::optional<nlohmann::json> restore(std::string const& key,
                                          std::string const& artifact) const;

    /// Stores, under `key`, the files `artifact + suffix` that exist, with `answer`. True when
    /// the entry is in the cache afterwards (stored by this call or by a concurrent one); false
    /// when it cannot be stored (disk full, read-only folder), which is not an error: the caller
    /// only compiles again next time. Never throws.
    bool store(std::string const& key, std::string const& artifact,
               std::vector<std::string> const& suffixes, nlohmann::json const& answer) const;

    /// The bytes of the cache's entries (and of temporary folders of stores in progress or
    /// killed); 0 when the folder does not exist.
    std::uintmax_t bytes() const;

    /// Removes every entry and temporary folder; leaves other files in the folder alone.
    void clear() const;

    std::filesystem::path const& folder() const { return folder_; }

private:
    std::filesystem::path folder_;
};

} // namespace kiln::scheduler
