// Speed of the graph library: translating and verifying, building large graphs, and the
// interpreter's inner loop (coordinate-transform evaluations per second).
#include "kiln/graph/Command.h"
#include "kiln/graph/CoordinatePlan.h"
#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <benchmark/benchmark.h>

using namespace kiln;

namespace {

Command gemmCommand() {
    Command c("gemm");
    auto m = c.size("M"), n = c.size("N"), k = c.size("K");
    c.tensor("A", DataType::F32, {m, k}).tensor("B", DataType::F32, {n, k});
    c.tensor("C", DataType::F32, {m, n}).tensor("D", DataType::F32, {m, n});
    c.scalar("alpha", DataType::F32).scalar("beta", DataType::F32);
    auto ab = c.multiply(c.loadTiled("A"), c.loadTiled("B"), false, true);
    auto cv = c.loadTiled("C");
    c.storeTiled("D", c.execute(ab + " * alpha + beta * " + cv));
    return c;
}

// A chain of `links` element-wise operations: two graph nodes (a value and an Assign) each.
Command chainCommand(int links) {
    Command c("chain");
    auto n = c.size("N");
    c.tensor("X", DataType::F32, {n}).tensor("Y", DataType::F32, {n});
    std::string const x = c.loadLinear("X");
    std::string last = x;
    for (int i = 0; i < links; ++i)
        last = c.execute(last + " * 0.5 + " + x);
    c.storeLinear("Y", last);
    return c;
}

} // namespace

static void BM_TranslateAndVerifyGemm(benchmark::State& state) {
    Command const command = gemmCommand();
    for (auto _ : state) {
        KernelGraph graph = translate(command);
        auto problems = verify(graph);
        benchmark::DoNotOptimize(problems);
    }
}
BENCHMARK(BM_TranslateAndVerifyGemm)->Unit(benchmark::kMicrosecond);

static void BM_BuildAndVerifyLargeGraph(benchmark::State& state) {
    Command const command = chainCommand(static_cast<int>(state.range(0)));
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
    Command const command = gemmCommand();
    KernelGraph const graph = translate(command);
    Bindings const inputs = randomBindings(command, {{"M", 64}, {"N", 64}, {"K", 64}}, 1);
    for (auto _ : state) {
        Bindings b = inputs;
        interpret(graph, b);
        benchmark::DoNotOptimize(b.tensors);
    }
}
BENCHMARK(BM_InterpretTranslatedGemm)->Unit(benchmark::kMillisecond);
