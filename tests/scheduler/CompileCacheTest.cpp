// The compiled-candidate cache: what is stored comes back byte for byte with the compiler's
// answer, a damaged entry is a miss (and the next store replaces it), keys are stable and
// length-prefixed, many threads storing one key at once leave one whole entry, and the folder
// follows KILN_CACHE_DIR, XDG_CACHE_HOME and HOME.
#include "kiln/scheduler/CompileCache.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <thread>
#include <unistd.h>

using namespace kiln::scheduler;
namespace fs = std::filesystem;

namespace {

fs::path freshFolder(std::string const& name) {
    fs::path const p =
        fs::temp_directory_path() / fmt::format("kiln-cache-{}-{}", name, ::getpid());
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

void writeText(fs::path const& path, std::string const& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string readText(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What a compile of one candidate leaves: the lowered graph and PTX (with bytes text never has).
std::string const kGraph = R"({"graph": "lowered", "nodes": 42})";
std::string const kPtx = std::string(".version 8.0\n.target sm_90a\n") + '\0' + "\xff end";
nlohmann::json const kAnswer = {{"ok", true}, {"extra", {{"registers", 40}, {"emitted", 1}}}};
std::vector<std::string> const kSuffixes = {".graph.json", ".ptx", ".cubin"};

std::string compiled(fs::path const& folder, std::string const& name) {
    std::string const artifact = (folder / name).string();
    writeText(artifact + ".graph.json", kGraph);
    writeText(artifact + ".ptx", kPtx);
    return artifact;
}

std::vector<std::string> entriesIn(fs::path const& folder) {
    std::vector<std::string> names;
    for (auto const& e : fs::directory_iterator(folder))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

TEST(CompileCache, StoreThenRestoreGivesTheSameBytesAndAnswer) {
    fs::path const dir = freshFolder("roundtrip");
    CompileCache const cache(dir / "cache");
    std::string const key = CompileCache::key({"request", "pipeline 6a8d", "0.1.0"});
    EXPECT_FALSE(cache.restore(key, (dir / "nothing").string()));

    std::string const artifact = compiled(dir, "candidate-3");
    ASSERT_TRUE(cache.store(key, artifact, kSuffixes, kAnswer));
    EXPECT_EQ(entriesIn(dir / "cache"), std::vector<std::string>{key});

    // Another sweep's candidate number, where an older candidate left a .cubin: the compile
    // wrote none, so the restored candidate has none either.
    fs::create_directories(dir / "later");
    std::string const later = (dir / "later" / "candidate-0").string();
    writeText(later + ".cubin", "an older candidate's cubin");
    auto const answer = cache.restore(key, later);
    ASSERT_TRUE(answer);
    EXPECT_EQ(*answer, kAnswer);
    EXPECT_EQ(readText(later + ".graph.json"), kGraph);
    EXPECT_EQ(readText(later + ".ptx"), kPtx);
    EXPECT_FALSE(fs::exists(later + ".cubin"));

    // The entry holds both files and its entry.json; clear() empties the cache but leaves what
    // is not its own.
    EXPECT_GT(cache.bytes(), kGraph.size() + kPtx.size());
    EXPECT_LT(cache.bytes(), kGraph.size() + kPtx.size() + 1000);
    writeText(dir / "cache" / "README", "not an entry");
    cache.clear();
    EXPECT_EQ(cache.bytes(), 0u);
    EXPECT_FALSE(cache.restore(key, later));
    EXPECT_EQ(entriesIn(dir / "cache"), std::vector<std::string>{"README"});
    EXPECT_EQ(CompileCache(dir / "never-made").bytes(), 0u);
    fs::remove_all(dir);
}

TEST(CompileCache, AMissingOrChangedFileMakesTheEntryAbsent) {
    fs::path const dir = freshFolder("damage");
    CompileCache const cache(dir / "cache");
    std::string const artifact = compiled(dir, "candidate-0");
    std::string const key = CompileCache::key({"damaged"});
    std::string const target = (dir / "restored").string();
    fs::path const entry = dir / "cache" / key;

    ASSERT_TRUE(cache.store(key, artifact, kSuffixes, kAnswer));
    fs::remove(entry / "file-1"); // the PTX
    EXPECT_FALSE(cache.restore(key, target));
    EXPECT_FALSE(fs::exists(target + ".graph.json")) << "nothing is restored from a damaged entry";

    // The next store replaces the damaged entry.
    ASSERT_TRUE(cache.store(key, artifact, kSuffixes, kAnswer));
    ASSERT_TRUE(cache.restore(key, target));
    EXPECT_EQ(readText(target + ".ptx"), kPtx);

    // Same size, other bytes (a torn write): absent too; so is an entry without entry.json.
    std::string changed = kGraph;
    changed[3] = 'G';
    writeText(entry / "file-0", changed);
    EXPECT_FALSE(cache.restore(key, target));
    ASSERT_TRUE(cache.store(key, artifact, kSuffixes, kAnswer));
    fs::remove(entry / "entry.json");
    EXPECT_FALSE(cache.restore(key, target));

    // Not a key: refused, never a path outside the cache.
    EXPECT_FALSE(cache.store("../outside", artifact, kSuffixes, kAnswer));
    EXPECT_FALSE(cache.restore("../outside", target));
    fs::remove_all(dir);
}

TEST(CompileCache, KeysAreStableAndLengthPrefixed) {
    std::string const k = CompileCache::key({"ab", "c"});
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(k, CompileCache::key({"ab", "c"}));
    EXPECT_NE(k, CompileCache::key({"a", "bc"}));
    EXPECT_NE(k, CompileCache::key({"abc"}));
    EXPECT_NE(k, CompileCache::key({"ab", "c", ""}));
    EXPECT_NE(k, CompileCache::key({"ab", "d"}));
    // The 128-bit FNV-1a of "2:ab1:c" (and of nothing: FNV's offset basis), as the FNV
    // reference computes them: a key is the same in every process, build and version.
    EXPECT_EQ(k, "3009db684e4ff78ce9bd8de4b8b53d76");
    EXPECT_EQ(CompileCache::key({}), "6c62272e07bb014262b821756295c58d");
    EXPECT_EQ(CompileCache::key({"a"}), "a68c894e6e8b5822836dbc791ef90399");
}

TEST(CompileCache, ConcurrentStoresOfOneKeyLeaveOneWholeEntry) {
    fs::path const dir = freshFolder("race");
    CompileCache const cache(dir / "cache");
    std::string const key = CompileCache::key({"raced"});
    // Large enough that stores overlap; each thread stores its own copy of the same compile.
    std::string const big = std::string(1 << 20, 'x') + "end";
    constexpr int kThreads = 16;
    for (int t = 0; t < kThreads; ++t)
        writeText(fmt::format("{}/candidate-{}.ptx", dir.string(), t), big);

    std::atomic<int> stored = 0, partial = 0;
    std::atomic<bool> storing = true;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::string const artifact = fmt::format("{}/candidate-{}", dir.string(), t);
            stored += cache.store(key, artifact, {".ptx"}, kAnswer) ? 1 : 0;
        });
    // A reader meanwhile sees the whole entry or none.
    std::thread reader([&] {
        std::string const target = (dir / "reader").string();
        while (storing)
            if (cache.restore(key, target) && readText(target + ".ptx") != big)
                ++partial;
    });
    for (auto& t : threads)
        t.join();
    storing = false;
    reader.join();

    EXPECT_EQ(stored.load(), kThreads);
    EXPECT_EQ(partial.load(), 0);
    EXPECT_EQ(entriesIn(dir / "cache"), std::vector<std::string>{key})
        << "no temporary folder is left behind";
    std::string const target = (dir / "after").string();
    ASSERT_TRUE(cache.restore(key, target));
    EXPECT_EQ(readText(target + ".ptx"), big);
    fs::remove_all(dir);
}

TEST(CompileCache, RestoreOverwritesAnArtifactsFolderThatExistsOrMakesIt) {
    fs::path const dir = freshFolder("folders");
    CompileCache const cache(dir / "cache");
    std::string const key = CompileCache::key({"folders"});
    ASSERT_TRUE(cache.store(key, compiled(dir, "candidate-7"), kSuffixes, kAnswer));

    // The sweep's artifacts folder exists and holds longer files of the same names.
    fs::create_directories(dir / "artifacts");
    std::string const existing = (dir / "artifacts" / "candidate-1").string();
    writeText(existing + ".graph.json", std::string(500, 'o'));
    writeText(existing + ".ptx", std::string(500, 'o'));
    ASSERT_TRUE(cache.restore(key, existing));
    EXPECT_EQ(readText(existing + ".graph.json"), kGraph);
    EXPECT_EQ(readText(existing + ".ptx"), kPtx);

    std::string const fresh = (dir / "not" / "yet" / "candidate-1").string();
    ASSERT_TRUE(cache.restore(key, fresh));
    EXPECT_EQ(readText(fresh + ".ptx"), kPtx);
    fs::remove_all(dir);
}

TEST(CompileCache, AStoreThatCannotWriteReturnsFalse) {
    fs::path const dir = freshFolder("unwritable");
    std::string const artifact = compiled(dir, "candidate-0");
    // The cache's folder would be inside a regular file: no store can succeed, even as root.
    writeText(dir / "file", "a file, not a folder");
    CompileCache const cache(dir / "file" / "cache");
    EXPECT_FALSE(cache.store(CompileCache::key({"x"}), artifact, kSuffixes, kAnswer));
    EXPECT_FALSE(cache.restore(CompileCache::key({"x"}), artifact));
    EXPECT_EQ(cache.bytes(), 0u);
    fs::remove_all(dir);
}

TEST(CompileCache, TheDefaultFolderFollowsTheEnvironment) {
    auto const saved = [](char const* name) -> std::optional<std::string> {
        char const* v = std::getenv(name);
        return v ? std::optional<std::string>(v) : std::nullopt;
    };
    auto const put = [](char const* name, std::optional<std::string> const& value) {
        if (value)
            ::setenv(name, value->c_str(), 1);
        else
            ::unsetenv(name);
    };
    auto const cacheDir = saved("KILN_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"),
               home = saved("HOME");

    put("KILN_CACHE_DIR", "/scratch/kiln-cache");
    put("XDG_CACHE_HOME", "/xdg");
    put("HOME", "/home/tuner");
    EXPECT_EQ(CompileCache::defaultFolder(), fs::path("/scratch/kiln-cache"));
    put("KILN_CACHE_DIR", "off");
    EXPECT_EQ(CompileCache::defaultFolder(), std::nullopt);
    put("KILN_CACHE_DIR", std::nullopt);
    EXPECT_EQ(CompileCache::defaultFolder(), fs::path("/xdg/kiln/compiled"));
    put("XDG_CACHE_HOME", "relative/cache"); // ignored, as the XDG specification says
    EXPECT_EQ(CompileCache::defaultFolder(), fs::path("/home/tuner/.cache/kiln/compiled"));
    put("XDG_CACHE_HOME", std::nullopt);
    put("HOME", std::nullopt);
    EXPECT_EQ(CompileCache::defaultFolder(), std::nullopt);

    put("KILN_CACHE_DIR", cacheDir);
    put("XDG_CACHE_HOME", xdg);
    put("HOME", home);
}
