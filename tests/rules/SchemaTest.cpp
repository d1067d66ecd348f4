// SchemaTest.cpp: rules/schema/ruleset.schema.json, the schema editors use for rule files,
// accepts every shipped rule set and rejects the mistakes the loader rejects by name.
#include "JsonSchemaCheck.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;

nlohmann::json readJson(fs::path const& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

nlohmann::json const& schema() {
    static nlohmann::json const s =
        readJson(fs::path(KILN_SOURCE_DIR) / "rules/schema/ruleset.schema.json");
    return s;
}

TEST(RuleSetSchema, AcceptsEveryShippedRuleSet) {
    int checked = 0;
    for (auto const& entry : fs::directory_iterator(fs::path(KILN_SOURCE_DIR) / "rules")) {
        if (!entry.path().filename().string().ends_with(".rules.json"))
            continue;
        EXPECT_EQ(arch::test::checkAgainstSchema(schema(), readJson(entry.path())),
                  std::vector<std::string>{})
            << entry.path();
        ++checked;
    }
    EXPECT_GE(checked, 6);
}

TEST(RuleSetSchema, RejectsWhatTheLoaderRejects) {
    nlohmann::json ruleSet = readJson(fs::path(KILN_SOURCE_DIR) / "rules/gemm-k-loop.rules.json");
    ruleSet["strategy"] = "sometimes";
    ruleSet["rules"][0]["match"]["nodes"]["mul"]["op"] = "Multiplyy";
    ruleSet["rules"][0]["colour"] = "blue";
    std::vector<std::string> const errors = arch::test::checkAgainstSchema(schema(), ruleSet);
    auto mentions = [&](std::string const& at) {
        return std::any_of(errors.begin(), errors.end(),
                           [&](std::string const& e) { return e.starts_with(at); });
    };
    EXPECT_TRUE(mentions("/strategy")) << ::testing::PrintToString(errors);
    EXPECT_TRUE(mentions("/rules/0/match/nodes/mul")) << ::testing::PrintToString(errors);
    EXPECT_TRUE(mentions("/rules/0/colour")) << ::testing::PrintToString(errors);
}

} // namespace
} // namespace kiln
