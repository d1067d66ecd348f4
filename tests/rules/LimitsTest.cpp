// The limits on every lowering (Limits.h): a runaway rule set (nested repeats, a fixpoint with a
// huge budget, a pattern whose matches multiply) stops at the limit it reaches, with a message
// that names the limit, the rule set, the strategy and the rule, and leaves the graph as it was.
// Each test sets small limits through EngineOptions, so that it ends within a second.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/rules/RuleJson.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>

using namespace kiln;
using namespace kiln::rules;

namespace {

KernelGraph axpyGraph() {
    return translate(loadCommand(KILN_SOURCE_DIR "/examples/axpy.json"));
}

RuleSet ruleSet(std::string const& body) {
    return parseRuleSet(body, "inline.rules.json");
}

// The LimitError `f` throws: its message and which limit; "no error" when it throws none.
std::pair<std::string, std::optional<Limit>> limitOf(std::function<void()> const& f) {
    try {
        f();
    } catch (LimitError const& e) {
        return {e.what(), e.limit()};
    } catch (UserError const& e) {
        return {e.what(), std::nullopt};
    }
    return {"no error", std::nullopt};
}

// A rule that adds a node to the graph every time it applies: its fixpoint never ends.
constexpr char const* kGrows = R"json({ "ruleset": "grows", "version": 1,
  "strategy": { "fixpoint": ["more"], "budget": 1000000000000 },
  "rules": [ { "name": "more", "match": { "nodes": { "k": { "op": "Kernel" } } },
               "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } } ] })json";

// Eleven free nodes (any six dimensions, any five operations) and a guard that is false: the
// matcher tries every arrangement, tens of millions of them on axpy.
constexpr char const* kWide = R"json({ "ruleset": "wide", "version": 1, "strategy": "once",
  "params": { "NEVER": 0 },
  "rules": [ { "name": "eleven-free-nodes", "where": "$NEVER == 1",
               "match": { "nodes": { "a": { "dim": "*" }, "b": { "dim": "*" }, "c": { "dim": "*" },
                                     "d": { "dim": "*" }, "e": { "dim": "*" }, "f": { "dim": "*" },
                                     "g": { "op": "*" }, "h": { "op": "*" }, "i": { "op": "*" },
                                     "j": { "op": "*" }, "k": { "op": "*" } } },
               "rewrite": { "remove": ["a"] } } ] })json";

} // namespace

TEST(Limits, NestedRepeatsStopAtTheStepLimit) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "nested", "version": 1,
      "strategy": { "repeat": 1048576, "do": [ { "repeat": 1048576, "do": [ { "once": ["never"] } ] } ] },
      "rules": [ { "name": "never", "match": { "nodes": { "w": { "dim": "Workgroup" } } },
                   "rewrite": { "remove": ["w"] } } ] })json");
    KernelGraph graph = axpyGraph();
    auto const [message, limit] = limitOf([&] { apply(set, graph, {.limits = {.steps = 1000}}); });
    EXPECT_EQ(
        message,
        "inline.rules.json:2:77: error: rule set 'nested' reached the lowering's limit of 1000 "
        "strategy steps while its once strategy was applying rule 'never' "
        "[at /strategy/do/0/do/0]");
    EXPECT_EQ(limit, Limit::Steps);
}

TEST(Limits, AFixpointWithAHugeBudgetStopsAtTheApplicationLimitAndChangesNothing) {
    RuleSet const set = ruleSet(kGrows);
    KernelGraph graph = axpyGraph();
    std::string const before = toText(graph);
    int observed = 0;
    auto const [message, limit] = limitOf([&] {
        apply(set, graph,
              {.observe = [&](Application const&, KernelGraph const&) { ++observed; },
               .limits = {.applications = 20}});
    });
    EXPECT_EQ(
        message,
        "inline.rules.json:2:15: error: rule set 'grows' reached the lowering's limit of 20 rule "
        "applications while its fixpoint strategy was applying rule 'more' [at /strategy]");
    EXPECT_EQ(limit, Limit::Applications);
    EXPECT_EQ(observed, 20);
    EXPECT_EQ(toText(graph), before); // not the 20 applications before the limit
}

TEST(Limits, APatternWhoseMatchesMultiplyStopsAtTheCandidateLimit) {
    RuleSet const set = ruleSet(kWide);
    KernelGraph graph = axpyGraph();
    auto const [message, limit] =
        limitOf([&] { apply(set, graph, {.limits = {.candidates = 10000}}); });
    EXPECT_EQ(
        message,
        "inline.rules.json:1:48: error: rule set 'wide' reached the lowering's limit of 10000 "
        "candidate bindings tried by the matcher while its once strategy was applying rule "
        "'eleven-free-nodes' [at /strategy]");
    EXPECT_EQ(limit, Limit::Candidates);
}

TEST(Limits, AMatchThatTakesTooLongStopsAtTheTimeLimit) {
    RuleSet const set = ruleSet(kWide);
    KernelGraph graph = axpyGraph();
    auto const start = std::chrono::steady_clock::now();
    auto const [message, limit] =
        limitOf([&] { apply(set, graph, {.limits = {.candidates = INT64_MAX, .seconds = 0.2}}); });
    double const seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(
        message,
        "inline.rules.json:1:48: error: rule set 'wide' reached the lowering's limit of 0.2 s of "
        "wall time while its once strategy was applying rule 'eleven-free-nodes' [at "
        "/strategy]");
    EXPECT_EQ(limit, Limit::Time);
    EXPECT_LT(seconds, 1.0); // the deadline is read every 1024 candidates
}

// The semantic check after every application (an observer) takes as long as the problem it
// checks at, under a sanitizer many times longer: that is the caller's time, not the rule set's,
// and the wall-time limit does not count it. Three applications observed for 0.15 s each pass a
// limit of 0.2 s; the rule set's own work is still bounded (the test above).
TEST(Limits, TheTimeObserversTakeIsNotTheRuleSets) {
    std::string repeats = kGrows;
    repeats.replace(repeats.find("{ \"fixpoint\""),
                    repeats.find(" },\n") + 2 - repeats.find("{ \"fixpoint\""),
                    R"({ "repeat": 3, "do": [ { "once": ["more"] } ] })");
    RuleSet const set = ruleSet(repeats);
    KernelGraph graph = axpyGraph();
    int observed = 0;
    EngineOptions options{.limits = {.seconds = 0.2}};
    options.observe = [&](Application const&, KernelGraph const&) {
        ++observed;
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
    };
    auto const start = std::chrono::steady_clock::now();
    auto const [message, limit] = limitOf([&] { apply(set, graph, options); });
    EXPECT_EQ(message, "no error");
    EXPECT_EQ(observed, 3);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(450));
}

TEST(Limits, ATryDoesNotCatchALimit) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "tries", "version": 1,
      "strategy": { "try": [ { "fixpoint": ["more"], "budget": 1000000 } ] },
      "rules": [ { "name": "more", "match": { "nodes": { "k": { "op": "Kernel" } } },
                   "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } } ] })json");
    KernelGraph graph = axpyGraph();
    auto const [message, limit] =
        limitOf([&] { apply(set, graph, {.limits = {.applications = 3}}); });
    EXPECT_EQ(
        message,
        "inline.rules.json:2:30: error: rule set 'tries' reached the lowering's limit of 3 rule "
        "applications while its fixpoint strategy was applying rule 'more' [at /strategy/try/0]");
    EXPECT_EQ(limit, Limit::Applications);
}

TEST(Limits, APipelineCountsEveryStepAgainstOneSetOfLimits) {
    // The shipped elementwise rule set applies 4 rules to axpy; then `grows`, 3 more: 7 in all.
    auto const folder = std::filesystem::path(testing::TempDir()) / "kiln-limits";
    std::filesystem::create_directories(folder);
    std::filesystem::copy_file(KILN_SOURCE_DIR "/rules/linear-to-workitems.rules.json",
                               folder / "linear-to-workitems.rules.json",
                               std::filesystem::copy_options::overwrite_existing);
    std::string grows = kGrows;
    grows.replace(grows.find("{ \"fixpoint\""),
                  grows.find(" },\n") + 2 - grows.find("{ \"fixpoint\""),
                  R"({ "repeat": 3, "do": [ { "once": ["more"] } ] })");
    std::ofstream(folder / "grows.rules.json") << grows;
    std::ofstream(folder / "two.pipeline.json")
        << R"({ "pipeline": "two", "version": 1, "params": { "WG_SIZE": 64, "VEC": 2 },
               "steps": [ { "ruleset": "linear-to-workitems.rules.json" },
                          { "ruleset": "grows.rules.json" } ] })";
    Pipeline const pipeline = loadPipeline((folder / "two.pipeline.json").string());

    KernelGraph graph = axpyGraph();
    std::string const before = toText(graph);
    auto const reports = lower(pipeline, graph, {.limits = {.applications = 7}});
    EXPECT_EQ(reports.back().spent.applications, 7);

    graph = axpyGraph();
    auto const [message, limit] =
        limitOf([&] { lower(pipeline, graph, {.limits = {.applications = 6}}); });
    EXPECT_EQ(message, (folder / "grows.rules.json").string() +
                           ":2:38: error: rule set 'grows' reached the lowering's limit of 6 rule "
                           "applications while its once strategy was applying rule 'more' [at "
                           "/strategy/do/0]");
    EXPECT_EQ(limit, Limit::Applications);
    EXPECT_EQ(toText(graph), before); // not lowered by the first step

    // Nor do observers count in a later step, or in a native step after them: 7 applications
    // observed for 0.1 s each pass a limit of 0.3 s.
    std::ofstream(folder / "three.pipeline.json")
        << R"({ "pipeline": "three", "version": 1, "params": { "WG_SIZE": 64, "VEC": 2 },
               "steps": [ { "ruleset": "linear-to-workitems.rules.json" },
                          { "ruleset": "grows.rules.json" }, { "native": "simplify" } ] })";
    Pipeline const three = loadPipeline((folder / "three.pipeline.json").string());
    graph = axpyGraph();
    EngineOptions observed{.limits = {.seconds = 0.3}};
    observed.observe = [](Application const&, KernelGraph const&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    };
    EXPECT_EQ(limitOf([&] { lower(three, graph, observed); }).first, "no error");
}
