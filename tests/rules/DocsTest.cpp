// docs/rules.md stays true: every rule set in it loads, and the walk-through's rule set lowers
// axpy with the meaning kept.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/RuleJson.h"
#include "kiln/rules/RuleTests.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {
// The ```json blocks of the document that hold a whole rule set.
std::vector<std::string> ruleSetBlocks(std::string const& text) {
    std::vector<std::string> blocks;
    std::size_t at = 0;
    while ((at = text.find("```json\n", at)) != std::string::npos) {
        std::size_t const start = at + 8, end = text.find("```", start);
        std::string block = text.substr(start, end - start);
        if (block.find("\"rules\":") != std::string::npos)
            blocks.push_back(block);
        at = end + 3;
    }
    return blocks;
}
} // namespace

TEST(Docs, TheRuleSetsOfTheGuideLoadAndKeepTheMeaning) {
    auto const blocks = ruleSetBlocks(readTextFile(KILN_SOURCE_DIR "/docs/rules.md"));
    ASSERT_EQ(blocks.size(), 2u);
    rules::RuleSet const set = rules::parseRuleSet(blocks[0], "docs/rules.md");
    EXPECT_EQ(set.name, "tile-vectors");

    Command const command = loadCommand(KILN_SOURCE_DIR "/examples/axpy.json");
    KernelGraph graph = translate(command);
    SemanticCheck const check(command, command.defaults, 3);
    rules::EngineOptions options;
    options.observe = [&](rules::Application const& a, KernelGraph const& after) {
        check.check(after, a.rule);
    };
    EXPECT_EQ(rules::apply(set, graph, options).applications, 4);
    EXPECT_EQ(rules::countKind(graph, "PassThrough"), 6);
}

TEST(Docs, TheTemplateOfTheGuideExpandsAsItSays) {
    auto const blocks = ruleSetBlocks(readTextFile(KILN_SOURCE_DIR "/docs/rules.md"));
    ASSERT_EQ(blocks.size(), 2u);
    rules::RuleSet const set = rules::parseRuleSet(blocks[1], "docs/rules.md");
    std::vector<std::string> names;
    for (auto const& r : set.rules)
        names.push_back(r.name);
    EXPECT_EQ(names, (std::vector<std::string>{"mark-lhs", "mark-lhs-k-major", "mark-rhs",
                                               "mark-rhs-k-major"}));
    EXPECT_EQ(set.strategy.rules, names);
    EXPECT_FALSE(set.rules[0].where.has_value()); // GUARD is null for the plain layout
    EXPECT_EQ(set.rules[3].where->text, "k.size > 1");
    EXPECT_EQ(set.rules[3].doc, "B's tile, stored-k-major.");
    EXPECT_EQ(set.rules[3].match.edges[0].role, "rhs");
    EXPECT_EQ(set.rules[3].match.edges[1].tails.fixed, (std::vector<std::string>{"k", "t"}));
}
