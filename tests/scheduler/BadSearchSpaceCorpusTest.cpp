// The search space files of the bad-input corpus (tests/bad-input/tuning/): each must fail, when
// loaded and solved for sm_90a, with exactly the message in its .expected file, as a UserError
// with a location; never an internal error or another exception. KILN_UPDATE_BAD_INPUT=1
// rewrites the .expected files.
#include "kiln/graph/SourceJson.h"
#include "kiln/scheduler/SearchSpace.h"
#include "kiln/scheduler/Solver.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {
fs::path const kCorpus = fs::path(KILN_SOURCE_DIR) / "tests" / "bad-input" / "tuning";

std::string trimNewline(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}
} // namespace

TEST(BadSearchSpaceCorpus, EveryFileFailsWithItsExactMessage) {
    std::vector<fs::path> files;
    for (auto const& entry : fs::directory_iterator(kCorpus))
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 20u);
    bool const update = std::getenv("KILN_UPDATE_BAD_INPUT") != nullptr;
    auto const arch = rules::archFacts("sm_90a");
    for (auto const& file : files) {
        std::string const name = "tests/bad-input/tuning/" + file.filename().string();
        std::string message = "loaded and solved without an error";
        try {
            scheduler::SearchSpace const space =
                scheduler::parseSearchSpace(readTextFile(file.string()), name);
            scheduler::Solver const solver(space, arch);
            solver.all();
        } catch (UserError const& e) {
            message = e.what();
            EXPECT_GT(e.location().line, 0) << name;
        } catch (std::exception const& e) {
            ADD_FAILURE() << name << ": not a UserError: " << e.what();
            continue;
        }
        fs::path expected = file;
        expected.replace_extension(".expected");
        if (update)
            std::ofstream(expected) << message << "\n";
        EXPECT_EQ(message, trimNewline(readTextFile(expected.string()))) << name;
    }
}
