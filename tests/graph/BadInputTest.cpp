// The bad-input corpus: every file in tests/bad-input/ must fail with exactly the message in its
// .expected sibling, as a UserError located in the file; never an internal error, another
// exception type or a crash. Files named graph-*.json are KernelGraph files, the others
// Commands. KILN_UPDATE_BAD_INPUT=1 rewrites the .expected files (review the diff!).
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphJson.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path const kCorpus = fs::path(KILN_SOURCE_DIR) / "tests" / "bad-input";

std::string read(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::vector<fs::path> corpus() {
    std::vector<fs::path> files;
    for (auto const& entry : fs::directory_iterator(kCorpus))
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

bool isGraphFile(fs::path const& path) {
    return path.filename().string().starts_with("graph-");
}

/// Loads `text` with the loader its name asks for; what comes out of it, as a test result.
struct Outcome {
    enum Kind { Accepted, User, Internal, Other } kind = Accepted;
    std::string message;
    SourceLocation location;
};

Outcome load(fs::path const& path, std::string const& text, std::string const& name) {
    try {
        if (isGraphFile(path))
            parseGraph(text, name);
        else
            parseCommand(text, name);
    } catch (UserError const& e) {
        return {Outcome::User, e.what(), e.location()};
    } catch (InternalError const& e) {
        return {Outcome::Internal, e.what(), {}};
    } catch (std::exception const& e) {
        return {Outcome::Other, e.what(), {}};
    } catch (...) {
        return {Outcome::Other, "an exception that is not a std::exception", {}};
    }
    return {};
}

std::string trimNewline(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

TEST(BadInput, CorpusIsLargeAndEveryFileHasItsMessage) {
    auto const files = corpus();
    EXPECT_GE(files.size(), 35u);
    int graphs = 0;
    for (auto const& f : files) {
        graphs += isGraphFile(f);
        fs::path expected = f;
        expected.replace_extension(".expected");
        EXPECT_TRUE(fs::exists(expected) || std::getenv("KILN_UPDATE_BAD_INPUT")) << expected;
    }
    EXPECT_GE(graphs, 5);
    for (auto const& entry : fs::directory_iterator(kCorpus)) {
        if (entry.is_directory())
            continue; // rules/: the rule files, checked by tests/rules/BadRuleCorpusTest.cpp
        fs::path json = entry.path();
        json.replace_extension(".json");
        EXPECT_TRUE(fs::exists(json)) << entry.path() << " has no input";
    }
}

TEST(BadInput, EveryFileFailsWithExactlyItsMessage) {
    bool const update = std::getenv("KILN_UPDATE_BAD_INPUT") != nullptr;
    for (auto const& file : corpus()) {
        std::string const name = "tests/bad-input/" + file.filename().string();
        SCOPED_TRACE(name);
        Outcome const outcome = load(file, read(file), name);
        ASSERT_NE(outcome.kind, Outcome::Internal)
            << "an internal error escaped: " << outcome.message;
        ASSERT_NE(outcome.kind, Outcome::Other)
            << "a non-Kiln exception escaped: " << outcome.message;
        ASSERT_EQ(outcome.kind, Outcome::User) << "the file was accepted";
        EXPECT_EQ(outcome.location.file, name);
        EXPECT_GT(outcome.location.line, 0) << "no line: " << outcome.message;
        EXPECT_GT(outcome.location.column, 0) << "no column: " << outcome.message;
        EXPECT_EQ(outcome.message.find('\n'), std::string::npos) << "one line only";

        fs::path expected = file;
        expected.replace_extension(".expected");
        if (update) {
            std::ofstream(expected, std::ios::binary) << outcome.message << '\n';
            continue;
        }
        EXPECT_EQ(outcome.message, trimNewline(read(expected)));
    }
}

TEST(BadInput, LoadingFromAPathNamesThatPath) {
    fs::path const file = kCorpus / "unknown-op.json";
    std::string const path = file.string();
    try {
        loadCommand(path);
        FAIL() << "accepted";
    } catch (UserError const& e) {
        std::string const expected = trimNewline(read(kCorpus / "unknown-op.expected"));
        std::string const relative = "tests/bad-input/unknown-op.json";
        ASSERT_TRUE(expected.starts_with(relative));
        EXPECT_EQ(e.what(), path + expected.substr(relative.size()));
    }
    fs::path const graph = kCorpus / "graph-bad-version.json";
    try {
        loadGraph(graph.string());
        FAIL() << "accepted";
    } catch (UserError const& e) {
        EXPECT_EQ(e.location().file, graph.string());
        EXPECT_EQ(e.location().pointer, "/version");
    }
}

} // namespace
} // namespace kiln
