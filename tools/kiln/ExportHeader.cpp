// The exported header: the kernel's code and manifest as constants, a typed kernel, the sizes
// by name, the grid formula as C++ and a launch function (ExportHeader.h).
#include "ExportHeader.h"

#include "ExportInterface.h"
#include "kiln/graph/Command.h"
#include "kiln/graph/Error.h"
#include "kiln/runtime/ScalarType.h"
#include "kiln/scheduler/CheckProvenance.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <vector>

namespace kiln::cli {

namespace {

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

std::string exportedManifest(lowering::EmittedKernel const& kernel, std::string const& checked) {
    auto manifest = nlohmann::ordered_json::parse(kernel.manifestJson());
    manifest["checked"] = checked;
    return manifest.dump(2) + "\n";
}

std::string generateHeader(lowering::EmittedKernel const& kernel, HeaderOptions const& options) {
    std::string const& name = options.name;
    std::string const* codeObject = options.codeObject;
    if (!isIdentifier(name))
        fail("'{}' is not a C++ identifier; give --name", name);
    // Sizes in the manifest's order: the one order of Sizes, grid() and launch().
    std::vector<std::string> sizes, types, params, args;
    for (auto const& p : kernel.parameters) {
        if (!isIdentifier(p.name))
            fail("the kernel parameter '{}' is not a C++ identifier", p.name);
        if (p.tensorMap) { // made by launch() from its tensor's pointer and the sizes
            types.push_back("kiln::runtime::TensorMap");
            args.push_back(p.name + ".value()");
            continue;
        }
        std::string const type =
            p.pointer ? fmt::format("kiln::runtime::DevicePointer<{}>", cppType(p.type))
                      : cppType(p.type);
        types.push_back(type);
        if (isSizeParameter(p)) {
            if (p.name == "by_name")
                fail("the kernel's size 'by_name' has the name of the header's guard against "
                     "sizes given by position");
            sizes.push_back(p.name);
            std::string const value = "sizes." + p.name + ".value";
            args.push_back(
                type == "std::int64_t" ? value : fmt::format("static_cast<{}>({})", type, value));
            continue;
        }
        if (p.name == "stream" || p.name == "kernel" || p.name == "sizes")
            fail("the kernel parameter '{}' has the name of a parameter of the header's launch()",
                 p.name);
        params.push_back(fmt::format("{} {}", type, p.name));
        args.push_back(p.name);
    }
    std::vector<std::string> grid;
    for (std::string const& g : gridExpressions(kernel))
        grid.push_back(fmt::format("static_cast<std::uint32_t>({})", g));
    std::string const manifest = exportedManifest(kernel, options.checked);
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

    // Sizes: a member per size, the grid's locals, an example of each.
    std::string sizeMembers, sizeLocals, example;
    for (auto const& s : sizes) {
        sizeMembers += fmt::format("    detail::Size {};\n", s);
        sizeLocals +=
            fmt::format("    [[maybe_unused]] std::int64_t const {0} = sizes.{0}.value;\n", s);
        example += fmt::format("{}.{} = ...", example.empty() ? "" : ", ", s);
    }
    std::string launchParams;
    for (auto const& p : params)
        launchParams += ",\n                                     " + p;
    std::vector<std::string> usage;
    for (auto const& p : kernel.parameters)
        if (std::find(sizes.begin(), sizes.end(), p.name) == sizes.end() && !p.tensorMap)
            usage.push_back(p.name);
    // A TMA kernel's tensor maps, encoded by launch() on the stream's device; a failure is the
    // stream's.
    std::string encodes, tensorMapNote;
    for (ExportedTensorMap const& m : tensorMaps(kernel)) {
        encodes += fmt::format(
            "    auto const {0} = detail::tensorMap(stream, kiln::runtime::ScalarType::{1}, "
            "{2}.address(),\n"
            "                                      {3}, {4}, {5}, {6}, {7});\n"
            "    if (!{0}.ok())\n"
            "        return stream.fail({0}.error().withContext(\"the tensor map of {2}\"));\n",
            m.parameter, m.type == "f16" ? "F16" : "BF16", m.tensor, m.inner, m.outer, m.rowBytes,
            m.boxInner, m.boxOuter);
        tensorMapNote += (tensorMapNote.empty() ? "" : " and ") + m.tensor;
    }
    if (!tensorMapNote.empty())
        tensorMapNote = fmt::format(
            "\n// The kernel loads the tiles of {} with the copy engine (TMA): launch() makes "
            "their tensor\n// maps from the pointers and sizes, which needs their addresses and "
            "the distance between two\n// of their rows to be multiples of 16 bytes (else the "
            "stream fails).",
            tensorMapNote);
    // A workspace (a Reduce's rows split over workgroups) is the caller's, passed to launch().
    for (auto const& p : kernel.parameters)
        if (p.workspaceBytes)
            tensorMapNote += fmt::format(
                "\n// {} is a workspace of at least {} bytes,\n// zeroed before the first launch; "
                "each launch leaves it zeroed, so one serves a stream's\n// launches in turn.",
                p.name, *p.workspaceBytes);
    // A kernel with tensor maps is launched with arguments checked at run time (a TypedKernel
    // holds the types of its parameters, not the boxes of its tensor maps).
    std::string launchLocals,
        kernelType = fmt::format("/// The kernel with its parameter types, checked against the "
                                 "manifest when it is loaded.\nusing Kernel = "
                                 "kiln::runtime::TypedKernel<{}>;",
                                 fmt::join(types, ", ")),
        launchCall;
    // A persistent kernel (PERSISTENT=1): grid() counts its tiles, and launch() launches as
    // many workgroups as the stream's device holds at once (PersistentGrid.h).
    std::string persistentInclude, persistentNote, launchGrid = "grid(sizes)";
    if (kernel.workgroupsPerMultiprocessor > 0) {
        persistentInclude = "#include \"kiln/runtime/PersistentGrid.h\"\n";
        persistentNote = fmt::format(
            "\n/// The kernel loops over its output tiles (PERSISTENT=1): grid() counts them, "
            "and launch()\n/// launches min(tiles, multiprocessors x this many) workgroups, as "
            "many as the device holds\n/// at once.\ninline constexpr std::uint32_t "
            "kWorkgroupsPerMultiprocessor = {}u;",
            kernel.workgroupsPerMultiprocessor);
        launchGrid =
            "kiln::runtime::persistentGrid(\n"
            "                             grid(sizes), kWorkgroupsPerMultiprocessor,\n"
            "                             stream.device().description().multiprocessorCount)";
    }
    // Thread-block clusters (CLUSTER_M, CLUSTER_N): every launch gives the manifest's cluster; a
    // persistent grid is whole clusters. Clusters come with TMA, whose launch takes a
    // LaunchConfig (below).
    std::string clusterArgument = "kiln::runtime::Dim3{}";
    if (std::int64_t const blocks = kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2];
        blocks > 1) {
        KILN_ASSERT(!encodes.empty(), "a cluster kernel without tensor maps");
        persistentNote += fmt::format(
            "\n/// The thread-block cluster every launch gives (CLUSTER_M, CLUSTER_N): grid() is a "
            "whole\n/// number of them.\ninline constexpr kiln::runtime::Dim3 kCluster{{{}u, {}u, "
            "{}u}};",
            kernel.cluster[0], kernel.cluster[1], kernel.cluster[2]);
        clusterArgument = "kCluster";
        if (kernel.workgroupsPerMultiprocessor > 0)
            launchGrid =
                "kiln::runtime::persistentGrid(\n"
                "                             grid(sizes), kWorkgroupsPerMultiprocessor,\n"
                "                             stream.device().description().multiprocessorCount,\n"
                "                             static_cast<std::uint32_t>(kCluster.count()))";
    }
    launchCall = fmt::format("    return stream.launch(kernel, {}, kBlock, "
                             "kSharedBytes,\n                         {});",
                             launchGrid, fmt::join(args, ", "));
    if (!encodes.empty()) {
        launchLocals = "    using namespace detail;\n" + sizeLocals + encodes;
        kernelType = "/// The kernel, whose arguments (its tensor maps made at each launch among "
                     "them) are checked\n/// against the manifest when it is launched.\nusing "
                     "Kernel = kiln::runtime::Kernel;";
        std::string adds;
        for (std::string const& a : args)
            adds += fmt::format("\n        .add({})", a);
        launchCall = fmt::format("    kiln::runtime::KernelArguments arguments;\n"
                                 "    arguments{};\n"
                                 "    return stream.launch(kernel, {{{}, kBlock, "
                                 "kSharedBytes, {}}}, arguments);",
                                 adds, launchGrid, clusterArgument);
    }

    // A kernel made for some sizes only (kiln export --specialize) refuses others before anything
    // is queued: the kernel itself would trap, which ends the context.
    std::string refusals;
    for (std::string const& a : kernel.assumptions)
        refusals += fmt::format("    if (!({0}))\n"
                                "        return stream.fail(kiln::runtime::Error(\n"
                                "            kiln::runtime::ErrorCode::InvalidArgument,\n"
                                "            \"{1}: the kernel was made for sizes where {0} (kiln "
                                "export --specialize)\"));\n",
                                a, name);
    if (!refusals.empty() && launchLocals.empty())
        launchLocals = "    using namespace detail;\n" + sizeLocals;
    launchLocals += refusals;

    std::string out = fmt::format(
        R"(// {name}.h: generated by `kiln export`; do not edit, export again.
//
// The kernel {entry} for {target}, schedule {schedule}{origin}.
// Checked: {checked}.{uncheckedNote}{tensorMapNote}
// Needs only the Kiln runtime library: find_package(kiln) and link kiln::runtime.
//
//   auto device = kiln::runtime::loadPlatform("{platform}").value()->device(0).value();
//   auto kernel = kiln_export::{name}::load(device).value();
//   auto stream = kiln::runtime::Stream::create(device).value();
//   kiln_export::{name}::Sizes const sizes{{{example}}};
//   kiln_export::{name}::launch(stream, kernel, sizes{usage}).synchronize();
//
// Sizes are given by name, in the order of Sizes; given by position, left out, or not
// integers, they do not compile.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/DevicePointer.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/KernelManifest.h"
{persistentInclude}#include "kiln/runtime/ScalarType.h"
#include "kiln/runtime/Stream.h"
#include "kiln/runtime/TypedKernel.h"

#include <algorithm>
#include <concepts>
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
inline constexpr std::size_t kSharedBytes = {shared};{persistentNote}

{codeSection}

/// The manifest: parameters, block, grid formula, schedule, how it was checked.
inline constexpr char const kManifest[] = R"{md}({manifest}){md}";

{kernelType}

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
/// One size of Sizes: an integer (a floating-point number does not convert), with no default
/// (a Sizes that leaves a size out does not compile).
struct Size {{
    template <std::integral T>
    constexpr Size(T size)
        : value(static_cast<std::int64_t>(size)) {{}}
    std::int64_t value;
}};
/// The first member of Sizes, which no number converts to: sizes given by position do not
/// compile.
struct SizesAreGivenByName {{}};

inline constexpr std::int64_t ceildiv(std::int64_t a, std::int64_t b) {{
    return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
}}
inline constexpr std::int64_t min(std::int64_t a, std::int64_t b) {{ return a < b ? a : b; }}
inline constexpr std::int64_t max(std::int64_t a, std::int64_t b) {{ return a < b ? b : a; }}{tensorMapHelper}
}} // namespace detail

/// The problem sizes, by name and in this order (the manifest's):
///   Sizes{{{example}}}
struct Sizes {{
    detail::SizesAreGivenByName by_name = {{}};
{sizeMembers}}};

/// The grid of workgroups for these sizes.
inline kiln::runtime::Dim3 grid([[maybe_unused]] Sizes const& sizes) {{
    using namespace detail;
{sizeLocals}    return {{{gx}, {gy}, {gz}}};
}}

/// Enqueues the kernel on `stream` with the grid its sizes need.
inline kiln::runtime::Stream& launch(kiln::runtime::Stream& stream, Kernel const& kernel,
                                     Sizes const& sizes{params}) {{
{launchLocals}{launchCall}
}}

}} // namespace kiln_export::{name}
)",
        fmt::arg("name", name), fmt::arg("entry", kernel.entry), fmt::arg("target", kernel.target),
        fmt::arg("schedule", schedule.empty() ? "(defaults)" : schedule),
        fmt::arg("origin", options.origin.empty() ? "" : " (" + options.origin + ")"),
        fmt::arg("checked", options.checked),
        fmt::arg("uncheckedNote",
                 scheduler::wasChecked(options.checked)
                     ? ""
                     : "\n// No run compared this kernel's results with a reference before it was "
                       "exported:\n// check them in your application (or with kiln run) before "
                       "relying on them."),
        fmt::arg("example", example),
        fmt::arg("usage", usage.empty() ? "" : fmt::format(", {}", fmt::join(usage, ", "))),
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
        fmt::arg("md", manifestDelimiter), fmt::arg("manifest", manifest), fmt::arg("gx", grid[0]),
        fmt::arg("gy", grid[1]), fmt::arg("gz", grid[2]), fmt::arg("sizeMembers", sizeMembers),
        fmt::arg("sizeLocals", sizeLocals), fmt::arg("params", launchParams),
        fmt::arg("kernelType", kernelType), fmt::arg("launchCall", launchCall),
        fmt::arg("launchLocals", launchLocals), fmt::arg("tensorMapNote", tensorMapNote),
        fmt::arg("persistentInclude", persistentInclude),
        fmt::arg("persistentNote", persistentNote),
        fmt::arg("tensorMapHelper",
                 encodes.empty()
                     ? ""
                     : "\n/// The tensor map of a row-major matrix of `outer` rows of `inner` "
                       "elements, `rowBytes` apart\n/// at `address`, in boxes of boxOuter x "
                       "boxInner and the 128-byte swizzle.\n"
                       "inline kiln::runtime::Expected<kiln::runtime::TensorMap>\n"
                       "tensorMap(kiln::runtime::Stream& stream, kiln::runtime::ScalarType "
                       "type, std::uint64_t address,\n"
                       "          std::int64_t inner, std::int64_t outer, std::int64_t "
                       "rowBytes, std::uint32_t boxInner,\n"
                       "          std::uint32_t boxOuter) {\n"
                       "    return stream.device().encodeTensorMap(\n"
                       "        address, kiln::runtime::TensorMapLayout::matrix(\n"
                       "                     type, static_cast<std::uint64_t>(outer), "
                       "static_cast<std::uint64_t>(inner), boxOuter,\n"
                       "                     boxInner, kiln::runtime::TensorMapSwizzle::Bytes128,"
                       "\n                     static_cast<std::uint64_t>(rowBytes)));\n"
                       "}"));
    return out;
}

} // namespace kiln::cli
