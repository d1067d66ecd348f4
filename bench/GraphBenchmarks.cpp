// Speed of the graph library: translating and verifying, building large graphs, and the
// interpreter's inner loop (coordinate-transform evaluations per second).
#include "BenchCommands.h"
#include "kiln/graph/CoordinatePlan.h"
#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <benchmark/benchmark.h>

using namespace kiln;

static void BM_TranslateAndVerifyGemm(benchmark::State& state) {
    Command const command = bench::example("gemm");
    for (auto _ : state) {
        KernelGraph graph = translate(command);
        auto problems = verify(graph);
        benchmark::DoNotOptimize(problems);
    }
}
BENCHMARK(BM_TranslateAndVerifyGemm)->Unit(benchmark::kMicrosecond);

static void BM_BuildAndVerifyLargeGraph(benchmark::State& state) {
    Command const command = bench::chain(static_cast<int>(state.range(0)));
    std::size_t nodes = 0;
    for (auto _ : state) {
        KernelGraph graph = translate(command);
        auto problems = verify(graph);
        nodes = graph.coordinates.nodes().size() + graph.control.nodes().size();
        benchmark::DoNotOptimize(problems);
    }
    state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_BuildAndVerifyLargeGraph)->Arg(4998)->Unit(benchmark::kMillisecond);

// The interpreter's inner loop: the address of every element of a 64 x 64 tile of a User
// tensor, through Flatten, Tile and Split in reverse (the chain of a tiled load).
static void BM_CoordinatePlanTiledLoad(benchmark::State& state) {
    KernelGraph g;
    using E = CoordinateEdgeKind;
    Id const user =
        g.addDimension({.kind = DimensionKind::User, .size = literal(1024 * 1024), .name = "A"});
    Id const rows = g.addDimension({.kind = DimensionKind::SubDimension,
                                    .size = literal(1024),
                                    .stride = literal(1024),
                                    .axis = 0});
    Id const cols = g.addDimension({.kind = DimensionKind::SubDimension,
                                    .size = literal(1024),
                                    .stride = literal(1),
                                    .axis = 1});
    g.addCoordinateEdge(E::Split, {user}, {rows, cols});
    Id const rn = g.addDimension({.kind = DimensionKind::MacroTileNumber, .size = literal(16)});
    Id const ri = g.addDimension({.kind = DimensionKind::MacroTileIndex, .size = literal(64)});
    Id const cn = g.addDimension({.kind = DimensionKind::MacroTileNumber, .size = literal(16)});
    Id const ci = g.addDimension({.kind = DimensionKind::MacroTileIndex, .size = literal(64)});
    g.addCoordinateEdge(E::Tile, {rows}, {rn, ri});
    g.addCoordinateEdge(E::Tile, {cols}, {cn, ci});
    Id const wg0 =
        g.addDimension({.kind = DimensionKind::Workgroup, .size = literal(16), .axis = 0});
    Id const wg1 =
        g.addDimension({.kind = DimensionKind::Workgroup, .size = literal(16), .axis = 1});
    g.addCoordinateEdge(E::PassThrough, {rn}, {wg0});
    g.addCoordinateEdge(E::PassThrough, {cn}, {wg1});
    Id const tile = g.addDimension(
        {.kind = DimensionKind::MacroTile, .size = literal(64 * 64), .dtype = DataType::F32});
    g.addCoordinateEdge(E::Flatten, {ri, ci}, {tile});

    auto sizeOf = [&](Id d) -> std::optional<std::int64_t> {
        return literalInt(g.coordinates.node(d).size);
    };
    auto strideOf = [&](Id d) -> std::optional<std::int64_t> {
        return literalInt(g.coordinates.node(d).stride);
    };
    CoordinatePlan const plan(g, {wg0, wg1, tile}, {user}, {sizeOf, strideOf});

    std::int64_t known[3] = {3, 5, 0}, address = 0, checksum = 0;
    for (auto _ : state) {
        for (std::int64_t e = 0; e < 64 * 64; ++e) {
            known[2] = e;
            plan.run(known, std::span(&address, 1));
            checksum += address;
        }
        benchmark::DoNotOptimize(checksum);
    }
    // Each element applies plan.steps() transforms (Flatten, 2 x Tile, 2 x PassThrough, Split).
    state.SetItemsProcessed(state.iterations() * 64 * 64 * static_cast<std::int64_t>(plan.steps()));
    state.counters["transforms_per_element"] = static_cast<double>(plan.steps());
}
BENCHMARK(BM_CoordinatePlanTiledLoad)->Unit(benchmark::kMicrosecond);

static void BM_InterpretTranslatedGemm(benchmark::State& state) {
    Command const command = bench::example("gemm");
    KernelGraph const graph = translate(command);
    Bindings const inputs = randomBindings(command, {{"M", 64}, {"N", 64}, {"K", 64}}, 1);
    for (auto _ : state) {
        Bindings b = inputs;
        interpret(graph, b);
        benchmark::DoNotOptimize(b.tensors);
    }
}
BENCHMARK(BM_InterpretTranslatedGemm)->Unit(benchmark::kMillisecond);
