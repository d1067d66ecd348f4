// GoldenFile.h: the one way a test compares text with a golden file of the source tree.
//
// expectGoldenFile("tests/golden/ptx/axpy.sm_90.ptx", code) passes when the file holds exactly
// `code`, and otherwise shows the first line that differs. Run the tests with
// KILN_UPDATE_GOLDEN=1 to write the files instead, then review their diff before committing.
#pragma once

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <sstream>
#include <string>

namespace kiln::test {

/// The first line on which `actual` and `expected` differ, both shown.
inline std::string firstDifference(std::string const& actual, std::string const& expected) {
    std::istringstream a(actual), e(expected);
    std::string la, le;
    for (int line = 1;; ++line) {
        bool const moreA = static_cast<bool>(std::getline(a, la));
        bool const moreE = static_cast<bool>(std::getline(e, le));
        if (!moreA && !moreE)
            return "no line (the files differ only in their last newline)";
        if (!moreA || !moreE || la != le)
            return "line " + std::to_string(line) + ":\n  expected: " + (moreE ? le : "<end>") +
                   "\n  actual:   " + (moreA ? la : "<end>");
    }
}

/// Whether this run writes golden files instead of comparing (KILN_UPDATE_GOLDEN=1).
inline bool updatingGoldenFiles() {
    char const* update = std::getenv("KILN_UPDATE_GOLDEN");
    return update && std::string(update) == "1";
}

/// Expects the file at `relative` (to the source tree) to hold exactly `actual`.
inline void expectGoldenFile(std::string const& relative, std::string const& actual) {
    std::string const path = std::string(KILN_SOURCE_DIR) + "/" + relative;
    if (updatingGoldenFiles()) {
        std::ofstream(path) << actual;
        std::cout << "rewrote " << path << "\n";
        return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "no golden file " << path
                    << "; run with KILN_UPDATE_GOLDEN=1 to create it, then review it";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str())
        << relative << " differs at " << firstDifference(actual, expected.str())
        << "\nIf the change is intended, rerun with KILN_UPDATE_GOLDEN=1 and review the diff.";
}

} // namespace kiln::test
