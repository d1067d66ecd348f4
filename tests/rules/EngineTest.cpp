// The rule engine on small rule sets written inline, as a user would write them: what applies,
// what stops it, what it says when it does not match, and that a failed rewrite changes nothing.
#include "kiln/rules/Engine.h"

#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/RuleJson.h"
#include "kiln/rules/RuleTests.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::rules;

namespace {

// examples/axpy.json: y = alpha * x + y over N floats.
Command axpy() {
    return loadCommand(KILN_SOURCE_DIR "/examples/axpy.json");
}

RuleSet ruleSet(std::string const& body) {
    return parseRuleSet(body, "inline.rules.json");
}

std::string errorOf(std::function<void()> const& f) {
    try {
        f();
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(Engine, ShippedLinearRulesKeepTheMeaningOfAxpy) {
    RuleSet const set = loadRuleSet(KILN_SOURCE_DIR "/rules/linear-to-workitems.rules.json");
    Command const c = axpy();
    KernelGraph graph = translate(c);
    ApplyResult const result = apply(set, graph, {.parameters = {{"WG_SIZE", 32}, {"VEC", 2}}});
    EXPECT_EQ(result.applications, 4); // the grid, then one tiling per Linear value
    EXPECT_EQ(countKind(graph, "Workgroup"), 1);
    EXPECT_EQ(countKind(graph, "Tile"), 3);

    // 101 elements over workgroups of 32 x 2: the last workgroup is partly masked.
    Bindings viaGraph = randomBindings(c, {{"N", 101}}, 5), direct = viaGraph;
    interpret(graph, viaGraph);
    runReference(c, direct);
    EXPECT_EQ(maxRelativeError(viaGraph.tensors["Y"], direct.tensors["Y"]), 0.0);
}

TEST(Engine, ATilingThatMissesElementsIsCaught) {
    // Workgroups for only half of the elements: the elements nobody owns stay uncomputed.
    RuleSet const set = ruleSet(R"json({ "ruleset": "short-grid", "version": 1,
      "rules": [
        { "name": "grid", "match": { "nodes": { "v": { "dim": "Linear" } },
                                     "not": [ { "nodes": { "w": { "dim": "Workgroup" } } } ] },
          "rewrite": { "add": { "nodes": { "wg": { "dim": "Workgroup", "size": "ceildiv(v.size, 8)" },
                                           "wi": { "dim": "Workitem", "size": 2 } } } } },
        { "name": "tile", "match": { "nodes": { "v": { "dim": "Linear" }, "wg": { "dim": "Workgroup" }, "wi": { "dim": "Workitem" } },
                                     "not": [ { "edges": [ { "edge": "Tile", "tails": ["v"], "heads": ["...h"] } ] } ] },
          "rewrite": { "add": { "nodes": { "n": { "dim": "MacroTileNumber", "size": "wg.size" },
                                           "i": { "dim": "MacroTileIndex", "size": 4 } },
                                "edges": [ { "edge": "Tile", "tails": ["v"], "heads": ["n", "i"] },
                                           { "edge": "PassThrough", "tails": ["n"], "heads": ["wg"] },
                                           { "edge": "PassThrough", "tails": ["i"], "heads": ["wi"] } ] } } } ] })json");
    Command const c = axpy();
    KernelGraph graph = translate(c);
    apply(set, graph, {});
    Bindings viaGraph = randomBindings(c, {{"N", 64}}, 5), direct = viaGraph;
    interpret(graph, viaGraph);
    runReference(c, direct);
    EXPECT_GT(maxRelativeError(viaGraph.tensors["Y"], direct.tensors["Y"]), 0.1);
}

// A grid of floor(N / 8) workgroups of 8 elements covers N = 1000 (the Command's problem) but
// not N = 23: the semantic check runs a ragged problem too, and names it.
TEST(Engine, TheSemanticCheckRunsARaggedProblemToo) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "floor-grid", "version": 1,
      "rules": [
        { "name": "grid", "match": { "nodes": { "v": { "dim": "Linear" } },
                                     "not": [ { "nodes": { "w": { "dim": "Workgroup" } } } ] },
          "rewrite": { "add": { "nodes": { "wg": { "dim": "Workgroup", "size": "v.size / 8" },
                                           "wi": { "dim": "Workitem", "size": 8 } } } } },
        { "name": "tile", "match": { "nodes": { "v": { "dim": "Linear" }, "wg": { "dim": "Workgroup" }, "wi": { "dim": "Workitem" } },
                                     "not": [ { "edges": [ { "edge": "Tile", "tails": ["v"], "heads": ["...h"] } ] } ] },
          "rewrite": { "add": { "nodes": { "n": { "dim": "MacroTileNumber", "size": "wg.size" },
                                           "i": { "dim": "MacroTileIndex", "size": 8 } },
                                "edges": [ { "edge": "Tile", "tails": ["v"], "heads": ["n", "i"] },
                                           { "edge": "PassThrough", "tails": ["n"], "heads": ["wg"] },
                                           { "edge": "PassThrough", "tails": ["i"], "heads": ["wi"] } ] } } } ] })json");
    Command const c = axpy();
    ASSERT_EQ(c.defaults.at("N"), 1000);
    SemanticCheck const semantics(c, c.defaults, 1);
    EXPECT_EQ(semantics.problems().back().at("N"), 23);
    KernelGraph graph = translate(c);
    EXPECT_EQ(errorOf([&] {
                  apply(set, graph, {.observe = [&](Application const& a, KernelGraph const& g) {
                            semantics.check(g, fmt::format("rule '{}'", a.rule));
                        }});
              }),
              "error: rule 'tile' changed the result at N=23: tensor 'Y' differs from the "
              "Command's meaning by 1.04 (tolerance 1e-05)");
}

TEST(Engine, AFixpointOverBudgetNamesTheRulesThatKeptFiring) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "grows", "version": 1,
      "strategy": { "fixpoint": ["more"], "budget": 5 },
      "rules": [ { "name": "more", "match": { "nodes": { "k": { "op": "Kernel" } } },
                   "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } } ] })json");
    KernelGraph graph = translate(axpy());
    std::string const before = toText(graph);
    EXPECT_EQ(errorOf([&] { apply(set, graph, {}); }),
              "inline.rules.json:2:19: error: rule set 'grows' did not reach a fixpoint within its "
              "budget of 5 "
              "applications; rules that kept firing: more (5x) [at /strategy]");
}

TEST(Engine, AFixpointThatComesBackToAGraphIsStopped) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "flip-flop", "version": 1,
      "rules": [
        { "name": "add", "match": { "nodes": { "k": { "op": "Kernel" } },
                                    "not": [ { "nodes": { "u": { "dim": "Unroll" } } } ] },
          "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } },
        { "name": "drop", "match": { "nodes": { "u": { "dim": "Unroll" } } }, "rewrite": { "remove": ["u"] } } ] })json");
    KernelGraph graph = translate(axpy());
    EXPECT_EQ(errorOf([&] { apply(set, graph, {}); }),
              "inline.rules.json:1:1: error: rule set 'flip-flop' came back to a graph it had "
              "already produced after "
              "2 applications, so its fixpoint would never end; rules that kept firing: add (1x), "
              "drop (1x)");
}

TEST(Engine, AnInvalidRewriteChangesNothing) {
    // DataFlow may only join data dimensions; the rewrite would add one from a Workgroup.
    RuleSet const set = ruleSet(R"json({ "ruleset": "bad", "version": 1, "strategy": "once",
      "rules": [ { "name": "flow-from-index", "match": { "nodes": { "v": { "dim": "Linear" } } },
                   "rewrite": { "add": { "nodes": { "w": { "dim": "Workgroup", "size": 4 } },
                                         "edges": [ { "edge": "DataFlow", "tails": ["w"], "heads": ["v"] } ] } } } ] })json");
    KernelGraph graph = translate(axpy());
    std::string const before = toText(graph);
    std::string const error = errorOf([&] { apply(set, graph, {}); });
    EXPECT_NE(
        error.find("rule 'flow-from-index' would leave the graph invalid, so it was not applied"),
        std::string::npos)
        << error;
    EXPECT_EQ(toText(graph), before);
}

TEST(Engine, AParameterThatBreaksItsConditionStopsTheSetBeforeItApplies) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "tiles", "version": 1, "strategy": "once",
      "params": { "TILE": 64, "VEC": { "default": 4, "valid": "$TILE % $VEC == 0",
                                       "doc": "elements a workitem moves at once" } },
      "rules": [ { "name": "grid", "match": { "nodes": { "v": { "dim": "Linear" } } },
                   "rewrite": { "add": { "nodes": { "w": { "dim": "Workgroup", "size": "ceildiv(v.size, $TILE)" } } } } } ] })json");
    KernelGraph graph = translate(axpy());
    std::string const before = toText(graph);
    EXPECT_EQ(errorOf([&] {
                  apply(set, graph, {.parameters = {{"VEC", 3}}});
              }),
              "inline.rules.json:2:63: error: rule set 'tiles': VEC = 3 is not valid: it needs "
              "$TILE % $VEC == 0 (elements a workitem moves at once) [at /params/VEC/valid]");
    EXPECT_EQ(toText(graph), before);
    EXPECT_EQ(apply(set, graph, {.parameters = {{"VEC", 8}}}).applications, 1);
}

TEST(Engine, RemovingANodeThatAnEdgeStillTouchesIsRefused) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "dangling", "version": 1, "strategy": "once",
      "rules": [ { "name": "drop-user", "match": { "nodes": { "u": { "dim": "User" } } },
                   "rewrite": { "remove": ["u"] } } ] })json");
    KernelGraph graph = translate(axpy());
    std::string const before = toText(graph);
    EXPECT_EQ(errorOf([&] { apply(set, graph, {}); }),
              "error: rule 'drop-user' removes dimension #2 but leaves Split edge #5 touching it; "
              "remove or "
              "re-connect that edge in the same rule");
    EXPECT_EQ(toText(graph), before);
}

TEST(Engine, OnceFirstAndTry) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "strategies", "version": 1,
      "strategy": { "seq": [ { "first": ["low", "high"] }, { "once": ["low"] },
                             { "try": [ { "once": ["fails"] } ] } ] },
      "rules": [
        { "name": "low", "match": { "nodes": { "k": { "op": "Kernel" } } },
          "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } },
        { "name": "high", "priority": 5, "match": { "nodes": { "k": { "op": "Kernel" } } },
          "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 3 } } } } },
        { "name": "fails", "match": { "nodes": { "u": { "dim": "User" } } }, "rewrite": { "remove": ["u"] } } ] })json");
    KernelGraph graph = translate(axpy());
    std::vector<std::string> applied;
    ApplyResult const result = apply(
        set, graph,
        {.observe = [&](Application const& a, KernelGraph const&) { applied.push_back(a.rule); }});
    EXPECT_EQ(applied,
              (std::vector<std::string>{"high", "low"})); // `first` took the higher priority
    EXPECT_EQ(result.applications, 2);                    // the failed `try` is rolled back
    EXPECT_EQ(countKind(graph, "Unroll"), 2);
    EXPECT_EQ(countKind(graph, "User"), 3);
}

TEST(Engine, ProvenanceNamesTheRuleAndItsMatch) {
    RuleSet const set = loadRuleSet(KILN_SOURCE_DIR "/rules/linear-to-workitems.rules.json");
    KernelGraph graph = translate(axpy());
    apply(set, graph, {});
    int fromGrid = 0;
    for (auto const& [id, p] : graph.provenance)
        if (p.rule == "make-grid") {
            ++fromGrid;
            EXPECT_EQ(p.application, 1);
            EXPECT_EQ(p.parents.size(), 2u); // the Kernel and the Linear value it matched
        }
    EXPECT_EQ(fromGrid, 2); // the Workgroup and the Workitem
}

TEST(Engine, WhyNotSaysWhichConstraintFailed) {
    RuleSet const set = loadRuleSet(KILN_SOURCE_DIR "/rules/linear-to-workitems.rules.json");
    KernelGraph graph = translate(axpy());
    std::map<std::string, std::int64_t> params{{"WG_SIZE", 64}, {"VEC", 4}};
    RuleContext const context{.parameters = &params};
    Rule const& tile = *set.find("tile-linear");
    // Element #2 is the User tensor X, not a Linear value.
    EXPECT_EQ(whyNot(tile, graph, "values", 2, context), "'values' wants Linear but #2 is User");
    // No grid yet: the pattern needs a Workgroup.
    EXPECT_EQ(whyNot(tile, graph, "values", 4, context),
              "there is no Workgroup in the graph to be 'wg'");
    apply(set, graph, {.parameters = params});
    EXPECT_EQ(whyNot(tile, graph, "values", 4, context),
              "negative pattern 0 ('not' entry 0) exists");
}

TEST(Engine, GuardsThatCannotBeDecidedBeforeLaunchDoNotFire) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "divisible", "version": 1, "strategy": "once",
      "rules": [ { "name": "only-multiples-of-64", "match": { "nodes": { "v": { "dim": "Linear" } } },
                   "where": "v.size % 64 == 0",
                   "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } } ] })json");
    KernelGraph graph = translate(axpy()); // N is known only at launch
    EXPECT_EQ(apply(set, graph, {}).applications, 0);
    std::map<std::string, std::int64_t> none;
    EXPECT_EQ(whyNot(set.rules[0], graph, "v", 4, RuleContext{.parameters = &none}),
              "the guard 'v.size % 64 == 0' cannot be decided before launch (N % 64 == 0)");
}

// A guard that divides by zero fails for every problem, so it is an error at the rule, not a
// guard "that cannot be decided before launch".
TEST(Engine, AGuardThatDividesByAZeroParameterIsAnError) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "per-tile", "version": 1, "strategy": "once",
      "params": { "T": 4 },
      "rules": [ { "name": "whole-tiles", "match": { "nodes": { "v": { "dim": "Linear" } } },
                   "where": "v.size % $T == 0",
                   "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": 2 } } } } } ] })json");
    KernelGraph graph = translate(axpy());
    EXPECT_EQ(errorOf([&] {
                  apply(set, graph, {.parameters = {{"T", 0}}});
              }),
              "inline.rules.json:3:18: error: rule 'whole-tiles': 'v.size % $T == 0' divides by "
              "zero (at 'N % 0') [at /rules/0]");
}

// Rule arithmetic that gives a dimension a size below 1 is an error at the rule, with the
// application that computed it.
TEST(Engine, ASizeBelowOneNamesTheRuleAndItsApplication) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "shrink", "version": 1, "strategy": "once",
      "params": { "EXTRA": 2 },
      "rules": [ { "name": "unroll-less", "match": { "nodes": { "v": { "dim": "Linear" } } },
                   "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": "4 - $EXTRA" } } } } } ] })json");
    KernelGraph graph = translate(axpy());
    EXPECT_EQ(apply(set, graph, {}).applications, 1);
    KernelGraph again = translate(axpy());
    EXPECT_EQ(errorOf([&] {
                  apply(set, again, {.parameters = {{"EXTRA", 6}}});
              }),
              "inline.rules.json:3:18: error: rule 'unroll-less' (application 1): the size of "
              "'u', '4 - $EXTRA', is -2; a dimension's size must be positive [at /rules/0]");
}

TEST(Engine, GuardsReadFactsAndCapabilitiesOfTheTarget) {
    RuleSet const set = ruleSet(R"json({ "ruleset": "staged", "version": 1, "strategy": "once",
      "params": { "MT": 128 },
      "rules": [ { "name": "fits-in-shared", "match": { "nodes": { "v": { "dim": "Linear" } } },
                   "where": "$MT * $MT * 4 <= arch.shared_bytes && arch.HasWGMMA == 1",
                   "rewrite": { "add": { "nodes": { "s": { "dim": "Shared", "size": "$MT * $MT", "dtype": "like v" } } } } } ] })json");
    KernelGraph hopper = translate(axpy()), ampere = hopper;
    EXPECT_EQ(apply(set, hopper, {.arch = archFacts("sm_90a")}).applications,
              1); // 64 KiB <= 227 KiB, has wgmma
    EXPECT_EQ(apply(set, ampere, {.arch = archFacts("sm_80")}).applications,
              0); // no wgmma on sm_80
    EXPECT_EQ(errorOf([&] { apply(set, ampere, {}); }),
              "inline.rules.json:3:18: error: rule 'fits-in-shared': arch.shared_bytes is not "
              "known (no target "
              "given) [at /rules/0]");
    // arch-db's message, every target it has listed.
    std::string known;
    for (auto const& name : arch::ArchLibrary::instance().targetNames())
        known += (known.empty() ? "" : ", ") + name;
    EXPECT_EQ(errorOf([] { archFacts("sm_91"); }),
              "error: target 'sm_91' is unknown; did you mean 'sm_90'? known targets: " + known);
}

TEST(Engine, TheSemanticCheckNamesAWrongGemmRule) {
    RuleSet set = loadRuleSet(KILN_SOURCE_DIR "/rules/gemm-macro-tiles.rules.json");
    // Break one rule: tile the K axis of a transposed B onto the grid instead of its N axis.
    for (auto& rule : set.rules)
        if (rule.name == "distribute-rhs-columns-transposed")
            rule.rewrite.addEdges[0].tails.fixed = {"a1"};
    Command const command = loadCommand(KILN_SOURCE_DIR "/examples/gemm.json");
    KernelGraph graph = translate(command);
    // K > N: the workgroups along N cannot cover B's K axis, so some of B is never loaded.
    SemanticCheck const check(command,
                              {{"M", 40}, {"N", 24}, {"K", 40}, {"alpha", 1.5}, {"beta", -0.5}}, 9);
    EngineOptions options{.parameters = {{"MT_M", 16}, {"MT_N", 8}}};
    options.observe = [&](Application const& a, KernelGraph const& after) {
        check.check(after, fmt::format("rule '{}'", a.rule));
    };
    std::string const error = errorOf([&] { apply(set, graph, options); });
    EXPECT_EQ(error.substr(0, error.find(" by ")),
              "error: rule 'distribute-rhs-columns-transposed' changed the result: tensor 'D' "
              "differs from the "
              "Command's meaning");
}
