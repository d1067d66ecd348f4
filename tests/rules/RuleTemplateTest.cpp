// Rule templates as a rule writer uses them: one rule written once for each role, layout or
// transpose, expanded into the rules the engine runs, and every mistake located in the
// template's text with the instance it is in.
#include "kiln/rules/RuleTemplate.h"

#include "kiln/rules/RuleJson.h"

#include <filesystem>
#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::rules;

namespace {

// The expanded rule set as JSON, as `kiln rules expand` prints it.
OrderedJson expanded(std::string const& text) {
    return expandRuleTemplates(parseJson(text, "t.rules.json")).root().json();
}

std::string errorOf(std::string const& text) {
    try {
        parseRuleSet(text, "t.rules.json");
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

std::vector<std::string> ruleNames(RuleSet const& set) {
    std::vector<std::string> names;
    for (auto const& r : set.rules)
        names.push_back(r.name);
    return names;
}

// A rule set around one rule (template): `rule` is the text of its members after the name.
std::string ruleSetWith(std::string const& rule, std::string const& strategy = "",
                        std::string const& name = "see-{ROLE}") {
    return R"({ "ruleset": "t", "version": 1,)" + strategy + R"(
  "rules": [ { "name": ")" +
           name + "\", " + rule + " } ] }";
}

} // namespace

TEST(RuleTemplate, OneRulePerRoleWithTheRoleWrittenIn) {
    RuleSet const set = parseRuleSet(ruleSetWith(R"("for_each": { "ROLE": ["lhs", "rhs"] },
    "match": { "nodes": { "mul": { "op": "Multiply" }, "t": { "dim": "MacroTile" } },
               "edges": [ { "mapping": "{ROLE}", "op": "mul", "dim": "t" } ] })"),
                                     "t.rules.json");
    EXPECT_EQ(ruleNames(set), (std::vector<std::string>{"see-lhs", "see-rhs"}));
    EXPECT_EQ(set.rules[0].match.edges[0].role, "lhs");
    EXPECT_EQ(set.rules[1].match.edges[0].role, "rhs");
}

TEST(RuleTemplate, AxesCombineWithTheFirstOutermost) {
    OrderedJson const rules = expanded(ruleSetWith(R"(
    "for_each": { "ROLE": ["lhs", "rhs"], "layout": [ { "LAYOUT": "", "MMA": 0 }, { "LAYOUT": "-k-major", "MMA": 1 } ] },
    "doc": "{ROLE}{LAYOUT}", "where": "$MMA == {MMA}",
    "match": { "nodes": { "t": { "dim": "MacroTile" } } })",
                                                   "", "see-{ROLE}{LAYOUT}"))["rules"];
    ASSERT_EQ(rules.size(), 4u);
    EXPECT_EQ(rules[1]["name"], "see-lhs-k-major");
    EXPECT_EQ(rules[0]["doc"], "lhs");
    EXPECT_EQ(rules[1]["doc"], "lhs-k-major");
    EXPECT_EQ(rules[1]["where"], "$MMA == 1");
    EXPECT_EQ(rules[2]["doc"], "rhs");
    EXPECT_EQ(rules[3]["doc"], "rhs-k-major");
}

TEST(RuleTemplate, AWholePlaceholderTakesItsValueAndNullLeavesTheMemberOut) {
    OrderedJson const rules = expanded(ruleSetWith(R"(
    "for_each": { "order": [ { "ROLE": "lhs", "ORDER": ["t", "k"], "NEXT": { "op": "*" } },
                             { "ROLE": "rhs", "ORDER": ["k", "t"], "NEXT": null } ] },
    "match": { "nodes": { "t": { "dim": "*" }, "k": { "dim": "*" }, "f": { "dim": "*" }, "next": "{NEXT}" },
               "edges": [ { "edge": "Flatten", "tails": "{ORDER}", "heads": ["f"] } ] })"))
        ["rules"];
    EXPECT_EQ(rules[0]["match"]["edges"][0]["tails"], OrderedJson({"t", "k"}));
    EXPECT_EQ(rules[1]["match"]["edges"][0]["tails"], OrderedJson({"k", "t"}));
    EXPECT_EQ(rules[0]["match"]["nodes"]["next"], OrderedJson({{"op", "*"}}));
    EXPECT_FALSE(rules[1]["match"]["nodes"].contains("next"));
}

TEST(RuleTemplate, TheTemplateNameInAStrategyStandsForItsInstances) {
    RuleSet const set = parseRuleSet(
        ruleSetWith(R"("for_each": { "ROLE": ["lhs", "rhs"] },
    "match": { "nodes": { "t": { "dim": "MacroTile" } } })",
                    R"( "strategy": { "seq": [ { "fixpoint": ["see-{ROLE}"], "budget": 4 } ] },)"),
        "t.rules.json");
    EXPECT_EQ(set.strategy.children[0].rules, (std::vector<std::string>{"see-lhs", "see-rhs"}));
}

TEST(RuleTemplate, AFileWithoutTemplatesExpandsToItself) {
    std::string const text = R"({ "ruleset": "t", "version": 1,
  "rules": [ { "name": "see-{ROLE}", "match": { "nodes": { "t": { "dim": "MacroTile" } } } } ] })";
    ExpandedRuleSet const e = expandRuleTemplates(parseJson(text, "t.rules.json"));
    EXPECT_FALSE(e.hasTemplates());
    EXPECT_EQ(e.root().json(), OrderedJson::parse(text));
}

TEST(RuleTemplate, AnErrorInAnInstancePointsIntoTheTemplateAndNamesTheInstance) {
    // In instance rhs the guard names "rhs", and only "lhs" is declared: column 15 of line 4
    // is the placeholder that wrote it.
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": ["lhs", "rhs"] },
    "match": { "nodes": { "lhs": { "dim": "MacroTile" } } },
    "where": "{ROLE}.size > 0" )")),
              "t.rules.json:4:15: error: in instance ROLE=rhs of rule 'see-{ROLE}': unknown "
              "variable 'rhs' (did you mean 'lhs'?) [at /rules/0/where]");
    // After the placeholder, a column counts in the template's text, not the instance's.
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": ["lhs"] },
    "match": { "nodes": { "lhs": { "dim": "MacroTile" } } },
    "where": "{ROLE}.size > q.size" )")),
              "t.rules.json:4:29: error: in instance ROLE=lhs of rule 'see-{ROLE}': unknown "
              "variable 'q' [at /rules/0/where]");
}

TEST(RuleTemplate, AnErrorInAValueFromTheTablePointsAtTheTable) {
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "r": [ { "ROLE": "lhs", "KIND": "MacroTile" },
                            { "ROLE": "rhs", "KIND": "MacroTyle" } ] },
    "match": { "nodes": { "t": { "dim": "{KIND}" } } } )")),
              "t.rules.json:3:54: error: in instance ROLE=rhs of rule 'see-{ROLE}': unknown "
              "dimension kind 'MacroTyle' (did you mean 'MacroTile'?); expected one of User, "
              "SubDimension, Linear, MacroTile, MacroTileNumber, MacroTileIndex, WaveTile, "
              "ThreadTile, Workgroup, Workitem, ForLoop, Unroll, Register, Shared [at "
              "/rules/0/for_each/r/1/KIND]");
}

TEST(RuleTemplate, ARuleOfATemplateKeepsTheTemplatesLocation) {
    // Errors found when the rules run (a guard that cannot be decided) point at what was written.
    RuleSet const set = parseRuleSet(
        R"({ "ruleset": "t", "version": 1, "rules": [
  { "name": "plain", "match": { "nodes": { "t": { "dim": "MacroTile" } } } },
  { "name": "see-{ROLE}", "for_each": { "ROLE": ["lhs", "rhs"] },
    "match": { "nodes": { "t": { "dim": "MacroTile" } } } } ] })",
        "t.rules.json");
    ASSERT_EQ(set.rules.size(), 3u);
    EXPECT_EQ(set.rules[2].at.pointer, "/rules/1");
    EXPECT_EQ(set.rules[2].at.line, 3);
    EXPECT_EQ(set.rules[2].match.nodes[0].at.pointer, "/rules/1/match/nodes/t");
}

TEST(RuleTemplate, BadTablesAreLocated) {
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": ["lhs"] },
    "match": { "nodes": { "t": { "dim": "MacroTile", "where": "t.size > {ROEL}" } } })")),
              "t.rules.json:3:73: error: unknown placeholder {ROEL} (did you mean {ROLE}?); "
              "\"for_each\" binds ROLE [at /rules/0/match/nodes/t/where]");
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": ["lhs"], "KIND": ["Shared"] },
    "match": { "nodes": { "t": { "dim": "MacroTile" } } })")),
              "t.rules.json:2:69: error: placeholder {KIND} is bound here but rule 'see-{ROLE}' "
              "does not use it [at /rules/0/for_each/KIND]");
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": [] },
    "match": { "nodes": { "t": { "dim": "MacroTile" } } })")),
              "t.rules.json:2:60: error: axis 'ROLE' has no rows; an axis needs at least one [at "
              "/rules/0/for_each/ROLE]");
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": ["lhs", "{ROLE}"] },
    "match": { "nodes": { "t": { "dim": "MacroTile" } } })")),
              "t.rules.json:2:69: error: a value in \"for_each\" cannot hold a placeholder "
              "({ROLE}): it is written into the rule as it is, not expanded again [at "
              "/rules/0/for_each/ROLE/1]");
}

TEST(RuleTemplate, TwoInstancesOfOneNameAreAnError) {
    EXPECT_EQ(errorOf(R"({ "ruleset": "t", "version": 1, "rules": [
  { "name": "see", "for_each": { "ROLE": ["lhs", "rhs"] },
    "match": { "nodes": { "t": { "dim": "MacroTile", "where": "{ROLE}.size > 0" } } } } ] })"),
              "t.rules.json:2:13: error: in instance ROLE=rhs of rule 'see': rule 'see' is "
              "made twice, also by instance ROLE=lhs of rule 'see'; a template's name tells "
              "its instances apart [at /rules/0/name]");
}

TEST(RuleTemplate, AnArrayCannotStandForAPartOfAString) {
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "r": [ { "ROLE": "lhs", "ORDER": ["t"] } ] },
    "match": { "nodes": { "t": { "dim": "MacroTile" } } }, "doc": "order {ORDER}")")),
              "t.rules.json:3:74: error: in instance ROLE=lhs of rule 'see-{ROLE}': {ORDER} is an "
              "array here, which can only stand for a whole string \"{ORDER}\", not for a part "
              "of one [at /rules/0/doc]");
}

TEST(RuleTemplate, TheInstancesAreBounded) {
    std::string values;
    for (int k = 0; k < 17; ++k)
        values += (k ? ", " : "") + std::to_string(k);
    EXPECT_EQ(errorOf(ruleSetWith(R"("for_each": { "ROLE": [)" + values + R"(], "N": [)" + values +
                                  R"(] },
    "match": { "nodes": { "t": { "dim": "MacroTile", "where": "t.size > {N}" } } })")),
              "t.rules.json:2:50: error: \"for_each\" makes more than 256 instances, the most a "
              "template may have [at /rules/0/for_each]");
}

TEST(RuleTemplate, TheShippedTemplatesExpandToTheRulesTheyReplaced) {
    // tests/golden/rules/X.expanded.json is rules/X.rules.json as it was written out before it
    // used templates: the expansion must equal it value for value, rule order included.
    namespace fs = std::filesystem;
    int compared = 0;
    for (auto const& entry : fs::directory_iterator(KILN_SOURCE_DIR "/tests/golden/rules")) {
        std::string const file = entry.path().filename().string();
        if (!file.ends_with(".expanded.json"))
            continue;
        std::string const stem = file.substr(0, file.size() - std::string(".expanded.json").size());
        JsonValue const written = readJsonFile(KILN_SOURCE_DIR "/rules/" + stem + ".rules.json");
        ExpandedRuleSet const expanded = expandRuleTemplates(written);
        EXPECT_TRUE(expanded.hasTemplates()) << stem;
        EXPECT_EQ(expanded.root().json(), readJsonFile(entry.path().string()).json()) << stem;
        ++compared;
    }
    EXPECT_GE(compared, 1);
}
