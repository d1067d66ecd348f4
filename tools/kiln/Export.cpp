// kiln export CMD.json --pipeline P.json [--target T] (--params A=1,... | --db DB [--key K])
//             [--size NAME=V]... -o DIR [--name NAME] [--shared-library]
// Writes a schedule point's kernel (DIR/NAME.ptx, DIR/NAME.cubin where ptxas exists; for AMD
// targets the assembly DIR/NAME.s and its code object DIR/NAME.hsaco), its manifest
// (DIR/NAME.manifest.json, whose "checked" says how the point was checked) and the C++ header
// DIR/NAME.h that embeds the code with a typed launch function; the C ABI DIR/NAME_capi.h and
// DIR/NAME_capi.c (over the CUDA driver or the HIP runtime), and with --shared-library
// DIR/libNAME.so built from it. With --db the point is the database's winner for the key (the
// only key of the target, or --key), checked as its record says, for the key's target when
// --target is not given; with --params it is unchecked, and without --target for arch-db's first
// default target. With --specialize the kernel is made for the problem's sizes only (the
// Command's defaults and --size), as `kiln tune --specialize` times its candidates, and both
// launchers refuse other sizes before anything is queued (the kernel itself would trap).
#include "Export.h"

#include "ExportCapi.h"
#include "ExportHeader.h"
#include "Output.h"
#include "Params.h"
#include "Problem.h"
#include "Subcommands.h"
#include "Tuning.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/lowering/Compile.h"
#include "kiln/lowering/Occupancy.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/scheduler/CheckProvenance.h"
#include "kiln/scheduler/ChildProcess.h"
#include "kiln/scheduler/Problem.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace kiln::cli {

namespace {

// How the Command uses each tensor: its shape and layout, and whether it stores to it.
std::map<std::string, CapiTensor> capiTensors(Command const& command) {
    std::map<std::string, CapiTensor> tensors;
    for (auto const& t : command.tensors()) {
        // Strides are named only where they are not the row-major ones.
        std::vector<std::string> shape, strides, rowMajor;
        for (auto const& e : t.shape)
            shape.push_back(toString(e));
        for (auto const& e : t.strides)
            strides.push_back(toString(e));
        for (std::size_t i = 0; i < shape.size(); ++i)
            rowMajor.push_back(
                i + 1 == shape.size()
                    ? "1"
                    : fmt::format("{}", fmt::join(shape.begin() + std::ptrdiff_t(i) + 1,
                                                  shape.end(), " * ")));
        tensors[t.name].layout =
            fmt::format("[{}], {}", fmt::join(shape, ", "),
                        strides.empty() || strides == rowMajor
                            ? "row-major"
                            : fmt::format("strides [{}]", fmt::join(strides, ", ")));
    }
    for (auto const& op : command.operations())
        if (op.kind == CommandOpKind::StoreTiled || op.kind == CommandOpKind::StoreLinear)
            tensors[op.tensor].written = true;
    return tensors;
}

// Whether `program` can be run: a path to an executable, or an executable found in PATH.
bool runnable(std::string const& program) {
    if (program.find('/') != std::string::npos)
        return ::access(program.c_str(), X_OK) == 0;
    char const* path = std::getenv("PATH");
    std::istringstream folders(path ? path : "");
    for (std::string folder; std::getline(folders, folder, ':');)
        if (::access(((folder.empty() ? "." : folder) + "/" + program).c_str(), X_OK) == 0)
            return true;
    return false;
}

// Builds `library` from the C ABI's `source` with $CC (words split at spaces), else cc.
void buildSharedLibrary(std::string const& source, std::string const& library) {
    char const* cc = std::getenv("CC");
    std::istringstream words(cc && *cc ? cc : "cc");
    std::vector<std::string> argv;
    for (std::string word; words >> word;)
        argv.push_back(word);
    if (argv.empty() || !runnable(argv.front()))
        fail("--shared-library: no C compiler: cannot run '{}' (set CC to one)",
             argv.empty() ? std::string(cc) : argv.front());
    for (char const* flag : {"-std=c11", "-O2", "-fPIC", "-shared", "-o"})
        argv.emplace_back(flag);
    argv.insert(argv.end(), {library, source, "-ldl", "-pthread"});
    scheduler::ChildProcess compiler(argv);
    compiler.closeInput();
    std::string output, line;
    while (compiler.readLine(line, std::chrono::minutes(10)) == scheduler::ReadStatus::Line)
        output += line + "\n";
    std::string const how = compiler.wait();
    std::string messages = output + compiler.errorOutput();
    while (!messages.empty() && messages.back() == '\n')
        messages.pop_back();
    if (!compiler.succeeded())
        fail("the C compiler could not build {} ({}): {}{}{}", library, how, fmt::join(argv, " "),
             messages.empty() ? "" : "\n", messages);
}

} // namespace

ExportedFiles exportKernel(ExportRequest const& request) {
    lowering::EmittedKernel kernel =
        lowering::compileCommand(
            *request.command, *request.pipeline,
            {.target = request.target, .parameters = request.params, .sizes = request.sizes})
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
    std::optional<std::string> cubin;
    if (!amd && runtime::findPtxas().ok()) {
        auto assembled = runtime::assemblePtx(kernel.code, request.target);
        if (!assembled.ok())
            fail("ptxas refused the exported kernel: {}", assembled.status().message());
        lowering::checkRegisters(kernel, assembled.value().registers);
        // A persistent grid sized by the registers ptxas gave (Occupancy.h).
        kernel = lowering::withAssembledRegisters(std::move(kernel), assembled.value().registers);
        auto const& bytes = assembled.value().cubin;
        cubin = std::string(reinterpret_cast<char const*>(bytes.data()), bytes.size());
    }
    std::string const header =
        generateHeader(kernel, {.name = name,
                                .origin = request.origin,
                                .checked = request.checked,
                                .codeObject = codeObject ? &*codeObject : nullptr});
    CapiOptions const capi{.name = name,
                           .origin = request.origin,
                           .checked = request.checked,
                           .cubin = cubin ? &*cubin : nullptr,
                           .codeObject = codeObject ? &*codeObject : nullptr,
                           .tensors = capiTensors(*request.command)};

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
    } else if (cubin) {
        files.binary = stem + ".cubin";
        std::ofstream(files.binary, std::ios::binary)
            .write(cubin->data(), static_cast<std::streamsize>(cubin->size()));
    }
    files.capiHeader = stem + "_capi.h";
    files.capiSource = stem + "_capi.c";
    writeFile(files.capiHeader, generateCapiHeader(kernel, capi));
    writeFile(files.capiSource, generateCapiSource(kernel, capi));
    if (request.sharedLibrary) {
        files.sharedLibrary =
            (std::filesystem::path(request.folder) / ("lib" + name + ".so")).string();
        buildSharedLibrary(files.capiSource, files.sharedLibrary);
    }
    return files;
}

void addExport(CLI::App& app) {
    struct Options {
        std::string command, pipeline, target, db, key, output, name;
        std::vector<std::string> params, sizes;
        bool sharedLibrary = false, specialize = false;
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
    sub->add_option("--size", o->sizes,
                    "Problem size of the tuned key, and of the kernel with --specialize, "
                    "NAME=VALUE");
    sub->add_flag("--specialize", o->specialize,
                  "Make the kernel for the problem's sizes only (the Command's defaults and "
                  "--size), as `kiln tune --specialize` timed it; its launchers refuse others");
    sub->add_option("-o,--output", o->output, "Folder to write to")->required();
    sub->add_option("--name", o->name, "File stem and C++ namespace (default: the entry name)");
    sub->add_flag("--shared-library", o->sharedLibrary,
                  "Also build libNAME.so from the C ABI (NAME_capi.c) with $CC, else cc");
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
                              .origin = "",
                              .sharedLibrary = o->sharedLibrary};
        auto const sizes = problemOf(command, o->sizes);
        if (o->specialize)
            request.sizes = sizesOf(command, sizes);
        if (!o->db.empty()) {
            if (!o->params.empty())
                fail("give either --params or --db, not both");
            if (!std::filesystem::exists(o->db))
                fail("no tuning database at '{}'", o->db);
            scheduler::TuningDatabase const db(o->db);
            std::string const problem = scheduler::problemOf(command, sizes).canonical();
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
        std::vector<std::string> written = {files.code, files.manifest, files.header};
        for (std::string const* file :
             {&files.binary, &files.capiHeader, &files.capiSource, &files.sharedLibrary})
            if (!file->empty())
                written.push_back(*file);
        std::string const last = written.back();
        written.pop_back();
        fmt::print("wrote {} and {}\n", fmt::join(written, ", "), last);
    });
}

} // namespace kiln::cli
