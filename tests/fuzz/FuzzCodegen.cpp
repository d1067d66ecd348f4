// libFuzzer target: schedule parameters through lowering and code generation. The input picks
// one of four fixed Commands of examples/ (axpy, the f32 GEMM, the f16 GEMM, the row sum), a
// target (sm_90a, sm_80, gfx942, gfx1100) and any int64 for each schedule parameter the pipeline
// or code generation reads (0, negative, huge); the Command is lowered by its pipeline (or,
// when the input says so, by another one), the graph verified, and the kernel emitted as PTX or
// AMDGCN text (not assembled). A UserError anywhere is a refusal and fine; a graph the verifier
// rejects after lowering succeeded, an InternalError or any other exception, a crash, a hang or
// a huge allocation is a finding.
//
// The input, byte by byte (missing bytes read as 0, so a short input keeps the defaults):
//   0  the Command: % 4 = axpy / gemm / gemm-f16 / row-reduction
//   1  the target: % 4 = sm_90a / sm_80 / gfx942 / gfx1100
//   2  bit 0: code for the Command's problem sizes (CodegenOptions::sizes);
//      bit 1: lower by another pipeline, (byte >> 2) % 3 = elementwise / gemm / reduction
//   then, per parameter in name order, a selector byte: % 4 = 0 the default, 1 the next byte
//   as a signed 8-bit value, 2 +-2^(next byte % 63) (sign: the selector's bit 2), 3 the next
//   8 bytes as a little-endian int64.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

std::string source(std::string const& relative) {
    return std::string(KILN_SOURCE_DIR) + "/" + relative;
}

struct Fixed {
    std::vector<kiln::Command> commands;
    std::vector<kiln::rules::Pipeline> pipelines;
    std::vector<std::vector<std::string>> parameters; ///< per pipeline, in name order
};

Fixed const& fixed() {
    static Fixed const f = [] {
        Fixed f;
        for (auto const* name : {"axpy", "gemm", "gemm-f16", "row-reduction"})
            f.commands.push_back(
                kiln::loadCommand(source(std::string("examples/") + name + ".json")));
        for (auto const* name : {"elementwise", "gemm", "reduction"}) {
            f.pipelines.push_back(
                kiln::rules::loadPipeline(source(std::string("rules/") + name + ".pipeline.json")));
            std::set<std::string> names = kiln::rules::parameterNames(f.pipelines.back());
            for (auto const* codegen : kiln::lowering::kCodegenParameters)
                names.insert(codegen);
            f.parameters.emplace_back(names.begin(), names.end());
        }
        return f;
    }();
    return f;
}

// The bytes of the input, read in order; 0 past the end.
class Reader {
public:
    Reader(std::uint8_t const* data, std::size_t size)
        : data_(data)
        , size_(size) {}
    std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
    std::int64_t value(std::uint8_t selector) {
        switch (selector % 4) {
        case 1:
            return static_cast<std::int8_t>(byte());
        case 2: {
            std::int64_t const power = std::int64_t{1} << (byte() % 63);
            return (selector & 4) ? -power : power;
        }
        default: {
            std::uint64_t v = 0;
            for (int k = 0; k < 8; ++k)
                v |= std::uint64_t{byte()} << (8 * k);
            return static_cast<std::int64_t>(v);
        }
        }
    }

private:
    std::uint8_t const* data_;
    std::size_t size_, at_ = 0;
};

[[noreturn]] void finding(char const* what, std::string const& detail) {
    std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    static std::array<char const*, 4> const targets{"sm_90a", "sm_80", "gfx942", "gfx1100"};
    static std::array<int, 4> const naturalPipeline{0, 1, 1, 2};
    Fixed const& f = fixed();
    Reader in(data, size);
    std::size_t const which = in.byte() % f.commands.size();
    std::string const target = targets[in.byte() % targets.size()];
    std::uint8_t const flags = in.byte();
    std::size_t const p =
        (flags & 2) ? std::size_t((flags >> 2) % 3) : std::size_t(naturalPipeline[which]);
    kiln::rules::Pipeline const& pipeline = f.pipelines[p];
    std::map<std::string, std::int64_t> params;
    for (auto const& name : f.parameters[p])
        if (std::uint8_t const selector = in.byte(); selector % 4 != 0)
            params[name] = in.value(selector);
    kiln::Command const& command = f.commands[which];
    kiln::KernelGraph graph = kiln::translate(command);
    try {
        kiln::rules::lower(pipeline, graph,
                           {.parameters = params, .arch = kiln::rules::archFacts(target)});
    } catch (kiln::UserError const&) {
        return 0;
    }
    if (auto const problems = kiln::verify(graph); !problems.empty())
        finding("the verifier rejects a lowered graph", kiln::describe(graph, problems));

    kiln::lowering::CodegenOptions codegen{.target = target, .schedule = pipeline.defaults};
    for (auto const& [name, value] : params)
        codegen.schedule[name] = value;
    if (flags & 1)
        for (auto const& name : command.sizes())
            codegen.sizes[name] = static_cast<std::int64_t>(command.defaults.at(name));
    try {
        auto const kernel = kiln::lowering::emitKernel(graph, codegen);
        if (kernel.code.empty() || kernel.entry.empty())
            finding("an emitted kernel without code or entry", target);
        if (kernel.manifestJson().empty())
            finding("an emitted kernel without a manifest", target);
    } catch (kiln::UserError const&) {
    }
    return 0;
}
