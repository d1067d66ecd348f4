// ArchBenchmarks.cpp: lookups in the architecture database are O(1) after the one-time load.
//
// The *Scaling benchmarks look up one name among N synthetic instructions or facts; their time
// must not grow with N. ArchLibraryLoad is the one-time cost of parsing the embedded database.
#include "kiln/arch-db/ArchLibrary.h"

#include <benchmark/benchmark.h>
#include <string>
#include <vector>

namespace {

using kiln::arch::Arch;
using kiln::arch::ArchLibrary;
using kiln::arch::Capability;

void ArchLibraryGet(benchmark::State& state) {
    ArchLibrary::instance(); // load outside the timed loop
    for (auto _ : state) {
        benchmark::DoNotOptimize(&ArchLibrary::get("sm_90a"));
    }
}
BENCHMARK(ArchLibraryGet);

void ArchHasCapability(benchmark::State& state) {
    Arch const& arch = ArchLibrary::get("sm_90a");
    for (auto _ : state) {
        benchmark::DoNotOptimize(arch.has(Capability::HasWGMMA));
    }
}
BENCHMARK(ArchHasCapability);

void ArchHasCapabilityByName(benchmark::State& state) {
    Arch const& arch = ArchLibrary::get("sm_90a");
    for (auto _ : state) {
        benchmark::DoNotOptimize(arch.has("HasWGMMA"));
    }
}
BENCHMARK(ArchHasCapabilityByName);

void ArchFact(benchmark::State& state) {
    Arch const& arch = ArchLibrary::get("sm_90a");
    for (auto _ : state) {
        benchmark::DoNotOptimize(arch.fact("shared_bytes"));
    }
}
BENCHMARK(ArchFact);

void ArchInstruction(benchmark::State& state) {
    Arch const& arch = ArchLibrary::get("gfx942");
    for (auto _ : state) {
        benchmark::DoNotOptimize(arch.instruction("global_load_dwordx4").latency);
    }
}
BENCHMARK(ArchInstruction);

/// What a codegen step does per query: find the target, test a capability, read an instruction.
void ArchGetHasInstruction(benchmark::State& state) {
    ArchLibrary::instance();
    for (auto _ : state) {
        Arch const& arch = ArchLibrary::get("sm_90a");
        bool wgmma = arch.has(Capability::HasWGMMA);
        int latency = arch.instruction("ld.global.v4.f32").latency;
        benchmark::DoNotOptimize(wgmma);
        benchmark::DoNotOptimize(latency);
    }
}
BENCHMARK(ArchGetHasInstruction);

/// A target with `count` instructions and facts named op<i> / fact<i>.
Arch syntheticArch(int count) {
    std::vector<kiln::arch::Fact> facts;
    std::vector<kiln::arch::Instruction> instructions;
    for (int i = 0; i < count; ++i) {
        facts.push_back({"fact" + std::to_string(i), i, "count", "synthetic"});
        kiln::arch::Instruction instruction;
        instruction.name = "op" + std::to_string(i);
        instruction.latency = i;
        instruction.issueCycles = 1;
        instruction.latencySource = instruction.issueSource = "synthetic";
        instructions.push_back(instruction);
    }
    return Arch("synthetic", kiln::arch::Vendor::Amd, "synthetic", "none", facts, {}, instructions);
}

void ArchInstructionScaling(benchmark::State& state) {
    int count = static_cast<int>(state.range(0));
    Arch arch = syntheticArch(count);
    std::string name = "op" + std::to_string(count / 2);
    for (auto _ : state) {
        benchmark::DoNotOptimize(arch.instruction(name).latency);
    }
}
BENCHMARK(ArchInstructionScaling)->RangeMultiplier(32)->Range(32, 32768);

void ArchFactScaling(benchmark::State& state) {
    int count = static_cast<int>(state.range(0));
    Arch arch = syntheticArch(count);
    std::string name = "fact" + std::to_string(count / 2);
    for (auto _ : state) {
        benchmark::DoNotOptimize(arch.fact(name));
    }
}
BENCHMARK(ArchFactScaling)->RangeMultiplier(32)->Range(32, 32768);

void ArchLibraryLoad(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(ArchLibrary::embedded().targets().size());
    }
}
BENCHMARK(ArchLibraryLoad)->Unit(benchmark::kMillisecond);

} // namespace
