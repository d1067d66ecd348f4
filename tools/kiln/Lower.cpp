// kiln lower CMD.json --pipeline P.json [--params A=1,B=2] [--check] [--trace t.json]
//            [--dot-each DIR] [--stats] [-o graph.json]
// Translates a Command and lowers it through a pipeline of rule sets, printing the result.
// --check runs the reference interpreter after every rule application and names the first one
// that changes the result.
#include "Output.h"
#include "Params.h"
#include "Problem.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphDot.h"
#include "kiln/graph/GraphJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/rules/Trace.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/core.h>

namespace kiln::cli {

void addLower(CLI::App& app) {
    struct Options {
        std::string command, pipeline, output, trace, dotEach, target;
        std::vector<std::string> params, sizes;
        bool check = false, stats = false, quiet = false;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand("lower",
                                   "Lower a Command's KernelGraph through a pipeline of rule sets");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--pipeline", o->pipeline, "Pipeline file (JSON)")->required();
    sub->add_option("--params", o->params, "Schedule parameters, NAME=INT[,NAME=INT...]");
    sub->add_option("--target", o->target,
                    "Target whose facts rules read as arch.NAME (e.g. sm_90a)");
    sub->add_option("--size", o->sizes,
                    "Problem size or scalar for --check, NAME=VALUE (repeatable)");
    sub->add_flag("--check", o->check, "Check the meaning after every rule application");
    sub->add_flag("--stats", o->stats,
                  "Print each step's applications and time, and the declarative share");
    sub->add_flag("-q,--quiet", o->quiet, "Do not print the lowered graph");
    sub->add_option("--trace", o->trace, "Write every rule application to this JSON file");
    sub->add_option("--dot-each", o->dotEach,
                    "Write a Graphviz DOT file after every application to this folder");
    sub->add_option("-o,--output", o->output, "Write the lowered KernelGraph as JSON to this file");
    sub->callback([o] {
        Command const command = loadCommand(o->command);
        rules::Pipeline const pipeline = rules::loadPipeline(o->pipeline);
        KernelGraph graph = translate(command);

        std::optional<SemanticCheck> semantics;
        if (o->check) {
            semantics.emplace(command, problemOf(command, o->sizes), 1);
            semantics->check(graph, "translate");
        }
        std::unique_ptr<rules::Trace> trace;
        if (!o->trace.empty())
            trace = std::make_unique<rules::Trace>(o->trace);
        if (!o->dotEach.empty()) {
            std::error_code ec;
            std::filesystem::create_directories(o->dotEach, ec);
            if (ec)
                fail("cannot make the folder '{}': {}", o->dotEach, ec.message());
            writeFile(fmt::format("{}/000-translated.dot", o->dotEach), toDot(graph));
        }
        rules::EngineOptions options{.parameters = parseParams(o->params)};
        checkParams(options.parameters, pipeline, o->pipeline);
        std::size_t drawn = 0; // DOT files after applications, numbered across every rule set
        if (!o->target.empty())
            options.arch = rules::archFacts(o->target);
        if (semantics || trace || !o->dotEach.empty())
            options.observe = [&](rules::Application const& a, KernelGraph const& after) {
                if (trace)
                    trace->record(a);
                if (!o->dotEach.empty())
                    writeFile(
                        fmt::format("{}/{:03}-{}-{}.dot", o->dotEach, ++drawn, a.ruleset, a.rule),
                        toDot(after));
                if (semantics)
                    semantics->check(after, fmt::format("rule '{}' of '{}' (application {})",
                                                        a.rule, a.ruleset, a.number));
            };
        auto const reports = rules::lower(pipeline, graph, options);

        if (!o->quiet)
            fmt::print("{}", toText(graph));
        if (o->stats) {
            int declarative = 0, run = 0;
            fmt::print("\n{:<32} {:>6} {:>12} {:>10}\n", "step", "kind", "applications", "time");
            for (auto const& r : reports) {
                fmt::print("{:<32} {:>6} {:>12} {:>8.1f}us{}\n", r.name,
                           r.declarative ? "rules" : "native", r.applications, r.microseconds,
                           r.skipped ? "  (skipped)" : "");
                run += r.skipped ? 0 : 1;
                declarative += (!r.skipped && r.declarative) ? 1 : 0;
            }
            fmt::print("{} of {} steps run were declarative ({:.0f}%)\n", declarative, run,
                       run ? 100.0 * declarative / run : 100.0);
            if (!reports.empty()) {
                rules::Usage const& spent = reports.back().spent;
                rules::Limits const& limits = options.limits;
                fmt::print("of the limits: {} of {} applications, {} of {} strategy steps, {} of "
                           "{} matcher candidates\n",
                           spent.applications, limits.applications, spent.steps, limits.steps,
                           spent.candidates, limits.candidates);
            }
        }
        if (semantics)
            fmt::print("check: every application kept the result (max relative error {:.3g}, "
                       "tolerance {:.0e})\n",
                       semantics->lastError(), semantics->tolerance());
        if (!o->output.empty())
            writeFile(o->output, saveGraph(graph));
    });
}

} // namespace kiln::cli
