// Speed of the tuner's bookkeeping: the constraint solver enumerating the shipped GEMM space
// and a dense space with pruning, the cost model per candidate, and the tuning database
// (appending records, each one write() to the file, and reading a database back).
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/scheduler/CostModel.h"
#include "kiln/scheduler/Solver.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <benchmark/benchmark.h>
#include <filesystem>
#include <unistd.h>

using namespace kiln;
using namespace kiln::scheduler;

namespace {
std::string const kSource = KILN_SOURCE_DIR;
} // namespace

// Every valid point of examples/gemm.space.json on sm_90a.
static void BM_SolveGemmSpace(benchmark::State& state) {
    SearchSpace const space = loadSearchSpace(kSource + "/examples/gemm.space.json");
    Solver const solver(space, rules::archFacts("sm_90a"));
    std::int64_t visited = 0, valid = 0;
    for (auto _ : state) {
        auto const stats = solver.enumerate([](Point const&) { return true; });
        visited += stats.partialPoints;
        valid += stats.validPoints;
    }
    state.counters["valid_points"] = double(valid) / double(state.iterations());
    state.counters["partial_points/s"] =
        benchmark::Counter(double(visited), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SolveGemmSpace);

// Five parameters of 16 values (1M points unconstrained), a constraint on the first two that
// keeps 1/16 of them: pruning visits about 70k partial points.
static void BM_SolvePrunedSpace(benchmark::State& state) {
    SearchSpace const space = parseSearchSpace(R"({"space": "b", "version": 1, "parameters": {
        "A": {"range": {"min": 1, "max": 16}}, "B": {"range": {"min": 1, "max": 16}},
        "C": {"range": {"min": 1, "max": 16}}, "D": {"range": {"min": 1, "max": 16}},
        "E": {"range": {"min": 1, "max": 16}}},
        "constraints": ["$A == $B", "$C + $D + $E <= 40"]})",
                                               "bench.space.json");
    Solver const solver(space, {});
    std::int64_t visited = 0;
    for (auto _ : state) {
        auto const stats = solver.enumerate([](Point const&) { return true; });
        visited += stats.partialPoints;
        benchmark::DoNotOptimize(stats.validPoints);
    }
    state.counters["partial_points/s"] =
        benchmark::Counter(double(visited), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SolvePrunedSpace);

static void BM_CostModelGemm(benchmark::State& state) {
    Command const command = loadCommand(kSource + "/examples/gemm-f16.json");
    Problem const problem = problemOf(command, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
    arch::Arch const& arch = arch::ArchLibrary::get("sm_90a");
    std::map<std::string, std::int64_t> const params{
        {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"STAGES", 3}};
    for (auto _ : state)
        benchmark::DoNotOptimize(estimateCost(problem, arch, params).microseconds);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CostModelGemm);

namespace {
TuningRecord sampleRecord(std::int64_t i) {
    TuningRecord r;
    r.key = {R"({"command":"gemm_f16","sizes":{"K":4096,"M":4096,"N":4096}})",
             "gemm",
             "sm_90a",
             "NVIDIA H100 80GB HBM3",
             "12040",
             "0.1.0",
             "0123456789abcdef",
             "measured:cuda"};
    r.point = {{"MT_M", 64 + i % 4 * 64}, {"MT_N", 128}, {"MT_K", i}, {"STAGES", 2}};
    r.microseconds = 123.4 + double(i);
    r.spread = 0.01;
    r.samples = 20;
    r.at = "2026-01-01T00:00:00Z";
    return r;
}

std::string benchFile(std::string const& name) {
    auto const p = std::filesystem::temp_directory_path() /
                   ("kiln-bench-" + name + "-" + std::to_string(::getpid()) + ".jsonl");
    std::filesystem::remove(p);
    return p.string();
}
} // namespace

// One record appended (JSON, one write() of the line) and indexed.
static void BM_DatabaseAppend(benchmark::State& state) {
    std::string const path = benchFile("append");
    {
        TuningDatabase db(path);
        std::int64_t i = 0;
        for (auto _ : state)
            db.append(sampleRecord(i++));
        state.SetItemsProcessed(state.iterations());
    }
    std::filesystem::remove(path);
}
BENCHMARK(BM_DatabaseAppend);

// Opening a database of 10,000 records: reading, parsing and indexing every line.
static void BM_DatabaseOpen10k(benchmark::State& state) {
    std::string const path = benchFile("open");
    {
        TuningDatabase db(path);
        for (std::int64_t i = 0; i < 10000; ++i)
            db.append(sampleRecord(i));
    }
    for (auto _ : state) {
        TuningDatabase const db(path);
        benchmark::DoNotOptimize(db.records().size());
    }
    state.SetItemsProcessed(state.iterations() * 10000);
    std::filesystem::remove(path);
}
BENCHMARK(BM_DatabaseOpen10k)->Unit(benchmark::kMillisecond);
