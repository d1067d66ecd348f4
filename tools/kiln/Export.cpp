// kiln export CMD.json --pipeline P.json --target T (--params A=1,... | --db DB [--key K])
//             [--size NAME=V]... -o DIR [--name NAME]
// Writes a schedule point's kernel (DIR/NAME.ptx, DIR/NAME.cubin where ptxas exists; for AMD
// targets the assembly DIR/NAME.s and its code object DIR/NAME.hsaco), its manifest
// (DIR/NAME.manifest.json) and the C++ header DIR/NAME.h that embeds the code with a typed
// launch function. With --db the point is the database's winner for the key (the only
// key of the target, or --key).
#include "Export.h"

#include "Output.h"
#include "Params.h"
#include "Problem.h"
#include "Subcommands.h"
#include "Tuning.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/AmdgcnCodegen.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/runtime/ScalarType.h"
#include "kiln/scheduler/Problem.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <set>

namespace kiln::cli {

namespace {

bool isIdentifier(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

// Grid formulas may name the kernel's size parameters and use + - * / % ceildiv min max.
class GridNames : public NameResolver {
public:
    explicit GridNames(std::set<std::string> sizes)
        : sizes_(std::move(sizes)) {}
    ExprPtr name(std::string_view n) const override {
        if (!sizes_.count(std::string(n)))
            fail("the grid formula names '{}', which is not a size parameter of the kernel", n);
        return argument(std::string(n), DataType::I64);
    }

private:
    std::set<std::string> sizes_;
};

void checkGridExpression(Expression const& e) {
    if (auto const* b = std::get_if<expr::Binary>(&e)) {
        switch (b->op) {
        case BinaryOp::Add:
        case BinaryOp::Subtract:
        case BinaryOp::Multiply:
        case BinaryOp::Divide:
        case BinaryOp::Modulo:
        case BinaryOp::CeilDivide:
        case BinaryOp::Min:
        case BinaryOp::Max:
            checkGridExpression(*b->lhs);
            checkGridExpression(*b->rhs);
            return;
        default:
            fail("the grid formula uses '{}', which the exported header cannot compute",
                 name(b->op));
        }
    }
    if (std::holds_alternative<expr::Literal>(e) || std::holds_alternative<expr::Argument>(e))
        return;
    fail("the grid formula '{}' cannot be computed by the exported header", toString(e));
}

std::string cppType(std::string const& manifestType) {
    auto const type = runtime::parseScalarType(manifestType);
    if (!type)
        fail("the manifest has a parameter of unknown type '{}'", manifestType);
    std::string const name(runtime::cppName(*type));
    if (name == "Half" || name == "BFloat16")
        return "kiln::runtime::" + name;
    if (name.find("int") != std::string::npos)
        return "std::" + name;
    return name;
}

// A raw string delimiter that the text does not contain.
std::string delimiterFor(std::string const& text, std::string base) {
    while (text.find(")" + base + "\"") != std::string::npos)
        base += "_";
    return base;
}

} // namespace

std::string generateHeader(lowering::EmittedKernel const& kernel, std::string const& name,
                           std::string const& origin, std::string const* codeObject) {
    if (!isIdentifier(name))
        fail("'{}' is not a C++ identifier; give --name", name);
    std::set<std::string> sizes;
    std::vector<std::string> types, params, args;
    for (auto const& p : kernel.parameters) {
        if (!isIdentifier(p.name))
            fail("the kernel parameter '{}' is not a C++ identifier", p.name);
        std::string const type =
            p.pointer ? fmt::format("kiln::runtime::DevicePointer<{}>", cppType(p.type))
                      : cppType(p.type);
        types.push_back(type);
        params.push_back(fmt::format("{} {}", type, p.name));
        args.push_back(p.name);
        if (!p.pointer && p.meaning.starts_with("size "))
            sizes.insert(p.name);
    }
    std::vector<std::string> grid;
    for (auto const& g : kernel.grid) {
        ExprPtr e;
        try {
            e = parseExpression(g, GridNames(sizes));
        } catch (ExpressionError const& x) {
            fail("the grid formula '{}' does not parse: {}", g, x.message());
        }
        checkGridExpression(*e);
        grid.push_back(fmt::format("static_cast<std::uint32_t>({})", toString(e)));
    }
    while (grid.size() < 3)
        grid.push_back("1u");
    std::string const manifest = kernel.manifestJson();
    std::string const codeDelimiter = delimiterFor(kernel.code, "kiln_code");
    std::string const manifestDelimiter = delimiterFor(manifest, "kiln_manifest");
    std::string schedule;
    for (auto const& [k, v] : kernel.schedule)
        schedule += fmt::format("{}{}={}", schedule.empty() ? "" : ",", k, v);

    // The PTX as a raw string; a code object as bytes (it is binary).
    std::string codeSection;
    if (codeObject) {
        std::string bytes;
        for (std::size_t i = 0; i < codeObject->size(); ++i)
            bytes += fmt::format("{}0x{:02x},", i % 16 == 0 ? "\n    " : " ",
                                 static_cast<unsigned char>((*codeObject)[i]));
        codeSection =
            fmt::format("/// The code object ({} bytes; its assembly is beside this "
                        "header).\ninline constexpr unsigned char kCodeObject[] = {{{}\n}};",
                        codeObject->size(), bytes);
    } else {
        codeSection = fmt::format("/// The PTX code.\ninline constexpr char const kCode[] = "
                                  "R\"{0}({1}){0}\";",
                                  codeDelimiter, kernel.code);
    }
    std::string out = fmt::format(
        R"(// {name}.h: generated by `kiln export`; do not edit, export again.
//
// The kernel {entry} for {target}, schedule {schedule}{origin}.
// Needs only the Kiln runtime library: find_package(kiln) and link kiln::runtime.
//
//   auto device = kiln::runtime::loadPlatform("{platform}").value()->device(0).value();
//   auto kernel = kiln_export::{name}::load(device).value();
//   auto stream = kiln::runtime::Stream::create(device).value();
//   kiln_export::{name}::launch(stream, kernel, ...).synchronize();
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/DevicePointer.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/ScalarType.h"
#include "kiln/runtime/Stream.h"
#include "kiln/runtime/TypedKernel.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace kiln_export::{name} {{

/// The kernel's entry point.
inline constexpr char const kEntry[] = "{entry}";
/// The target it was generated and tuned for.
inline constexpr char const kTarget[] = "{target}";
/// Workitems per workgroup (the block it was generated for).
inline constexpr kiln::runtime::Dim3 kBlock{{{bx}u, {by}u, {bz}u}};
/// Dynamic shared memory per workgroup, in bytes{sharedNote}.
inline constexpr std::size_t kSharedBytes = {shared};

{codeSection}

/// The manifest: parameters, block, grid formula, schedule.
inline constexpr char const kManifest[] = R"{md}({manifest}){md}";

/// The kernel with its parameter types, checked against the manifest when it is loaded.
using Kernel = kiln::runtime::TypedKernel<{types}>;

/// Loads the kernel on `device` ({loadNote}).
inline kiln::runtime::Expected<Kernel> load(std::shared_ptr<kiln::runtime::Device> device) {{
    auto manifest = kiln::runtime::KernelManifest::fromJson(kManifest, "{name} manifest");
    if (!manifest.ok())
        return manifest.error();
    return Kernel::load(std::move(device),
                        {loaderSpec}
                            .withManifest(std::move(manifest).value()));
}}

namespace detail {{
inline constexpr std::int64_t ceildiv(std::int64_t a, std::int64_t b) {{
    return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
}}
inline constexpr std::int64_t min(std::int64_t a, std::int64_t b) {{ return a < b ? a : b; }}
inline constexpr std::int64_t max(std::int64_t a, std::int64_t b) {{ return a < b ? b : a; }}
}} // namespace detail

/// The grid of workgroups for these sizes.
inline kiln::runtime::Dim3 grid({sizeParams}) {{
    using namespace detail;
    return {{{gx}, {gy}, {gz}}};
}}

/// Enqueues the kernel on `stream` with the grid its sizes need.
inline kiln::runtime::Stream& launch(kiln::runtime::Stream& stream, Kernel const& kernel,
                                     {params}) {{
    return stream.launch(kernel, grid({sizeArgs}), kBlock, kSharedBytes, {args});
}}

}} // namespace kiln_export::{name}
)",
        fmt::arg("name", name), fmt::arg("entry", kernel.entry), fmt::arg("target", kernel.target),
        fmt::arg("schedule", schedule.empty() ? "(defaults)" : schedule),
        fmt::arg("origin", origin.empty() ? "" : " (" + origin + ")"),
        fmt::arg("bx", kernel.block[0]), fmt::arg("by", kernel.block[1]),
        fmt::arg("bz", kernel.block[2]), fmt::arg("shared", codeObject ? 0 : kernel.sharedBytes),
        fmt::arg("sharedNote",
                 codeObject ? " (none: the code object's descriptor allocates the kernel's LDS)"
                            : ""),
        fmt::arg("codeSection", codeSection), fmt::arg("platform", codeObject ? "hip" : "cuda"),
        fmt::arg("loadNote", codeObject ? "HIP loads the code object; its metadata note is "
                                          "checked against the manifest"
                                        : "the driver compiles the PTX for the device"),
        fmt::arg("loaderSpec",
                 codeObject ? "kiln::runtime::KernelLoaderSpec::codeObjectInMemory(\n"
                              "                            std::string(reinterpret_cast<char "
                              "const*>(kCodeObject), sizeof kCodeObject), kEntry)"
                            : "kiln::runtime::KernelLoaderSpec::ptxInMemory(kCode, kEntry)"),
        fmt::arg("md", manifestDelimiter), fmt::arg("manifest", manifest),
        fmt::arg("types", fmt::join(types, ", ")), fmt::arg("gx", grid[0]), fmt::arg("gy", grid[1]),
        fmt::arg("gz", grid[2]), fmt::arg("params", fmt::join(params, ", ")),
        fmt::arg("args", fmt::join(args, ", ")),
        fmt::arg("sizeParams",
                 [&] {
                     std::vector<std::string> s;
                     for (auto const& n : sizes)
                         s.push_back("[[maybe_unused]] std::int64_t " + n);
                     return fmt::format("{}", fmt::join(s, ", "));
                 }()),
        fmt::arg("sizeArgs", fmt::format("{}", fmt::join(sizes, ", "))));
    return out;
}

ExportedFiles exportKernel(ExportRequest const& request) {
    KernelGraph graph = translate(*request.command);
    rules::EngineOptions options{.parameters = request.params,
                                 .arch = rules::archFacts(request.target)};
    rules::lower(*request.pipeline, graph, options);
    lowering::CodegenOptions codegen{.target = request.target,
                                     .schedule = request.pipeline->defaults};
    for (auto const& [k, v] : request.params)
        codegen.schedule[k] = v;
    bool const amd = lowering::isAmdgcnTarget(request.target);
    lowering::EmittedKernel const kernel =
        amd ? lowering::emitAmdgcnKernel(graph, codegen) : lowering::emitKernel(graph, codegen);
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
        generateHeader(kernel, name, request.origin, codeObject ? &*codeObject : nullptr);

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
    writeFile(files.manifest, kernel.manifestJson());
    writeFile(files.header, header);
    if (codeObject) {
        files.binary = stem + ".hsaco";
        writeFile(files.binary, *codeObject);
    } else if (runtime::findPtxas().ok()) {
        auto assembled = runtime::assemblePtx(kernel.code, request.target);
        if (!assembled.ok())
            fail("ptxas refused the exported kernel: {}", assembled.status().message());
        files.binary = stem + ".cubin";
        std::ofstream(files.binary, std::ios::binary)
            .write(reinterpret_cast<char const*>(assembled.value().cubin.data()),
                   std::streamsize(assembled.value().cubin.size()));
    }
    return files;
}

void addExport(CLI::App& app) {
    struct Options {
        std::string command, pipeline, target = "sm_90a", db, key, output, name;
        std::vector<std::string> params, sizes;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand(
        "export", "Write a kernel, its manifest and a C++ header with a typed launch function");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--pipeline", o->pipeline, "Pipeline file (JSON)")->required();
    sub->add_option("--target", o->target, "Target")->capture_default_str();
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
                if (o->key.empty() ? (k.target == o->target && k.problem == problem &&
                                      k.pipeline == pipelineHash)
                                   : k.hash() == o->key)
                    keys.push_back(k);
            if (keys.empty())
                fail("'{}' has no record for this problem, pipeline and target {}{}", o->db,
                     o->target, o->key.empty() ? "" : " under key " + o->key);
            if (keys.size() > 1) {
                std::vector<std::string> hashes;
                for (auto const& k : keys)
                    hashes.push_back(k.hash() + " (" + k.evaluator + ")");
                fail("'{}' has {} keys for this problem and target; pick one with --key: {}", o->db,
                     keys.size(), fmt::join(hashes, ", "));
            }
            auto const best = db.best(keys.front());
            if (!best)
                fail("no candidate of key {} in '{}' succeeded", keys.front().hash(), o->db);
            request.params = best->point;
            request.origin =
                fmt::format("the winner of key {} in {}, {:.3f} us by {}", keys.front().hash(),
                            o->db, best->microseconds, keys.front().evaluator);
        }
        ExportedFiles const files = exportKernel(request);
        fmt::print("wrote {}, {}, {}{}\n", files.code, files.manifest, files.header,
                   files.binary.empty() ? "" : " and " + files.binary);
    });
}

} // namespace kiln::cli
