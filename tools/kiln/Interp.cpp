// kiln interp CMD.json [--check] [--size M=128 ...] [--seed N]: runs the Command's KernelGraph
// in the reference interpreter on random inputs; with --check, also runs the direct semantics
// and fails when they differ by more than the tolerance of the stored types.
#include "Problem.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Interpreter.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Translate.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fmt/core.h>

namespace kiln::cli {

void addInterp(CLI::App& app) {
    struct Options {
        std::string command;
        std::vector<std::string> sizes;
        std::uint64_t seed = 1;
        bool check = false;
    };
    auto options = std::make_shared<Options>();
    auto* sub =
        app.add_subcommand("interp", "Run a Command's KernelGraph in the reference interpreter");
    sub->add_option("command", options->command, "Command file (JSON)")->required();
    sub->add_option("--size", options->sizes, "Problem size or scalar, NAME=VALUE (repeatable)");
    sub->add_option("--seed", options->seed, "Seed of the random inputs");
    sub->add_flag("--check", options->check, "Compare with the direct Command semantics");
    sub->callback([options] {
        Command const command = loadCommand(options->command);
        KernelGraph const graph = translate(command);
        auto const problem = problemOf(command, options->sizes);
        if (!options->check) {
            Bindings bindings = randomBindings(command, problem, options->seed);
            interpret(graph, bindings);
            for (auto const& op : command.operations())
                if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
                    auto const& t = bindings.tensors.at(op.tensor);
                    double sum = 0;
                    for (double v : t.data)
                        sum += v;
                    fmt::print("{}: {} elements, sum {:.6g}\n", op.tensor, t.elements(), sum);
                }
            return;
        }
        SemanticCheck const semantics(command, problem, options->seed);
        double const worst = semantics.measure(graph);
        for (auto const& [tensor, error] : semantics.errors())
            fmt::print("{}: max relative error {:.3g} (tolerance {:.0e})\n", tensor, error,
                       semantics.tolerance());
        if (!(worst <= semantics.tolerance()))
            fail("interpreter and direct semantics differ by {:.3g} (tolerance {:.0e})", worst,
                 semantics.tolerance());
    });
}

} // namespace kiln::cli
