// The C ABI of an exported kernel (ExportCapi.h): its header, and its source, which is the
// kernel's code, the launcher of its target's driver (ExportCapiDriver.h) and the launch function
// of this kernel's arguments.
#include "ExportCapi.h"

#include "ExportCapiDriver.h"
#include "ExportInterface.h"
#include "kiln/graph/Command.h"
#include "kiln/graph/Error.h"
#include "kiln/scheduler/CheckProvenance.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <vector>

namespace kiln::cli {

namespace {

// The C type of a value parameter; f16 and bf16 travel as their bits.
std::string cType(std::string const& manifestType) {
    static std::map<std::string, std::string> const types = {
        {"i8", "int8_t"},    {"i16", "int16_t"},   {"i32", "int32_t"},  {"i64", "int64_t"},
        {"u8", "uint8_t"},   {"u16", "uint16_t"},  {"u32", "uint32_t"}, {"u64", "uint64_t"},
        {"f16", "uint16_t"}, {"bf16", "uint16_t"}, {"f32", "float"},    {"f64", "double"}};
    auto const found = types.find(manifestType);
    if (found == types.end())
        fail("the manifest has a parameter of unknown type '{}'", manifestType);
    return found->second;
}

// One argument of NAME_launch: its declaration and what the header says it is.
struct Argument {
    std::string declaration, description;
};

std::vector<Argument> launchArguments(lowering::EmittedKernel const& kernel,
                                      CapiOptions const& options) {
    if (!isIdentifier(options.name))
        fail("'{}' is not a C identifier; give --name", options.name);
    std::vector<Argument> arguments;
    for (auto const& p : kernel.parameters) {
        if (p.tensorMap) // made from its tensor's pointer and the sizes (ExportCapiCuda.cpp)
            continue;
        if (!isIdentifier(p.name))
            fail("the kernel parameter '{}' is not a C identifier", p.name);
        if (p.name == "stream")
            fail("the kernel parameter 'stream' has the name of NAME_launch's first argument");
        if (p.workspaceBytes) { // the caller's, as a cuBLAS workspace is
            arguments.push_back(
                {fmt::format("void* {}", p.name),
                 fmt::format("device pointer to a workspace of at least {} bytes,\n *   {:<{}}  "
                             "zeroed before the first launch; each launch leaves it zeroed,\n "
                             "*   {:<{}}  so one serves a stream's launches in turn",
                             *p.workspaceBytes, "", p.name.size(), "", p.name.size())});
            continue;
        }
        if (p.pointer) {
            auto const tensor = options.tensors.find(p.name);
            bool const written = tensor == options.tensors.end() || tensor->second.written;
            std::string const layout =
                tensor == options.tensors.end() || tensor->second.layout.empty()
                    ? ""
                    : " " + tensor->second.layout;
            arguments.push_back(
                {fmt::format("{}void* {}", written ? "" : "const ", p.name),
                 fmt::format(
                     "device pointer to the tensor {}: {}{}{}", p.name, p.type, layout,
                     tensor == options.tensors.end() ? "" : (written ? ", written" : ", read"))});
            continue;
        }
        std::string const type = cType(p.type);
        std::string description = p.meaning;
        if (!isSizeParameter(p))
            description += fmt::format(" ({}{})", p.type,
                                       p.type == "f16" || p.type == "bf16" ? ", its 16 bits" : "");
        arguments.push_back({fmt::format("{} {}", type, p.name), description});
    }
    return arguments;
}

std::string scheduleText(lowering::EmittedKernel const& kernel) {
    std::string schedule;
    for (auto const& [k, v] : kernel.schedule)
        schedule += fmt::format("{}{}={}", schedule.empty() ? "" : ",", k, v);
    return schedule.empty() ? "(defaults)" : schedule;
}

std::string signature(CapiOptions const& options, std::vector<Argument> const& arguments) {
    std::string out = "int " + options.name + "_launch(void* stream";
    for (auto const& a : arguments)
        out += ", " + a.declaration;
    return out + ")";
}

// The part of the C ABI of the driver that runs the kernel's target.
CapiDriver capiDriver(lowering::EmittedKernel const& kernel, CapiOptions const& options) {
    switch (lowering::targetVendor(kernel.target)) {
    case arch::Vendor::Nvidia:
        return cudaCapiDriver(kernel, options);
    case arch::Vendor::Amd:
        return hipCapiDriver(kernel, options);
    }
    fail("kiln export writes a C ABI for NVIDIA and AMD targets; {} is neither", kernel.target);
}

} // namespace

std::string generateCapiHeader(lowering::EmittedKernel const& kernel, CapiOptions const& options) {
    std::vector<Argument> const arguments = launchArguments(kernel, options);
    CapiDriver const driver = capiDriver(kernel, options);
    std::array<std::string, 3> const grid = gridExpressions(kernel);
    std::size_t width = 0;
    for (auto const& p : kernel.parameters)
        width = std::max(width, p.name.size());
    // The tensor maps come last and are no arguments: the first parameters are the arguments.
    std::string described;
    for (std::size_t i = 0; i < arguments.size(); ++i)
        described += fmt::format(" *   {:<{}}  {}\n", kernel.parameters[i].name, width,
                                 arguments[i].description);
    std::string guard = "KILN_EXPORT_" + options.name + "_CAPI_H";
    for (char& c : guard)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return fmt::format(
        R"(/* {name}_capi.h: generated by `kiln export`; do not edit, export again.
 *
 * A C ABI for the kernel {entry} for {target}, schedule {schedule}{origin}.
 * Checked: {checked}.{uncheckedNote}
 *
 * Build the library from {name}_capi.c (`kiln export --shared-library` does):
 *   cc -std=c11 -O2 -fPIC -shared -o lib{name}.so {name}_capi.c -ldl -pthread
{needs} */
#ifndef {guard}
#define {guard}

#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

/* Enqueues {entry} {where} with ({gx}) x ({gy}) x ({gz}) workgroups of
 * {bx} x {by} x {bz} workitems and {shared} bytes of dynamic shared memory. The arguments, in the
 * manifest's order:
{described}{argumentsNote} * Returns 0 when the kernel was enqueued, or when the grid has no workgroup (nothing to
 * compute); otherwise {failures} A failure of the kernel itself shows where the stream is
 * synchronized. Thread-safe; {loaded} */
{signature};

/* Why this thread's last call of {name}_launch failed; "" when it succeeded. */
const char* {name}_error(void);

#ifdef __cplusplus
}}
#endif

#endif
)",
        fmt::arg("name", options.name), fmt::arg("entry", kernel.entry),
        fmt::arg("target", kernel.target), fmt::arg("schedule", scheduleText(kernel)),
        fmt::arg("origin", options.origin.empty() ? "" : " (" + options.origin + ")"),
        fmt::arg("checked", options.checked),
        fmt::arg("uncheckedNote",
                 scheduler::wasChecked(options.checked)
                     ? ""
                     : "\n * No run compared this kernel's results with a reference before it "
                       "was exported:\n * check them in your application (or with kiln run) "
                       "before relying on them."),
        fmt::arg("needs", driver.needs), fmt::arg("guard", guard), fmt::arg("where", driver.where),
        fmt::arg("gx", grid[0]), fmt::arg("gy", grid[1]), fmt::arg("gz", grid[2]),
        fmt::arg("bx", kernel.block[0]), fmt::arg("by", kernel.block[1]),
        fmt::arg("bz", kernel.block[2]), fmt::arg("shared", kernel.sharedBytes),
        fmt::arg("described", described), fmt::arg("argumentsNote", driver.argumentsNote),
        fmt::arg("failures", driver.failures), fmt::arg("loaded", driver.loaded),
        fmt::arg("signature", signature(options, arguments)));
}

std::string generateCapiSource(lowering::EmittedKernel const& kernel, CapiOptions const& options) {
    std::vector<Argument> const arguments = launchArguments(kernel, options);
    CapiDriver const driver = capiDriver(kernel, options);
    std::array<std::string, 3> const grid = gridExpressions(kernel);

    // The kernel's code as bytes and a NUL (cuModuleLoadData reads PTX up to it).
    std::string const& code = driver.code;
    std::string bytes;
    for (std::size_t i = 0; i <= code.size(); ++i)
        bytes += fmt::format("{}0x{:02x},", i % 16 == 0 ? "\n    " : " ",
                             i < code.size() ? static_cast<unsigned char>(code[i]) : 0);

    // The functions the grid formula calls (clang warns of an unused one, even inline).
    std::string functions;
    std::string const formula =
        fmt::format("{} {}", fmt::join(grid, " "), fmt::join(kernel.assumptions, " "));
    for (auto const& [function, definition] :
         {std::pair{"ceildiv", "a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0)"},
          std::pair{"min", "a < b ? a : b"}, std::pair{"max", "a < b ? b : a"}})
        if (formula.find(std::string(function) + "(") != std::string::npos)
            functions += fmt::format("static int64_t {}(int64_t a, int64_t b) {{ return {}; }}\n",
                                     function, definition);

    // The sizes are checked, the pointers passed as the driver's device pointers, every value as
    // it is.
    std::string checks, pointers, addresses;
    for (auto const& p : kernel.parameters) {
        if (p.tensorMap) {
            addresses += fmt::format("{}&kiln_{}", addresses.empty() ? "" : ", ", p.name);
            continue;
        }
        if (isSizeParameter(p) && p.type.starts_with("i"))
            checks += fmt::format("    if ({0} < 0)\n"
                                  "        return kiln_fail({2}, \"{1}_launch: size {0} is "
                                  "%lld; a size is 0 or more\",\n"
                                  "                         (long long){0});\n",
                                  p.name, options.name, driver.invalidValue);
        if (p.pointer) {
            pointers += fmt::format("        {1} kiln_{0} = ({1})(uintptr_t){0};\n", p.name,
                                    driver.devicePointer);
            addresses += fmt::format("{}&kiln_{}", addresses.empty() ? "" : ", ", p.name);
        } else {
            addresses += fmt::format("{}&{}", addresses.empty() ? "" : ", ", p.name);
        }
    }

    // A kernel made for some sizes only (kiln export --specialize) refuses others here, before
    // anything is queued: the kernel itself would trap, which ends the context.
    for (std::string const& a : kernel.assumptions)
        checks += fmt::format("    if (!({0}))\n"
                              "        return kiln_fail({2}, \"%s\", \"{1}_launch: the kernel was "
                              "made for sizes where {0} (kiln export --specialize); export it "
                              "for these sizes\");\n",
                              a, options.name, driver.invalidValue);

    return fmt::format(
        R"(/* {name}_capi.c: generated by `kiln export`; do not edit, export again.
 *
 * The kernel {entry} for {target}, schedule {schedule},
 * and the C ABI that launches it through {through}, loaded at run time: {name}_capi.h
 * declares it and says how to build it.
 */
#include "{name}_capi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The kernel. ---- */

static const char kiln_entry[] = "{entry}";
static const char kiln_target[] = "{target}";
static const unsigned kiln_block[3] = {{{bx}u, {by}u, {bz}u}};
static const unsigned kiln_shared_bytes = {shared}u; /* dynamic shared memory per workgroup */
/* {codeNote},
 * and a NUL. */
static const unsigned char kiln_code[] = {{{bytes}
}};
{kernelFacts}
{launcher}{helpers}
{functions}
{signature} {{
    kiln_message[0] = '\0';
{checks}    {{
        const int64_t kiln_grid[3] = {{{gx}, {gy}, {gz}}};
{pointers}{declarations}{preparations}        void* kiln_arguments[] = {{{addresses}}};
        return kiln_launch(stream, kiln_grid, {persistent}u, kiln_arguments);
    }}
}}

const char* {name}_error(void) {{ return kiln_message; }}
)",
        fmt::arg("name", options.name), fmt::arg("entry", kernel.entry),
        fmt::arg("target", kernel.target), fmt::arg("schedule", scheduleText(kernel)),
        fmt::arg("through", driver.through), fmt::arg("bx", kernel.block[0]),
        fmt::arg("by", kernel.block[1]), fmt::arg("bz", kernel.block[2]),
        fmt::arg("shared", kernel.sharedBytes), fmt::arg("codeNote", driver.codeNote),
        fmt::arg("bytes", bytes), fmt::arg("kernelFacts", driver.kernelFacts),
        fmt::arg("launcher", driver.launcher), fmt::arg("helpers", driver.helpers),
        fmt::arg("functions", functions), fmt::arg("signature", signature(options, arguments)),
        fmt::arg("checks", checks), fmt::arg("gx", grid[0]), fmt::arg("gy", grid[1]),
        fmt::arg("gz", grid[2]), fmt::arg("pointers", pointers),
        fmt::arg("declarations", driver.declarations),
        fmt::arg("preparations", driver.preparations), fmt::arg("addresses", addresses),
        fmt::arg("persistent", kernel.workgroupsPerMultiprocessor));
}

} // namespace kiln::cli
