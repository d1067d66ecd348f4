#include "kiln/rules/Pipeline.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/RuleJson.h"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <set>

namespace kiln::rules {

Pipeline loadPipeline(std::string const& path) {
    JsonValue const root = readJsonFile(path);
    root.allowOnly({"pipeline", "version", "doc", "params", "steps"});
    Pipeline p{.name = root["pipeline"].asNonEmptyString(), .file = path};
    if (root["version"].asInt() != 1)
        root["version"].fail(fmt::format(
            "unsupported pipeline version {}; this Kiln reads version 1", root["version"].asInt()));
    p.doc = root.stringOr("doc", "");
    if (auto params = root.find("params"))
        for (auto const& [name, value] : params->members())
            p.defaults[name] = value.asInt();
    std::set<std::string> known;
    for (auto const& [name, value] : p.defaults)
        known.insert(name);

    auto const directory = std::filesystem::path(path).parent_path();
    for (auto const& s : root["steps"].elements()) {
        s.allowOnly({"ruleset", "native", "args", "when", "doc"});
        PipelineStep step{.at = s.location()};
        if (s.has("ruleset") == s.has("native"))
            s.fail("a step needs exactly one of \"ruleset\" (a rule set file) or \"native\" (a "
                   "native step)");
        if (auto file = s.find("ruleset")) {
            step.rules = loadRuleSet((directory / file->asNonEmptyString()).string());
            step.name = step.rules->name;
            for (auto const& param : step.rules->parameters)
                known.insert(param.name);
        } else {
            std::string const n = s["native"].asNonEmptyString();
            step.native = findNativeStep(n);
            if (!step.native) {
                std::vector<std::string> names;
                for (auto const& ns : nativeSteps())
                    names.emplace_back(ns.name);
                auto near = closestMatch(n, std::span<std::string const>(names));
                s["native"].fail(
                    fmt::format("unknown native step '{}'{}", n,
                                near ? fmt::format(" (did you mean '{}'?)", *near) : ""));
            }
            step.name = std::string(step.native->name);
            if (auto args = s.find("args"))
                for (auto const& [name, value] : args->members())
                    step.args[name] = value.asInt();
        }
        if (auto when = s.find("when")) {
            try {
                step.when = parseRuleExpression(when->asString(), RuleScope{{}, known});
            } catch (ExpressionError const& e) {
                when->failInString(e.offset(), e.message());
            }
            // Without a target every fact reads 0: a misspelt one would pass unseen.
            for (auto const& name : step.when->placeholders)
                if (name.kind == Placeholder::Kind::ArchFact && !isArchFact(name.attribute)) {
                    std::string const text = when->asString();
                    auto const at = text.find("arch." + name.attribute);
                    when->failInString(at == std::string::npos ? 0 : at,
                                       fmt::format("arch.{} is no fact or capability of any "
                                                   "known target",
                                                   name.attribute));
                }
        }
        p.steps.push_back(std::move(step));
    }
    return p;
}

std::set<std::string> parameterNames(Pipeline const& pipeline) {
    std::set<std::string> names;
    for (auto const& [name, value] : pipeline.defaults)
        names.insert(name);
    for (auto const& step : pipeline.steps)
        if (step.rules)
            for (auto const& param : step.rules->parameters)
                names.insert(param.name);
    return names;
}

std::vector<StepReport> lower(Pipeline const& pipeline, KernelGraph& graph,
                              EngineOptions const& options) {
    EngineOptions stepOptions = options;
    stepOptions.parameters = pipeline.defaults;
    for (auto const& [name, value] : options.parameters)
        stepOptions.parameters[name] = value;
    // One set of limits for the whole lowering: what a step uses, the next cannot.
    if (!stepOptions.spent.start)
        stepOptions.spent.start = std::chrono::steady_clock::now();

    // The steps run on a copy, so that a step that fails leaves no half-lowered graph behind.
    KernelGraph work = graph;
    std::vector<StepReport> reports;
    for (auto const& step : pipeline.steps) {
        StepReport report{.name = step.name, .declarative = step.rules.has_value()};
        if (step.when) {
            // Without a target, a step's `when` reads every arch fact as 0 (no capability):
            // the steps that do not ask for a target's feature run.
            static ArchFacts const noTarget = [](std::string const&) {
                return std::optional<std::int64_t>(0);
            };
            RuleContext c{.graph = &work,
                          .parameters = &stepOptions.parameters,
                          .arch = options.arch ? options.arch : noTarget};
            GuardValue const g = evaluateGuard(*step.when, c);
            if (!g.decided)
                throw UserError(
                    fmt::format("step '{}': 'when' must be decidable from parameters, got {}",
                                step.name, g.value),
                    step.at);
            if (!g.holds) {
                report.skipped = true;
                report.spent = stepOptions.spent;
                reports.push_back(report);
                continue;
            }
        }
        auto const start = std::chrono::steady_clock::now();
        if (step.rules) {
            ApplyResult const applied = apply(*step.rules, work, stepOptions);
            report.applications = applied.applications;
            stepOptions.spent = applied.spent;
        } else {
            step.native->run(work, step.args);
            // From the start as the rule sets moved it past their observers' time.
            if (std::chrono::steady_clock::now() >
                deadline(*stepOptions.spent.start, options.limits))
                throw LimitError(Limit::Time,
                                 fmt::format("pipeline '{}' reached the lowering's limit of {} "
                                             "in native step '{}'",
                                             pipeline.name, describe(Limit::Time, options.limits),
                                             step.name),
                                 step.at);
        }
        report.microseconds =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count();
        report.spent = stepOptions.spent;
        reports.push_back(report);
    }
    graph = std::move(work);
    return reports;
}

} // namespace kiln::rules
