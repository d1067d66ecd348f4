// Speed of the rule engine: the matcher on a large graph, and a whole pipeline with and
// without its trace.
#include "BenchCommands.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/Matcher.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/rules/RuleJson.h"
#include "kiln/rules/Trace.h"

#include <benchmark/benchmark.h>
#include <cstdio>

using namespace kiln;

// Every Assign whose dest value flows into another Linear value that an Assign writes: a
// three-variable pattern over control, mapping and coordinate edges, enumerated to the end.
static void BM_MatcherCandidatesOnLargeGraph(benchmark::State& state) {
    KernelGraph const graph = translate(bench::chain(5000));
    rules::RuleSet const set = rules::parseRuleSet(R"json({ "ruleset": "b", "version": 1, "rules": [
      { "name": "flow", "match": {
          "nodes": { "a": { "op": "Assign" }, "v": { "dim": "Linear" }, "w": { "dim": "Linear" }, "b": { "op": "Assign" } },
          "edges": [ { "mapping": "dest", "op": "a", "dim": "v" },
                     { "edge": "DataFlow", "tails": ["v", "...others"], "heads": ["w"] },
                     { "mapping": "dest", "op": "b", "dim": "w" } ] } } ] })json",
                                                   "bench");
    std::int64_t candidates = 0, matches = 0;
    for (auto _ : state) {
        rules::Matcher matcher(graph);
        matcher.forEach(set.rules[0].match, [&](rules::Match const&) {
            ++matches;
            return false;
        });
        candidates += matcher.candidatesTried();
    }
    state.counters["nodes"] =
        static_cast<double>(graph.coordinates.nodes().size() + graph.control.nodes().size());
    state.counters["candidates_per_second"] =
        benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsRate);
    state.counters["matches_per_run"] =
        static_cast<double>(matches) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MatcherCandidatesOnLargeGraph)->Unit(benchmark::kMillisecond);

static void BM_LowerElementwisePipeline(benchmark::State& state) {
    bool const traced = state.range(0) != 0;
    rules::Pipeline const pipeline =
        rules::loadPipeline(KILN_SOURCE_DIR "/rules/elementwise.pipeline.json");
    KernelGraph const translated = translate(bench::example("axpy"));
    std::string const tracePath = "/tmp/kiln-bench-trace.json";
    std::unique_ptr<rules::Trace> trace;
    rules::EngineOptions options;
    if (traced) {
        trace = std::make_unique<rules::Trace>(tracePath);
        options.observe = [&](rules::Application const& a, KernelGraph const&) {
            trace->record(a);
        };
    }
    for (auto _ : state) {
        KernelGraph graph = translated;
        rules::lower(pipeline, graph, options);
        benchmark::DoNotOptimize(graph);
    }
    trace.reset();
    std::remove(tracePath.c_str());
}
BENCHMARK(BM_LowerElementwisePipeline)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("traced")
    ->Unit(benchmark::kMicrosecond);

// The GEMM pipeline as shipped (the macro-tile rule set), on the example with an epilogue.
static void BM_LowerGemmPipeline(benchmark::State& state) {
    rules::Pipeline const pipeline =
        rules::loadPipeline(KILN_SOURCE_DIR "/rules/gemm.pipeline.json");
    KernelGraph const translated = translate(bench::example("gemm"));
    std::int64_t applications = 0;
    for (auto _ : state) {
        KernelGraph graph = translated;
        for (auto const& step : rules::lower(pipeline, graph, {}))
            applications += step.applications;
        benchmark::DoNotOptimize(graph);
    }
    state.counters["applications"] =
        static_cast<double>(applications) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_LowerGemmPipeline)->Unit(benchmark::kMicrosecond);
