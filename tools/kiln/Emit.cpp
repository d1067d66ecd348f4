// kiln emit CMD.json [--pipeline P.json | --pipelines DIR] [--params A=1] [--target T] [-o DIR]
//           [--specialize --size N=8192]
// Translates a Command, lowers it through a pipeline (without --pipeline, the first of DIR's
// *.pipeline.json, default rules/, whose lowered graph the code generator can write) and writes
// the kernel's code and manifest (with --specialize, the kernel made for the problem's sizes
// only, the one `kiln run --specialize` and `kiln tune --specialize` run;
// lowering::CodegenOptions::sizes): DIR/ENTRY.ptx and DIR/ENTRY.manifest.json for NVIDIA targets;
// for AMD targets (gfx90a, gfx942, gfx1100) the assembly DIR/ENTRY.s, its code object
// DIR/ENTRY.hsaco (assembled in memory, runtime/Assembler.h) and the manifest. Without -o, the code
// goes to stdout. Without --target, the target is arch-db's first default target.
#include "Output.h"
#include "Params.h"
#include "Problem.h"
#include "Subcommands.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/lowering/Compile.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Assembler.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <optional>

namespace kiln::cli {

void addEmit(CLI::App& app) {
    struct Options {
        std::string command, pipeline, pipelines = "rules", target, output;
        std::vector<std::string> params, sizes;
        bool specialize = false;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand("emit", "Lower a Command and write its kernel and manifest");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--pipeline", o->pipeline,
                    "Pipeline file (JSON); without it, the first of --pipelines that applies");
    sub->add_option("--pipelines", o->pipelines, "Folder of *.pipeline.json files")
        ->capture_default_str();
    sub->add_option("--params", o->params, "Schedule parameters, NAME=INT[,NAME=INT...]");
    // Not the list of arch-db's targets: the database is read when a command runs, so that a bad
    // KILN_ARCH_FILE is an error of the command that reads it, not of every command line.
    sub->add_option("--target", o->target,
                    "Target: one of arch-db's (default: its first default target; `kiln arch "
                    "list` shows both)");
    sub->add_option("-o,--output", o->output, "Folder for ENTRY.ptx and ENTRY.manifest.json");
    sub->add_option("--size", o->sizes, "Problem size, NAME=VALUE (repeatable; with --specialize)");
    sub->add_flag("--specialize", o->specialize,
                  "Emit the kernel for the problem's sizes only (the Command's defaults and "
                  "--size), as `kiln run --specialize` and `kiln tune --specialize` do");
    sub->callback([o] {
        Command const command = loadCommand(o->command);
        if (o->target.empty())
            o->target = arch::ArchLibrary::instance().defaultTarget();
        lowering::CompileOptions options{.target = o->target, .parameters = parseParams(o->params)};
        if (o->specialize)
            options.sizes = sizesOf(command, problemOf(command, o->sizes));
        else if (!o->sizes.empty())
            fail("--size sets the sizes of a kernel made for one problem: give --specialize");
        // The graph lowered by `file`, and the kernel written from it.
        auto emitWith = [&](std::string const& file) {
            rules::Pipeline const pipeline = rules::loadPipeline(file);
            if (!o->pipeline.empty()) // with a folder, a pipeline may not read them all
                checkParams(options.parameters, pipeline, file);
            return lowering::compileCommand(command, pipeline, options).kernel;
        };
        std::optional<lowering::EmittedKernel> chosen;
        if (!o->pipeline.empty()) {
            chosen = emitWith(o->pipeline);
        } else {
            namespace fs = std::filesystem;
            std::error_code ec;
            if (!fs::is_directory(o->pipelines, ec))
                fail("'{}' is not a folder of pipelines (give --pipeline or --pipelines)",
                     o->pipelines);
            std::vector<std::string> files;
            for (auto const& entry : fs::directory_iterator(o->pipelines))
                if (entry.path().filename().string().ends_with(".pipeline.json"))
                    files.push_back(entry.path().string());
            std::sort(files.begin(), files.end());
            std::string why;
            for (auto const& file : files) {
                try {
                    chosen = emitWith(file);
                    fmt::print("lowered by {}\n", file);
                    break;
                } catch (UserError const& e) {
                    why += fmt::format("\n  {}: {}", file, e.message());
                }
            }
            if (!chosen)
                fail("no pipeline in '{}' lowers {} to a kernel for {}:{}", o->pipelines,
                     o->command, o->target, why.empty() ? " (none found)" : why);
        }
        auto const& kernel = *chosen;
        bool const amd = lowering::targetVendor(o->target) == arch::Vendor::Amd;
        if (o->output.empty()) {
            fmt::print("{}", kernel.code);
            return;
        }
        std::error_code ec;
        std::filesystem::create_directories(o->output, ec);
        if (ec)
            fail("cannot make the folder '{}': {}", o->output, ec.message());
        if (amd) {
            auto assembler = runtime::assemblerFor(o->target);
            if (!assembler.ok())
                fail("cannot assemble for {}: {}", o->target, assembler.error().message());
            auto code = (*assembler)->assemble(kernel.code, o->target, kernel.entry + ".s");
            if (!code.ok()) // Kiln wrote assembly its assembler rejects: a bug in Kiln
                throw InternalError(fmt::format("the {} assembler rejected {}.s:\n{}",
                                                (*assembler)->name(), kernel.entry,
                                                code.error().message()),
                                    __FILE__, __LINE__);
            writeFile(fmt::format("{}/{}.s", o->output, kernel.entry), kernel.code);
            writeFile(fmt::format("{}/{}.hsaco", o->output, kernel.entry), *code);
        } else {
            writeFile(fmt::format("{}/{}.ptx", o->output, kernel.entry), kernel.code);
        }
        writeFile(fmt::format("{}/{}.manifest.json", o->output, kernel.entry),
                  kernel.manifestJson());
        if (amd)
            fmt::print("wrote {0}/{1}.s, {0}/{1}.hsaco and {0}/{1}.manifest.json\n", o->output,
                       kernel.entry);
        else
            fmt::print("wrote {0}/{1}.ptx and {0}/{1}.manifest.json\n", o->output, kernel.entry);
    });
}

} // namespace kiln::cli
