#include "kiln/scheduler/CompileCache.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <set>
#include <unistd.h>

namespace kiln::scheduler {

namespace fs = std::filesystem;

namespace {

constexpr int kFormat = 1; // entry.json's "version"; another value is an absent entry

// FNV-1a with 128-bit state (offset basis and prime from the FNV reference, prime 2^88 + 0x13B),
// the multiplication written out on two 64-bit halves.
class Fnv128 {
public:
    void add(std::string_view bytes) {
        for (unsigned char c : bytes) {
            lo_ ^= c;
            std::uint64_t const carry =
                ((lo_ >> 32) * kPrimeLow + (((lo_ & 0xffffffffu) * kPrimeLow) >> 32)) >> 32;
            hi_ = hi_ * kPrimeLow + carry + (lo_ << 24);
            lo_ *= kPrimeLow;
        }
    }
    std::string hex() const { return fmt::format("{:016x}{:016x}", hi_, lo_); }

private:
    static constexpr std::uint64_t kPrimeLow = 0x13B;
    std::uint64_t hi_ = 0x6c62272e07bb0142ull, lo_ = 0x62b821756295c58dull;
};

std::string hashOf(std::string_view bytes) {
    Fnv128 h;
    h.add(bytes);
    return h.hex();
}

// A key names a folder: only 32 lowercase hex digits, so no key reaches outside the cache.
bool isKey(std::string_view text) {
    return text.size() == 32 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Top-level names the cache owns: entries, and the temporary folders of stores.
bool isOurs(std::string const& name) {
    return isKey(name) || name.starts_with(".tmp-") || name.starts_with(".trash-");
}

std::optional<std::string> readBytes(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return std::nullopt;
    return bytes;
}

bool writeBytes(fs::path const& path, std::string const& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    return !out.fail();
}

std::string storedName(std::size_t index) {
    return fmt::format("file-{}", index);
}

struct StoredFile {
    std::string suffix, bytes;
};

struct Entry {
    nlohmann::json answer;
    std::vector<StoredFile> files;
    std::vector<std::string> absent; ///< suffixes the store asked for and found no file
};

// The entry in `dir` with every file read and checked against its size and hash; nothing when
// anything is missing, unreadable or different (a killed writer's, a crash's, a hand's damage).
std::optional<Entry> readEntry(fs::path const& dir, std::string const& key) {
    try {
        auto const text = readBytes(dir / "entry.json");
        if (!text)
            return std::nullopt;
        auto const json = nlohmann::json::parse(*text, nullptr, false);
        if (!json.is_object() || json.value("version", 0) != kFormat ||
            json.value("key", "") != key || !json.contains("answer") || !json.contains("files") ||
            !json["files"].is_array() || !json.contains("absent") || !json["absent"].is_array())
            return std::nullopt;
        Entry entry;
        entry.answer = json["answer"];
        auto const& files = json["files"];
        for (std::size_t i = 0; i < files.size(); ++i) {
            auto const& f = files[i];
            if (f.value("name", "") != storedName(i))
                return std::nullopt;
            auto bytes = readBytes(dir / storedName(i));
            if (!bytes || bytes->size() != f.at("bytes").get<std::size_t>() ||
                hashOf(*bytes) != f.at("hash").get<std::string>())
                return std::nullopt;
            entry.files.push_back({f.at("suffix").get<std::string>(), std::move(*bytes)});
        }
        for (auto const& suffix : json["absent"])
            entry.absent.push_back(suffix.get<std::string>());
        return entry;
    } catch (std::exception const&) {
        return std::nullopt; // a field of the wrong type, or no memory: not an entry
    }
}

// A name no other store (thread, process, or host sharing the folder) is using now.
std::string temporaryName(std::string_view kind, std::string const& key) {
    static std::atomic<std::uint64_t> counter{0};
    auto const now = std::chrono::steady_clock::now().time_since_epoch().count();
    return fmt::format(".{}-{}-{}-{}-{:x}", kind, key, ::getpid(), counter++,
                       static_cast<std::uint64_t>(now));
}

} // namespace

CompileCache::CompileCache(fs::path folder)
    : folder_(std::move(folder)) {}

std::optional<fs::path> CompileCache::defaultFolder() {
    auto const variable = [](char const* name) -> std::string {
        char const* value = std::getenv(name);
        return value ? value : "";
    };
    std::string const explicitFolder = variable("KILN_CACHE_DIR");
    if (explicitFolder == "off")
        return std::nullopt;
    std::error_code ec;
    if (!explicitFolder.empty()) {
        fs::path const folder = fs::absolute(explicitFolder, ec);
        return ec ? std::nullopt : std::optional(folder);
    }
    // The XDG base directory specification: a relative path in the variable is ignored.
    std::string const xdg = variable("XDG_CACHE_HOME");
    if (!xdg.empty() && fs::path(xdg).is_absolute())
        return fs::path(xdg) / "kiln" / "compiled";
    std::string const home = variable("HOME");
    if (!home.empty())
        return fs::path(home) / ".cache" / "kiln" / "compiled";
    return std::nullopt;
}

std::string CompileCache::key(std::vector<std::string_view> const& parts) {
    Fnv128 h;
    for (auto const part : parts) {
        h.add(fmt::format("{}:", part.size()));
        h.add(part);
    }
    return h.hex();
}

std::optional<nlohmann::json> CompileCache::restore(std::string const& key,
                                                    std::string const& artifact) const {
    if (!isKey(key))
        return std::nullopt;
    std::optional<Entry> const entry = readEntry(folder_ / key, key);
    if (!entry)
        return std::nullopt;
    std::error_code ec;
    for (auto const& file : entry->files) {
        fs::path const path = artifact + file.suffix;
        if (path.has_parent_path())
            fs::create_directories(path.parent_path(), ec);
        if (!writeBytes(path, file.bytes))
            return std::nullopt;
    }
    // What the compile did not write must not be left over from another candidate either.
    for (auto const& suffix : entry->absent)
        fs::remove(artifact + suffix, ec);
    return entry->answer;
}

bool CompileCache::store(std::string const& key, std::string const& artifact,
                         std::vector<std::string> const& suffixes,
                         nlohmann::json const& answer) const {
    if (!isKey(key))
        return false;
    fs::path const entryFolder = folder_ / key;
    fs::path temporary;
    std::error_code ec;
    try {
        if (readEntry(entryFolder, key))
            return true;
        fs::create_directories(folder_, ec);
        temporary = folder_ / temporaryName("tmp", key);
        if (ec || !fs::create_directory(temporary, ec) || ec)
            return false;

        nlohmann::json entry = {{"version", kFormat},
                                {"key", key},
                                {"answer", answer},
                                {"files", nlohmann::json::array()},
                                {"absent", nlohmann::json::array()}};
        std::set<std::string> seen;
        for (auto const& suffix : suffixes) {
            if (!seen.insert(suffix).second)
                continue;
            fs::path const source = artifact + suffix;
            if (!fs::is_regular_file(source, ec)) {
                entry["absent"].push_back(suffix);
                continue;
            }
            auto const bytes = readBytes(source);
            std::string const name = storedName(entry["files"].size());
            if (!bytes || !writeBytes(temporary / name, *bytes)) {
                fs::remove_all(temporary, ec);
                return false;
            }
            entry["files"].push_back({{"suffix", suffix},
                                      {"name", name},
                                      {"bytes", bytes->size()},
                                      {"hash", hashOf(*bytes)}});
        }
        if (!writeBytes(temporary / "entry.json", entry.dump())) {
            fs::remove_all(temporary, ec);
            return false;
        }

        // One rename makes the entry appear whole. It fails when the entry exists: stored by
        // a concurrent store (a lost race, which is success), or damaged, then moved aside and
        // replaced.
        fs::rename(temporary, entryFolder, ec);
        if (!ec)
            return true;
        if (!readEntry(entryFolder, key)) {
            fs::path const trash = folder_ / temporaryName("trash", key);
            fs::rename(entryFolder, trash, ec);
            fs::rename(temporary, entryFolder, ec);
            fs::remove_all(trash, ec);
        }
        fs::remove_all(temporary, ec);
        return readEntry(entryFolder, key).has_value();
    } catch (std::exception const&) {
        if (!temporary.empty())
            fs::remove_all(temporary, ec);
        return false;
    }
}

std::uintmax_t CompileCache::bytes() const {
    std::uintmax_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator top(folder_, ec), end; !ec && top != end; top.increment(ec)) {
        if (!isOurs(top->path().filename().string()))
            continue;
        std::error_code inner;
        for (fs::recursive_directory_iterator it(top->path(), inner), last; !inner && it != last;
             it.increment(inner)) {
            std::error_code stat;
            if (it->is_regular_file(stat))
                if (std::uintmax_t const size = it->file_size(stat); !stat)
                    total += size;
        }
    }
    return total;
}

void CompileCache::clear() const {
    std::error_code ec;
    std::vector<fs::path> ours;
    for (fs::directory_iterator top(folder_, ec), end; !ec && top != end; top.increment(ec))
        if (isOurs(top->path().filename().string()))
            ours.push_back(top->path());
    for (auto const& path : ours)
        fs::remove_all(path, ec);
}

} // namespace kiln::scheduler
