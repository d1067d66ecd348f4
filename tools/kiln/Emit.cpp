// kiln emit CMD.json --pipeline P.json [--params A=1] [--target sm_90a] [-o DIR]
// Translates a Command, lowers it through a pipeline and writes the kernel's code and manifest:
// DIR/ENTRY.ptx and DIR/ENTRY.manifest.json, or the code on stdout without -o.
#include "Output.h"
#include "Params.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/core.h>

namespace kiln::cli {

void addEmit(CLI::App& app) {
    struct Options {
        std::string command, pipeline, target = "sm_90a", output;
        std::vector<std::string> params;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand("emit", "Lower a Command and write its kernel and manifest");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--pipeline", o->pipeline, "Pipeline file (JSON)")->required();
    sub->add_option("--params", o->params, "Schedule parameters, NAME=INT[,NAME=INT...]");
    sub->add_option("--target", o->target, "Target (sm_80, sm_90, sm_90a, ...)")
        ->capture_default_str();
    sub->add_option("-o,--output", o->output, "Folder for ENTRY.ptx and ENTRY.manifest.json");
    sub->callback([o] {
        Command const command = loadCommand(o->command);
        rules::Pipeline const pipeline = rules::loadPipeline(o->pipeline);
        KernelGraph graph = translate(command);
        rules::EngineOptions options{.parameters = parseParams(o->params),
                                     .arch = rules::archFacts(o->target)};
        rules::lower(pipeline, graph, options);
        lowering::CodegenOptions codegen{.target = o->target, .schedule = pipeline.defaults};
        for (auto const& [name, value] : options.parameters)
            codegen.schedule[name] = value;
        auto const kernel = lowering::emitKernel(graph, codegen);
        if (o->output.empty()) {
            fmt::print("{}", kernel.code);
            return;
        }
        std::error_code ec;
        std::filesystem::create_directories(o->output, ec);
        if (ec)
            fail("cannot make the folder '{}': {}", o->output, ec.message());
        writeFile(fmt::format("{}/{}.ptx", o->output, kernel.entry), kernel.code);
        writeFile(fmt::format("{}/{}.manifest.json", o->output, kernel.entry),
                  kernel.manifestJson());
        fmt::print("wrote {0}/{1}.ptx and {0}/{1}.manifest.json\n", o->output, kernel.entry);
    });
}

} // namespace kiln::cli
