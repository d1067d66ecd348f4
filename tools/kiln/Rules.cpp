// kiln rules test FILE...            runs the tests each rule set file carries
// kiln rules expand FILE             prints the rule set with its templates expanded (JSON)
// kiln rules why FILE RULE --at ID --command CMD [--before FILE...] [--params ...]
//                                    says why RULE does not match at element ID
#include "Params.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/RuleJson.h"
#include "kiln/rules/RuleTemplate.h"
#include "kiln/rules/RuleTests.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <span>

namespace kiln::cli {

void addRules(CLI::App& app) {
    auto* rules =
        app.add_subcommand("rules", "Test rule sets and explain why a rule does not match");
    rules->require_subcommand(1);

    auto files = std::make_shared<std::vector<std::string>>();
    auto* test = rules->add_subcommand("test", "Run the tests that rule set files carry");
    test->add_option("files", *files, "Rule set files")->required();
    test->callback([files] {
        int failed = 0, total = 0;
        for (auto const& file : *files) {
            rules::RuleSet const set = rules::loadRuleSet(file);
            for (auto const& r : rules::runRuleTests(set)) {
                ++total;
                failed += r.passed ? 0 : 1;
                fmt::print("{} {}: {}: {}\n", r.passed ? "PASS" : "FAIL", set.name, r.name,
                           r.message);
            }
        }
        fmt::print("{} of {} rule tests passed\n", total - failed, total);
        if (failed)
            fail("{} rule test{} failed", failed, failed == 1 ? "" : "s");
    });

    auto expandFile = std::make_shared<std::string>();
    auto* expand = rules->add_subcommand(
        "expand",
        "Print a rule set with its templates expanded, as JSON (the rules the engine runs)");
    expand->add_option("file", *expandFile, "Rule set file")->required();
    expand->callback([expandFile] {
        JsonValue const written = readJsonFile(*expandFile);
        rules::readRuleSet(written); // the expansion must also be a rule set that loads
        rules::ExpandedRuleSet const expanded = rules::expandRuleTemplates(written);
        fmt::print("{}\n", expanded.root().json().dump(2, ' ', false,
                                                       OrderedJson::error_handler_t::replace));
    });

    struct Why {
        std::string file, rule, command, variable;
        std::vector<std::string> before, params;
        Id at = 0;
    };
    auto why = std::make_shared<Why>();
    auto* explain =
        rules->add_subcommand("why", "Say why a rule does not match at a graph element");
    explain->add_option("file", why->file, "Rule set file")->required();
    explain->add_option("rule", why->rule, "Rule name")->required();
    explain->add_option("--at", why->at, "Element id (as `kiln translate` prints it, #N)")
        ->required();
    explain->add_option("--command", why->command, "Command whose graph to look in")->required();
    explain->add_option("--var", why->variable,
                        "Pattern variable bound to --at (default: the first node)");
    explain->add_option("--before", why->before, "Rule set files to apply first (repeatable)");
    explain->add_option("--params", why->params, "Schedule parameters, NAME=INT[,NAME=INT...]");
    explain->callback([why] {
        rules::RuleSet const set = rules::loadRuleSet(why->file);
        rules::Rule const* rule = set.find(why->rule);
        if (!rule)
            fail("rule set '{}' has no rule '{}'", set.name, why->rule);
        Command const command = loadCommand(why->command);
        KernelGraph graph = translate(command);
        rules::EngineOptions options{.parameters = parseParams(why->params)};
        for (auto const& b : why->before)
            rules::apply(rules::loadRuleSet(b), graph, options);
        if (!graph.coordinates.contains(why->at) && !graph.control.contains(why->at))
            fail("the graph has no element #{}", why->at);
        std::string variable =
            why->variable.empty() ? rule->match.nodes.front().variable : why->variable;
        // A variable the pattern does not have is bad input, not an answer.
        std::vector<std::string> variables;
        for (auto const& node : rule->match.nodes)
            variables.push_back(node.variable);
        if (std::find(variables.begin(), variables.end(), variable) == variables.end()) {
            auto const near = closestMatch(variable, std::span<std::string const>(variables));
            fail("--var {}: rule '{}' has no node variable '{}'{}; it has {}", variable, rule->name,
                 variable, near ? fmt::format(" (did you mean '{}'?)", *near) : "",
                 fmt::join(variables, ", "));
        }
        auto const params = rules::parameterValues(set, options.parameters);
        rules::RuleContext context{.parameters = &params};
        std::string const reason = rules::whyNot(*rule, graph, variable, why->at, context);
        fmt::print("{} at {} as '{}': {}\n", rule->name, elementText(graph, why->at), variable,
                   reason.empty() ? "matches" : reason);
    });
}

} // namespace kiln::cli
