// kiln export CMD.json --pipeline P.json [--target T] (--params A=1,... | --db DB [--key K])
//             [--size NAME=V]... -o DIR [--name NAME]
// Writes a schedule point's kernel (DIR/NAME.ptx, DIR/NAME.cubin where ptxas exists; for AMD
// targets the assembly DIR/NAME.s and its code object DIR/NAME.hsaco), its manifest
// (DIR/NAME.manifest.json, whose "checked" says how the point was checked) and the C++ header
// DIR/NAME.h that embeds the code with a typed launch function. With --db the point is the
// database's winner for the key (the only key of the target, or --key), checked as its record
// says, for the key's target when --target is not given; with --params it is unchecked, and
// without --target for arch-db's first default target.
#include "Export.h"

#include "ExportHeader.h"
#include "Output.h"
#include "Params.h"
#include "Problem.h"
#include "Subcommands.h"
#include "Tuning.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/lowering/Compile.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/scheduler/CheckProvenance.h"
#include "kiln/scheduler/Problem.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>

namespace kiln::cli {

ExportedFiles exportKernel(ExportRequest const& request) {
    lowering::EmittedKernel const kernel =
        lowering::compileCommand(*request.command, *request.pipeline,
                                 {.target = request.target, .parameters = request.params})
            .kernel;
    bool const amd = lowering::targetVendor(request.target) == arch::Vendor::Amd;
    std::string const name = request.name.empty() ? kernel.entry : request.name;
    // An AMD kernel is exported as its code object: HIP loads code objects, not assembly.
    std::optional<std::string> codeObject;
    if (amd) {
        auto assembler = runtime::assemblerFor(request.target);
        if (!assembler.ok())
            fail("cannot export for {}: {}", request.target, assembler.error().message());
        auto code = (*assembler)->assemble(kernel.code, request.target, kernel.entry + ".s");
        if (!code.ok())
            throw InternalError(fmt::format("the {} assembler rejected {}.s:\n{}",
                                            (*assembler)->name(), kernel.entry,
                                            code.error().message()),
                                __FILE__, __LINE__);
        codeObject = std::move(code).value();
    }
    std::string const header =
        generateHeader(kernel, {.name = name,
                                .origin = request.origin,
                                .checked = request.checked,
                                .codeObject = codeObject ? &*codeObject : nullptr});

    std::error_code ec;
    std::filesystem::create_directories(request.folder, ec);
    if (ec)
        fail("cannot make the folder '{}': {}", request.folder, ec.message());
    ExportedFiles files;
    std::string const stem = (std::filesystem::path(request.folder) / name).string();
    files.code = stem + (amd ? ".s" : ".ptx");
    files.manifest = stem + ".manifest.json";
    files.header = stem + ".h";
    writeFile(files.code, kernel.code);
    writeFile(files.manifest, exportedManifest(kernel, request.checked));
    writeFile(files.header, header);
    if (codeObject) {
        files.binary = stem + ".hsaco";
        writeFile(files.binary, *codeObject);
    } else if (runtime::findPtxas().ok()) {
        auto assembled = runtime::assemblePtx(kernel.code, request.target);
        if (!assembled.ok())
            fail("ptxas refused the exported kernel: {}", assembled.status().message());
        lowering::checkRegisters(kernel, assembled.value().registers);
        files.binary = stem + ".cubin";
        std::ofstream(files.binary, std::ios::binary)
            .write(reinterpret_cast<char const*>(assembled.value().cubin.data()),
                   std::streamsize(assembled.value().cubin.size()));
    }
    return files;
}

void addExport(CLI::App& app) {
    struct Options {
        std::string command, pipeline, target, db, key, output, name;
        std::vector<std::string> params, sizes;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand(
        "export", "Write a kernel, its manifest and a C++ header with a typed launch function");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--pipeline", o->pipeline, "Pipeline file (JSON)")->required();
    sub->add_option("--target", o->target,
                    "Target (default: the --db key's, else arch-db's first default target)");
    sub->add_option("--params", o->params, "Schedule parameters, NAME=INT[,NAME=INT...]");
    sub->add_option("--db", o->db, "Take the winner of this tuning database");
    sub->add_option("--key", o->key, "The database key (kiln db list), when it has several");
    sub->add_option("--size", o->sizes, "Problem size of the tuned key, NAME=VALUE");
    sub->add_option("-o,--output", o->output, "Folder to write to")->required();
    sub->add_option("--name", o->name, "File stem and C++ namespace (default: the entry name)");
    sub->callback([o] {
        Command const command = loadCommand(o->command);
        rules::Pipeline const pipeline = rules::loadPipeline(o->pipeline);
        checkParams(parseParams(o->params), pipeline, o->pipeline);
        ExportRequest request{.command = &command,
                              .pipeline = &pipeline,
                              .target = o->target,
                              .params = parseParams(o->params),
                              .folder = o->output,
                              .name = o->name,
                              .origin = ""};
        if (!o->db.empty()) {
            if (!o->params.empty())
                fail("give either --params or --db, not both");
            if (!std::filesystem::exists(o->db))
                fail("no tuning database at '{}'", o->db);
            scheduler::TuningDatabase const db(o->db);
            std::string const problem =
                scheduler::problemOf(command, problemOf(command, o->sizes)).canonical();
            std::string const pipelineHash = scheduler::pipelineHash(o->pipeline);
            std::vector<scheduler::TuningKey> keys;
            for (auto const& k : db.keys())
                if (o->key.empty() ? ((o->target.empty() || k.target == o->target) &&
                                      k.problem == problem && k.pipeline == pipelineHash)
                                   : k.hash() == o->key)
                    keys.push_back(k);
            if (keys.empty())
                fail("'{}' has no record for this problem, pipeline and {}{}", o->db,
                     o->target.empty() ? "any target" : "target " + o->target,
                     o->key.empty() ? "" : " under key " + o->key);
            if (keys.size() > 1) {
                std::vector<std::string> hashes;
                for (auto const& k : keys)
                    hashes.push_back(k.hash() + " (" + k.target + ", " + k.evaluator + ")");
                fail("'{}' has {} keys for this problem and target; pick one with --key: {}", o->db,
                     keys.size(), fmt::join(hashes, ", "));
            }
            if (!o->target.empty() && keys.front().target != o->target)
                fail("key {} in '{}' is for {}, not --target {}", keys.front().hash(), o->db,
                     keys.front().target, o->target);
            request.target = keys.front().target;
            auto const best = db.best(keys.front());
            if (!best)
                fail("no candidate of key {} in '{}' succeeded", keys.front().hash(), o->db);
            request.params = best->point;
            request.checked = scheduler::checkedBy(keys.front().evaluator, best->extra);
            request.origin =
                fmt::format("the winner of key {} in {}, {:.3f} us by {}", keys.front().hash(),
                            o->db, best->microseconds, keys.front().evaluator);
        }
        if (request.target.empty())
            request.target = arch::ArchLibrary::instance().defaultTarget();
        ExportedFiles const files = exportKernel(request);
        fmt::print("wrote {}, {}, {}{}\n", files.code, files.manifest, files.header,
                   files.binary.empty() ? "" : " and " + files.binary);
    });
}

} // namespace kiln::cli
