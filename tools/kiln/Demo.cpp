// kiln demo [DIR]: Kiln's main job until the tuner exists. For every Command in DIR it
// translates, verifies, and checks the interpreter against the direct semantics, then prints
// one table row per Command. Fails when any Command fails.
#include "Check.h"
#include "Problem.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/core.h>

namespace kiln::cli {

void addDemo(CLI::App& app) {
    auto directory = std::make_shared<std::string>("examples");
    auto* sub = app.add_subcommand("demo", "Translate and check every Command in a folder");
    sub->add_option("dir", *directory, "Folder of Command files (default: examples)");
    sub->callback([directory] {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!fs::is_directory(*directory, ec))
            fail("'{}' is not a folder", *directory);
        std::vector<fs::path> files;
        for (auto const& entry : fs::directory_iterator(*directory))
            if (entry.path().extension() == ".json")
                files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        if (files.empty())
            fail("'{}' holds no Command files (*.json)", *directory);

        fmt::print("{:<26} {:>5} {:>6} {:>6} {:>11}  {:<24} {:>10}  {}\n", "command", "ops", "dims",
                   "edges", "translate", "problem", "max error", "result");
        int failures = 0;
        for (auto const& file : files) {
            std::string row = fmt::format("{:<26}", file.filename().string());
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
                CheckResult const result = checkAgainstReference(command, graph, problem, 1);
                bool const ok = result.worst <= toleranceOf(command);
                failures += ok ? 0 : 1;
                row += fmt::format(" {:>5} {:>6} {:>6} {:>9.1f}us  {:<24} {:>10.2g}  {}",
                                   graph.control.nodes().size(), graph.coordinates.nodes().size(),
                                   graph.coordinates.edges().size(), micros, sizes, result.worst,
                                   ok ? "ok" : "MISMATCH");
            } catch (UserError const& e) {
                ++failures;
                row += fmt::format("  FAILED: {}", e.what());
            }
            fmt::print("{}\n", row);
        }
        fmt::print("\n{} of {} commands translated and agree with their direct semantics.\n",
                   files.size() - static_cast<std::size_t>(failures), files.size());
        fmt::print(
            "(Lowering rule sets, code generation and tuning join this job as they land.)\n");
        if (failures)
            fail("{} command{} failed", failures, failures == 1 ? "" : "s");
    });
}

} // namespace kiln::cli
