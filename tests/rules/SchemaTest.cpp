// SchemaTest.cpp: rules/schema/ruleset.schema.json, the schema editors use for rule files,
// accepts every shipped rule set, as written and expanded, and rejects the mistakes the loader
// rejects by name.
#include "JsonSchemaCheck.h"
#include "kiln/rules/RuleTemplate.h"

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

TEST(RuleSetSchema, AcceptsTheExpansionOfEveryShippedRuleSet) {
    // A template's instances are checked as rules: the schema types them fully.
    for (auto const& entry : fs::directory_iterator(fs::path(KILN_SOURCE_DIR) / "rules")) {
        if (!entry.path().filename().string().ends_with(".rules.json"))
            continue;
        rules::ExpandedRuleSet const expanded =
            rules::expandRuleTemplates(readJsonFile(entry.path().string()));
        nlohmann::json const json = nlohmann::json::parse(expanded.root().json().dump());
        EXPECT_EQ(arch::test::checkAgainstSchema(schema(), json), std::vector<std::string>{})
            << entry.path();
    }
}

TEST(RuleSetSchema, RejectsWhatTheLoaderRejects) {
    nlohmann::json const shipped =
        readJson(fs::path(KILN_SOURCE_DIR) / "rules/gemm-k-unroll.rules.json");
    // Each mistake alone: a rule that is neither a rule nor a template is one error, which
    // says why the rule does not match.
    auto errorsWith = [&](auto const& mistake) {
        nlohmann::json ruleSet = shipped;
        mistake(ruleSet);
        return ::testing::PrintToString(arch::test::checkAgainstSchema(schema(), ruleSet));
    };
    EXPECT_NE(errorsWith([](nlohmann::json& r) { r["strategy"] = "sometimes"; }).find("/strategy"),
              std::string::npos);
    EXPECT_NE(errorsWith([](nlohmann::json& r) {
                  r["rules"][0]["match"]["nodes"]["loop"]["op"] = "ForLooop";
              }).find("/rules/0/match/nodes/loop"),
              std::string::npos);
    EXPECT_NE(errorsWith([](nlohmann::json& r) {
                  r["rules"][0]["colour"] = "blue";
              }).find("/rules/0/colour"),
              std::string::npos);
    EXPECT_NE(errorsWith([](nlohmann::json& r) {
                  r["rules"][0]["for_each"] = nlohmann::json::object();
              }).find("/rules/0"),
              std::string::npos);
}

} // namespace
} // namespace kiln
