// kiln translate CMD.json [-o graph.json] [--dot graph.dot]: the high-level KernelGraph of a
// Command, printed as text, and optionally saved as JSON and Graphviz DOT.
#include "kiln/graph/Translate.h"

#include "Output.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphDot.h"
#include "kiln/graph/GraphJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Verify.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace kiln::cli {

void addTranslate(CLI::App& app) {
    struct Options {
        std::string command, output, dot;
    };
    auto options = std::make_shared<Options>();
    auto* sub = app.add_subcommand("translate",
                                   "Translate a Command (JSON) into its KernelGraph and print it");
    sub->add_option("command", options->command, "Command file (JSON)")->required();
    sub->add_option("-o,--output", options->output, "Write the KernelGraph as JSON to this file");
    sub->add_option("--dot", options->dot, "Write the KernelGraph as Graphviz DOT to this file");
    sub->callback([options] {
        Command const command = loadCommand(options->command);
        KernelGraph const graph = translate(command);
        check(graph, "translate");
        fmt::print("{}", toText(graph));
        if (!options->output.empty())
            writeFile(options->output, saveGraph(graph));
        if (!options->dot.empty())
            writeFile(options->dot, toDot(graph));
    });
}

} // namespace kiln::cli
