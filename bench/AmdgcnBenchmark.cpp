// AmdgcnBenchmark.cpp: kiln_amdgcn_bench, the CPU cost of AMDGCN kernels from lowered graphs.
//
// Codegen: a lowered KernelGraph (lowered once, outside the timing) to the kernel's assembly
// text, descriptor, metadata note and manifest (lowering::emitKernel), per example and
// target. Assembly: that text to a code object in memory, by the assembler runtime/Assembler.h
// picks for the target (Comgr for gfx90a, LLVM 16 MC + lld for gfx942 and gfx1100), and by
// LLVM MC for gfx90a too, so that the two can be compared. The f16 GEMM on the matrix cores
// (MMA=1, v_mfma) runs on gfx90a and gfx942 only: gfx1100 has no MFMA.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Assembler.h"

#include <benchmark/benchmark.h>

namespace {

using namespace kiln;

struct Example {
    char const* name;
    char const* command;
    char const* pipeline;
    std::map<std::string, std::int64_t> schedule = {};
    bool matrixCores = false; ///< only where the target has MFMA
};

Example const kExamples[] = {
    {"axpy", "examples/axpy.json", "rules/elementwise.pipeline.json"},
    {"fused_elementwise", "examples/fused-elementwise.json", "rules/elementwise.pipeline.json"},
    {"row_sum", "examples/row-reduction.json", "rules/reduction.pipeline.json"},
    // The default GEMM schedule: 64 x 64 x 16 macro tiles staged through LDS, 4 x 4 register
    // tiles (the "default GEMM kernel").
    {"gemm", "examples/gemm.json", "rules/gemm.pipeline.json"},
    // f16 on the matrix cores: 128 x 128 macro tiles, a 2 x 2 grid of 64 x 64 wave tiles.
    {"gemm_f16_mfma",
     "examples/gemm-f16.json",
     "rules/gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 64}, {"WT_N", 64}},
     true},
};

KernelGraph lowered(Example const& e, std::string const& target) {
    std::string const root = std::string(KILN_SOURCE_DIR) + "/";
    KernelGraph graph = translate(loadCommand(root + e.command));
    rules::lower(rules::loadPipeline(root + e.pipeline), graph,
                 {.parameters = e.schedule, .arch = rules::archFacts(target)});
    return graph;
}

void codegen(benchmark::State& state, Example const& e, std::string const& target) {
    KernelGraph const graph = lowered(e, target);
    std::size_t bytes = 0;
    for (auto _ : state) {
        auto kernel = lowering::emitKernel(graph, {.target = target, .schedule = e.schedule});
        bytes = kernel.code.size();
        benchmark::DoNotOptimize(kernel);
    }
    state.counters["assembly_bytes"] = static_cast<double>(bytes);
}

void assemble(benchmark::State& state, Example const& e, std::string const& target,
              std::string const& assemblerName) {
    std::string const text =
        lowering::emitKernel(lowered(e, target), {.target = target, .schedule = e.schedule}).code;
    auto assembler = assemblerName.empty() ? runtime::assemblerFor(target)
                                           : runtime::makeAssembler(assemblerName);
    if (!assembler.ok()) {
        state.SkipWithError(assembler.error().message().c_str());
        return;
    }
    state.SetLabel((*assembler)->version());
    std::size_t bytes = 0;
    for (auto _ : state) {
        auto code = (*assembler)->assemble(text, target);
        if (!code.ok()) {
            state.SkipWithError(code.error().message().c_str());
            return;
        }
        bytes = code->size();
        benchmark::DoNotOptimize(code);
    }
    state.counters["code_object_bytes"] = static_cast<double>(bytes);
}

int const kRegistered = [] {
    for (Example const& e : kExamples) {
        for (std::string target : {"gfx90a", "gfx942", "gfx1100"}) {
            if (e.matrixCores && target == "gfx1100")
                continue;
            benchmark::RegisterBenchmark(
                (std::string("AmdgcnCodegen/") + e.name + "/" + target).c_str(),
                [e, target](benchmark::State& s) { codegen(s, e, target); })
                ->Unit(benchmark::kMillisecond);
            benchmark::RegisterBenchmark(
                (std::string("AmdgcnAssemble/") + e.name + "/" + target).c_str(),
                [e, target](benchmark::State& s) { assemble(s, e, target, ""); })
                ->Unit(benchmark::kMillisecond);
        }
        benchmark::RegisterBenchmark(
            (std::string("AmdgcnAssemble/") + e.name + "/gfx90a/llvm").c_str(),
            [e](benchmark::State& s) { assemble(s, e, "gfx90a", "llvm"); })
            ->Unit(benchmark::kMillisecond);
    }
    return 0;
}();

} // namespace
