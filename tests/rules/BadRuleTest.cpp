// Bad rule files: every mistake is reported at file:line:col with the JSON pointer, including
// the column of a name inside an expression string.
#include "kiln/rules/RuleJson.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::rules;

namespace {
std::string errorOf(std::string const& text) {
    try {
        parseRuleSet(text, "bad.rules.json");
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

std::string const kHead = R"json({ "ruleset": "r", "version": 1, "params": { "MT": 64 },
  "rules": [ { "name": "x", )json";
} // namespace

TEST(BadRule, UnknownVariableInAGuardPointsAtIt) {
    EXPECT_EQ(
        errorOf(kHead + R"json("match": { "nodes": { "m": { "dim": "SubDimension" } } },
               "where": "m.size % $MT == n.size" } ] })json"),
        "bad.rules.json:3:42: error: unknown variable 'n' (did you mean 'm'?) [at /rules/0/where]");
}

TEST(BadRule, UnknownParameterPointsAtIt) {
    EXPECT_EQ(errorOf(kHead + R"json("match": { "nodes": { "m": { "dim": "SubDimension" } } },
               "where": "m.size % $MX == 0" } ] })json"),
              "bad.rules.json:3:35: error: unknown parameter '$MX' (did you mean '$MT'?) [at "
              "/rules/0/where]");
}

TEST(BadRule, UnknownDimensionKind) {
    EXPECT_EQ(
        errorOf(kHead + R"json("match": { "nodes": { "m": { "dim": "SubDimenson" } } } } ] })json"),
        "bad.rules.json:2:65: error: unknown dimension kind 'SubDimenson' (did you mean "
        "'SubDimension'?); "
        "expected one of User, SubDimension, Linear, MacroTile, MacroTileNumber, MacroTileIndex, "
        "WaveTile, "
        "ThreadTile, Workgroup, Workitem, ForLoop, Unroll, Register, Shared [at "
        "/rules/0/match/nodes/m/dim]");
}

TEST(BadRule, EdgeToAnUndeclaredVariable) {
    EXPECT_EQ(errorOf(kHead + R"json("match": { "nodes": { "m": { "dim": "SubDimension" } },
               "edges": [ { "edge": "Tile", "tails": ["m"], "heads": ["n", "i"] } ] } } ] })json"),
              "bad.rules.json:3:71: error: unknown variable 'n'; declare it under \"nodes\" [at "
              "/rules/0/match/edges/0/heads/0]");
}

TEST(BadRule, WrongArity) {
    EXPECT_EQ(
        errorOf(kHead +
                R"json("match": { "nodes": { "a": { "dim": "Linear" }, "b": { "dim": "Linear" } },
               "edges": [ { "edge": "PassThrough", "tails": ["a", "b"], "heads": ["b"] } ] } } ] })json"),
        "bad.rules.json:3:61: error: PassThrough takes at most 1 tails [at "
        "/rules/0/match/edges/0/tails]");
}

TEST(BadRule, RemovingAnUnnamedEdge) {
    EXPECT_EQ(errorOf(kHead + R"json("match": { "nodes": { "m": { "dim": "Linear" } } },
               "rewrite": { "remove": ["t"] } } ] })json"),
              "bad.rules.json:3:40: error: 't' is not a matched node or named edge (edges to "
              "remove need \"as\") "
              "[at /rules/0/rewrite/remove/0]");
}

TEST(BadRule, UnknownRuleInTheStrategy) {
    EXPECT_EQ(errorOf(R"json({ "ruleset": "r", "version": 1, "strategy": { "once": ["y"] },
  "rules": [ { "name": "x", "match": { "nodes": { "m": { "dim": "Linear" } } } } ] })json"),
              "bad.rules.json:1:56: error: unknown rule 'y' in the strategy [at /strategy/once/0]");
}

TEST(BadRule, SyntaxErrorInAnAttribute) {
    EXPECT_EQ(errorOf(kHead + R"json("match": { "nodes": { "m": { "dim": "Linear" } } },
               "rewrite": { "add": { "nodes": { "u": { "dim": "Unroll", "size": "ceildiv(m.size, )" } } } } } ] })json"),
              "bad.rules.json:3:98: error: unexpected ')' [at /rules/0/rewrite/add/nodes/u/size]");
}
