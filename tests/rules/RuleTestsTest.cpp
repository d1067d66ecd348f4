// RuleTestsTest.cpp: the tests a rule set file carries (RuleTests.h), and the problem a test's
// semantic check runs at: the Command's, or the test's own "problem", read and checked as a
// Command's is, with errors that point into the rule file.
#include "kiln/rules/RuleTests.h"

#include "kiln/graph/SourceJson.h"
#include "kiln/rules/RuleJson.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace kiln;
using namespace kiln::rules;

namespace {

std::string text(std::string const& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// rules/linear-to-workitems.rules.json with `from` replaced by `to` in its text, and one test:
// axpy with WG_SIZE=64, VEC=4 (256 elements a workgroup), its check at `problem` if given.
RuleSet linearToWorkitems(std::string const& from, std::string const& to,
                          std::optional<std::string> const& problem) {
    std::string const path = KILN_SOURCE_DIR "/rules/linear-to-workitems.rules.json";
    std::string body = text(path);
    for (auto at = body.find(from); at != std::string::npos; at = body.find(from, at + to.size()))
        body.replace(at, from.size(), to);
    RuleSet set = parseRuleSet(body, path);
    RuleTest test{.name = "axpy", .command = "../examples/axpy.json"};
    test.params = {{"WG_SIZE", 64}, {"VEC", 4}};
    if (problem)
        test.problem = parseJson(*problem, "test-problem.json");
    set.tests = {test};
    return set;
}

std::string const kCeil = "ceildiv(values.size, $WG_SIZE * $VEC)";
std::string const kFloor = "values.size / ($WG_SIZE * $VEC)";

RuleTestResult runOnly(RuleSet const& set) {
    auto const results = runRuleTests(set);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
}

} // namespace

TEST(RuleTests, TheCheckRunsAtTheTestsProblem) {
    EXPECT_TRUE(runOnly(linearToWorkitems(kCeil, kCeil, R"({ "N": 1001, "alpha": 2 })")).passed);
    // A grid of floor(N / 256) workgroups misses the last N % 256 elements: at the test's N =
    // 1001 (the check's first problem) ...
    RuleTestResult const ragged =
        runOnly(linearToWorkitems(kCeil, kFloor, R"({ "N": 1001, "alpha": 2 })"));
    EXPECT_FALSE(ragged.passed);
    EXPECT_NE(ragged.message.find("changed the result: tensor 'Y'"), std::string::npos)
        << ragged.message;
    // ... which a test at N = 1024 does not show; the check's ragged problem of primes still does.
    RuleTestResult const round =
        runOnly(linearToWorkitems(kCeil, kFloor, R"({ "N": 1024, "alpha": 2 })"));
    EXPECT_FALSE(round.passed);
    EXPECT_NE(round.message.find("changed the result at N=23"), std::string::npos) << round.message;
}

TEST(RuleTests, ATestsProblemIsReadAsACommandsIs) {
    struct Case {
        std::string problem, message;
    };
    for (auto const& [problem, message] : std::vector<Case>{
             {R"({ "N": 1001, "alhpa": 2 })",
              "test-problem.json:1:14: error: unknown size or scalar 'alhpa' (did you mean "
              "'alpha'?) [at /alhpa]"},
             {R"({ "N": 0, "alpha": 2 })",
              "test-problem.json:1:8: error: size 'N' must be an integer from 1 to "
              "1099511627776, got 0 [at /N]"},
             {R"({ "alpha": 2 })",
              "test-problem.json:1:1: error: the problem gives no value for size 'N'"},
             {R"({ "N": 1001, "X": 2 })",
              "test-problem.json:1:14: error: 'X' is a tensor; the problem gives sizes and "
              "scalars [at /X]"},
         }) {
        RuleTestResult const r = runOnly(linearToWorkitems(kCeil, kCeil, problem));
        EXPECT_FALSE(r.passed) << problem;
        EXPECT_EQ(r.message, message);
    }
}
