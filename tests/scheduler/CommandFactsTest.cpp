// CommandFactsTest.cpp: `command.NAME` in a search space's constraints (CommandFacts.h): the
// facts of the shipped Commands, the normalization space's ONLINE=1 points only for the softmax and
// the layer norm, and the errors of a fact without a Command, of an unknown fact, and of a fact in
// a rule.
#include "kiln/scheduler/CommandFacts.h"

#include "kiln/graph/CommandJson.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/RuleExpression.h"
#include "kiln/scheduler/Solver.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::scheduler;

namespace {

std::string const kSource = KILN_SOURCE_DIR;

CommandFacts factsOf(std::string const& example) {
    return commandFacts(loadCommand(kSource + "/examples/" + example));
}

std::string errorOf(std::function<void()> const& f) {
    try {
        f();
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

SearchSpace const kOnline = parseSearchSpace(
    R"({"space": "t", "version": 1, "parameters": {"ONLINE": {"values": [0, 1]}},
        "constraints": ["$ONLINE == 0 || command.max_exp_sums > 0"]})",
    "test.space.json");

} // namespace

TEST(CommandFacts, CountTheSoftmaxsMaxAndExpSum) {
    EXPECT_EQ(factsOf("softmax-f16.json")("max_exp_sums"), 1);
    EXPECT_EQ(factsOf("layernorm-f16.json")("max_exp_sums"), 0);
    EXPECT_EQ(factsOf("rmsnorm-f16.json")("max_exp_sums"), 0);
    EXPECT_EQ(factsOf("softmax-f16.json")("max_exp_sum"), std::nullopt);
}

TEST(CommandFacts, CountTheLayerNormsMeanAndVariance) {
    EXPECT_EQ(factsOf("layernorm-f16.json")("mean_variances"), 1);
    EXPECT_EQ(factsOf("softmax-f16.json")("mean_variances"), 0);
    EXPECT_EQ(factsOf("rmsnorm-f16.json")("mean_variances"), 0);
}

// The shipped space tunes ONLINE for the softmax (its max and sum) and the layer norm (its mean
// and variance), 1 and 2: their points are the RMS norm's three times, which has none to compute
// in one pass.
TEST(CommandFacts, TheNormalizationSpaceHasOnlinePointsForTheSoftmaxAndTheLayerNormOnly) {
    SearchSpace const s = loadSearchSpace(kSource + "/examples/normalization.space.json");
    int const online = s.indexOf("ONLINE");
    ASSERT_GE(online, 0);
    auto const arch = rules::archFacts("sm_90a");
    auto const rmsnorm = Solver(s, arch, factsOf("rmsnorm-f16.json")).all();
    for (auto const& p : rmsnorm)
        EXPECT_EQ(p[static_cast<std::size_t>(online)], 0);
    for (std::string const name : {"softmax-f16.json", "layernorm-f16.json"})
        EXPECT_EQ(Solver(s, arch, factsOf(name)).all().size(), 3 * rmsnorm.size()) << name;
}

TEST(CommandFacts, NeedACommand) {
    EXPECT_EQ(errorOf([] { Solver(kOnline, {}); }),
              "test.space.json:2:42: error: 'command.max_exp_sums' needs the Command being tuned; "
              "none was given [at /constraints/0]");
}

TEST(CommandFacts, AnUnknownFactIsAnErrorAtItsCharacter) {
    SearchSpace const s = parseSearchSpace(
        R"({"space": "t", "version": 1, "parameters": {"A": {"values": [1]}},
        "constraints": ["$A <= command.rows"]})",
        "test.space.json");
    EXPECT_EQ(errorOf([&] { Solver(s, {}, factsOf("softmax-f16.json")); }),
              "test.space.json:2:32: error: the Command has no fact 'command.rows'; it has "
              "max_exp_sums, mean_variances [at /constraints/0]");
}

// A rule applies to any graph: it cannot read a fact of one Command.
TEST(CommandFacts, ARuleCannotReadThem) {
    try {
        rules::parseRuleExpression("command.max_exp_sums > 0", {});
        ADD_FAILURE() << "a rule read a Command's fact";
    } catch (ExpressionError const& e) {
        EXPECT_EQ(e.message(), "'command.max_exp_sums' is a fact of the Command a search space is "
                               "tuned for; a rule applies to any graph and cannot read it");
    }
}
