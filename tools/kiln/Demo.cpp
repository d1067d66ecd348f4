// kiln demo [DIR] [--pipelines DIR]: Kiln's main job until the tuner exists. For every Command
// in DIR it translates and verifies, checks the interpreter against the direct semantics, then
// lowers the graph through every shipped pipeline that applies, checking the meaning after
// every rule application, and prints one table row per Command. Fails when any Command fails.
#include "Problem.h"
#include "Subcommands.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Ptxas.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/core.h>

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> filesIn(std::string const& directory, std::string_view suffix) {
    std::error_code ec;
    if (!fs::is_directory(directory, ec))
        fail("'{}' is not a folder", directory);
    std::vector<fs::path> files;
    for (auto const& entry : fs::directory_iterator(directory))
        if (entry.path().filename().string().ends_with(suffix))
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

// Lowers `graph` through each pipeline in turn, checking after every application; returns
// "name: N" for each pipeline that applied a rule.
std::string lowerThroughPipelines(KernelGraph& graph, std::vector<rules::Pipeline> const& pipelines,
                                  SemanticCheck const& semantics, double& worst) {
    std::string lowered;
    for (auto const& pipeline : pipelines) {
        rules::EngineOptions options;
        options.observe = [&](rules::Application const& a, KernelGraph const& after) {
            semantics.check(after, fmt::format("rule '{}' of '{}'", a.rule, a.ruleset));
            worst = std::max(worst, semantics.lastError());
        };
        std::int64_t applications = 0;
        for (auto const& step : rules::lower(pipeline, graph, options))
            applications += step.applications;
        if (applications)
            lowered +=
                fmt::format("{}{}: {}", lowered.empty() ? "" : ", ", pipeline.name, applications);
    }
    return lowered.empty() ? "no pipeline yet" : lowered;
}

// The NVIDIA target whose PTX the demo shows: the first of arch-db's default targets that is one.
std::string ptxTarget() {
    arch::ArchLibrary const& library = arch::ArchLibrary::instance();
    for (auto const& name : library.defaultTargets())
        if (library.target(name).vendor() == arch::Vendor::Nvidia)
            return name;
    fail("{} names no NVIDIA default target, whose PTX kiln demo shows", library.origin());
}

// The lowered graph's PTX for `target`, assembled by ptxas where there is one: its register
// count, or what code generation does not cover yet.
std::string ptxFor(KernelGraph const& graph, std::string const& target) {
    try {
        auto const kernel = lowering::emitKernel(graph, {.target = target});
        auto const assembled = runtime::assemblePtx(kernel.code, target);
        if (assembled)
            return fmt::format("{} registers", assembled.value().registers);
        if (assembled.error().code() == runtime::ErrorCode::NotFound)
            return "emitted (no ptxas)";
        fail("{}", assembled.error().message());
    } catch (UserError const&) {
        return "not yet";
    }
}

} // namespace

void addDemo(CLI::App& app) {
    struct Options {
        std::string examples = "examples", pipelines = "rules";
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand("demo", "Translate, lower and check every Command in a folder");
    sub->add_option("dir", o->examples, "Folder of Command files (default: examples)");
    sub->add_option("--pipelines", o->pipelines,
                    "Folder of *.pipeline.json files (default: rules)");
    sub->callback([o] {
        // Commands: the *.json files that are not search spaces or pipelines.
        std::vector<fs::path> files;
        for (auto const& f : filesIn(o->examples, ".json")) {
            std::string const name = f.filename().string();
            if (!name.ends_with(".space.json") && !name.ends_with(".pipeline.json"))
                files.push_back(f);
        }
        if (files.empty())
            fail("'{}' holds no Command files (*.json)", o->examples);
        std::vector<rules::Pipeline> pipelines;
        for (auto const& p : filesIn(o->pipelines, ".pipeline.json"))
            pipelines.push_back(rules::loadPipeline(p.string()));

        std::string const target = ptxTarget();
        fmt::print("{:<24} {:>4} {:>5} {:>5} {:>10}  {:<22} {:>9}  {:<22} {:<18} {}\n", "command",
                   "ops", "dims", "edges", "translate", "problem", "max error",
                   "lowered (applications)", "PTX for " + target, "result");
        int failures = 0;
        for (auto const& file : files) {
            std::string row = fmt::format("{:<24}", file.filename().string());
            try {
                Command const command = loadCommand(file.string());
                auto const start = std::chrono::steady_clock::now();
                KernelGraph const graph = translate(command);
                check(graph, "translate");
                double const micros = std::chrono::duration<double, std::micro>(
                                          std::chrono::steady_clock::now() - start)
                                          .count();
                auto const problem = problemOf(command, {});
                std::string sizes;
                for (auto const& s : command.sizes())
                    sizes += fmt::format("{}{}={}", sizes.empty() ? "" : " ", s,
                                         problem.count(s) ? problem.at(s) : 0);
                SemanticCheck const semantics(command, problem, 1);
                double worst = semantics.measure(graph);
                KernelGraph graphLowered = graph;
                std::string const lowered =
                    lowerThroughPipelines(graphLowered, pipelines, semantics, worst);
                std::string const ptx = ptxFor(graphLowered, target);
                bool const ok = worst <= semantics.tolerance();
                failures += ok ? 0 : 1;
                row +=
                    fmt::format(" {:>4} {:>5} {:>5} {:>8.1f}us  {:<22} {:>9.2g}  {:<22} {:<18} {}",
                                graph.control.nodes().size(), graph.coordinates.nodes().size(),
                                graph.coordinates.edges().size(), micros, sizes, worst, lowered,
                                ptx, ok ? "ok" : "MISMATCH");
            } catch (UserError const& e) {
                ++failures;
                row += fmt::format("  FAILED: {}", e.what());
            }
            fmt::print("{}\n", row);
        }
        fmt::print(
            "\n{} of {} commands translated, lowered where a pipeline applies, and agree with "
            "their direct semantics after every step.\n",
            files.size() - static_cast<std::size_t>(failures), files.size());
        if (failures)
            fail("{} command{} failed", failures, failures == 1 ? "" : "s");
    });
}

} // namespace kiln::cli
