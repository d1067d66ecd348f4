#include "kiln/rules/RuleTests.h"

#include "kiln/graph/CommandJson.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/RuleJson.h"

#include <filesystem>
#include <fmt/format.h>

namespace kiln::rules {

std::int64_t countKind(KernelGraph const& graph, std::string const& kind) {
    std::int64_t n = 0;
    if (auto k = parseDimensionKind(kind))
        for (Id d : graph.coordinates.nodes())
            n += graph.coordinates.node(d).kind == *k;
    else if (auto o = parseOperationKind(kind))
        for (Id op : graph.control.nodes())
            n += graph.control.node(op).kind == *o;
    else if (auto e = parseCoordinateEdgeKind(kind))
        for (Id id : graph.coordinates.edges())
            n += graph.coordinates.edge(id).kind == *e;
    else if (auto c = parseControlEdgeKind(kind))
        for (Id id : graph.control.edges())
            n += graph.control.edge(id).kind == *c;
    return n;
}

namespace {

RuleTestResult runOne(RuleSet const& rules, RuleTest const& test) {
    RuleTestResult result{.name = test.name};
    auto const directory = std::filesystem::path(rules.file).parent_path();
    try {
        Command const command = loadCommand((directory / test.command).string());
        KernelGraph graph = translate(command);
        EngineOptions options{.parameters = test.params};
        std::optional<SemanticCheck> semantics;
        if (test.check) {
            semantics.emplace(
                command, test.problem ? readProblem(command, *test.problem) : command.defaults, 1);
            options.observe = [&](Application const& a, KernelGraph const& after) {
                semantics->check(after,
                                 fmt::format("rule '{}' (application {})", a.rule, a.number));
            };
        }
        for (auto const& before : test.before)
            apply(loadRuleSet((directory / before).string()), graph, options);
        ApplyResult const applied = apply(rules, graph, options);
        if (test.expectError) {
            result.message =
                fmt::format("expected an error containing '{}', but the rule set applied ({} "
                            "applications)",
                            *test.expectError, applied.applications);
            return result;
        }
        for (auto const& [kind, expected] : test.expectCounts) {
            std::int64_t const actual = countKind(graph, kind);
            if (actual != expected) {
                result.message = fmt::format("expected {} {}, found {}", expected, kind, actual);
                return result;
            }
        }
        result.passed = true;
        result.message = fmt::format("{} applications, {} elements", applied.applications,
                                     graph.coordinates.size() + graph.control.size());
    } catch (UserError const& e) {
        if (test.expectError &&
            std::string(e.what()).find(*test.expectError) != std::string::npos) {
            result.passed = true;
            result.message = "failed as expected";
        } else
            result.message = e.what();
    }
    return result;
}

} // namespace

std::vector<RuleTestResult> runRuleTests(RuleSet const& rules) {
    std::vector<RuleTestResult> results;
    for (auto const& test : rules.tests)
        results.push_back(runOne(rules, test));
    return results;
}

} // namespace kiln::rules
