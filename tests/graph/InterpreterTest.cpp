// The interpreter runs KernelGraphs at any lowering level; these tests compare it with the
// direct Command semantics on random inputs, at the translated level and on a GEMM lowered by
// hand into workgroup tiles and a K loop, with sizes that are not multiples of the tiles.
#include "kiln/graph/Interpreter.h"

#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Reference.h"
#include "kiln/graph/Translate.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

// examples/axpy.json: y = alpha * x + y over N floats.
Command axpy() {
    return loadCommand(KILN_SOURCE_DIR "/examples/axpy.json");
}

Command gemm(DataType type, bool transposeB) {
    Command c("gemm");
    auto m = c.size("M"), n = c.size("N"), k = c.size("K");
    c.tensor("A", type, {m, k});
    c.tensor("B", type, transposeB ? std::vector{n, k} : std::vector{k, n});
    c.tensor("C", type, {m, n}).tensor("D", type, {m, n});
    c.scalar("alpha", DataType::F32).scalar("beta", DataType::F32);
    auto ab = c.multiply(c.loadTiled("A"), c.loadTiled("B"), false, transposeB);
    auto cv = c.loadTiled("C");
    c.storeTiled("D", c.execute(fmt::format("alpha * {} + beta * {}", ab, cv)));
    return c;
}

// Runs the interpreter on translate(command) and the reference on the same random inputs;
// returns the largest relative error over the tensors the command stores.
double interpreterError(Command const& command, KernelGraph const& graph,
                        std::map<std::string, double> const& problem, std::uint64_t seed = 7) {
    Bindings viaGraph = randomBindings(command, problem, seed);
    Bindings direct = viaGraph;
    interpret(graph, viaGraph);
    runReference(command, direct);
    double worst = 0;
    for (auto const& [name, t] : direct.tensors)
        worst = std::max(worst, maxRelativeError(viaGraph.tensors.at(name), t));
    return worst;
}

} // namespace

TEST(Interpreter, AxpyMatchesTheFormula) {
    Command c = axpy();
    Bindings b = randomBindings(c, {{"N", 37}, {"alpha", 2.5}}, 1);
    Bindings before = b;
    interpret(translate(c), b);
    for (std::size_t i = 0; i < 37; ++i) {
        float const expected = 2.5f * static_cast<float>(before.tensors["X"].data[i]) +
                               static_cast<float>(before.tensors["Y"].data[i]);
        EXPECT_EQ(b.tensors["Y"].data[i], expected) << "element " << i;
    }
    EXPECT_NE(before.tensors["Y"].data[0], b.tensors["Y"].data[0]); // inputs are not zeros
}

TEST(Interpreter, TranslatedGemmAgreesWithTheDirectSemantics) {
    for (bool transposeB : {false, true}) {
        Command c = gemm(DataType::F32, transposeB);
        EXPECT_LT(interpreterError(c, translate(c), {{"M", 37}, {"N", 29}, {"K", 19}}), 1e-5)
            << "transposeB=" << transposeB;
    }
}

TEST(Interpreter, HalfGemmRoundsLikeTheReference) {
    Command c = gemm(DataType::F16, false);
    EXPECT_LT(interpreterError(c, translate(c), {{"M", 16}, {"N", 24}, {"K", 40}}), 1e-2);
}

TEST(Interpreter, RowReductionOfAStridedTensor) {
    Command c("rowsum");
    auto m = c.size("M"), n = c.size("N");
    c.tensor("X", DataType::F32, {m, n}, {literal(1), m}); // column-major
    c.tensor("Y", DataType::F32, {m});
    c.storeTiled("Y", c.reduce(c.loadTiled("X"), Combine::Sum));
    EXPECT_EQ(interpreterError(c, translate(c), {{"M", 13}, {"N", 31}}), 0.0);
}

namespace {

// A GEMM D = A x B lowered by hand the way the tiling rules lower it: every workgroup owns a
// 16 x 16 tile of D (Tile of M and N, PassThrough to Workgroup), a ForLoop walks K in steps of
// 8 (Tile of K, PassThrough to the loop counter), and an accumulator tile adds the products.
struct TiledGemm {
    Command command{"gemm"};
    KernelGraph graph;

    TiledGemm() {
        auto M = command.size("M"), N = command.size("N"), K = command.size("K");
        command.tensor("A", DataType::F32, {M, K}).tensor("B", DataType::F32, {K, N});
        command.tensor("D", DataType::F32, {M, N});
        command.storeTiled("D", command.multiply(command.loadTiled("A"), command.loadTiled("B")));

        KernelGraph& g = graph;
        g.name = "gemm-tiled";
        g.arguments = {{"A", KernelArgument::Kind::Tensor, DataType::F32},
                       {"B", KernelArgument::Kind::Tensor, DataType::F32},
                       {"D", KernelArgument::Kind::Tensor, DataType::F32},
                       {"M", KernelArgument::Kind::Size, DataType::I64},
                       {"N", KernelArgument::Kind::Size, DataType::I64},
                       {"K", KernelArgument::Kind::Size, DataType::I64}};
        auto const dim = [&](DimensionKind kind, ExprPtr size, ExprPtr stride = nullptr,
                             int axis = -1) {
            return g.addDimension({.kind = kind, .size = size, .stride = stride, .axis = axis});
        };
        auto const user = [&](std::string name, ExprPtr size) {
            return g.addDimension(
                {.kind = DimensionKind::User, .size = size, .name = name, .dtype = DataType::F32});
        };
        auto const tile = [&](std::string name, ExprPtr rows, ExprPtr cols) {
            return g.addDimension({.kind = DimensionKind::MacroTile,
                                   .size = rows * cols,
                                   .name = name,
                                   .dtype = DataType::F32,
                                   .shape = {rows, cols}});
        };
        auto const t16 = literal(16), t8 = literal(8);
        using E = CoordinateEdgeKind;

        Id const wg0 = dim(DimensionKind::Workgroup, ceilDivide(M, t16), nullptr, 0);
        Id const wg1 = dim(DimensionKind::Workgroup, ceilDivide(N, t16), nullptr, 1);
        Id const kk = g.addDimension(
            {.kind = DimensionKind::ForLoop, .size = ceilDivide(K, t8), .name = "K"});

        // A: rows by workgroup, columns by the K loop.
        Id const uA = user("A", M * K), a0 = dim(DimensionKind::SubDimension, M, K, 0),
                 a1 = dim(DimensionKind::SubDimension, K, literal(1), 1);
        g.addCoordinateEdge(E::Split, {uA}, {a0, a1});
        Id const nA0 = dim(DimensionKind::MacroTileNumber, ceilDivide(M, t16)),
                 iA0 = dim(DimensionKind::MacroTileIndex, t16);
        Id const nA1 = dim(DimensionKind::MacroTileNumber, ceilDivide(K, t8)),
                 iA1 = dim(DimensionKind::MacroTileIndex, t8);
        g.addCoordinateEdge(E::Tile, {a0}, {nA0, iA0});
        g.addCoordinateEdge(E::Tile, {a1}, {nA1, iA1});
        g.addCoordinateEdge(E::PassThrough, {nA0}, {wg0});
        g.addCoordinateEdge(E::PassThrough, {nA1}, {kk});
        Id const tA = tile("a", t16, t8);
        g.addCoordinateEdge(E::Flatten, {iA0, iA1}, {tA});

        // B: rows by the K loop, columns by workgroup.
        Id const uB = user("B", K * N), b0 = dim(DimensionKind::SubDimension, K, N, 0),
                 b1 = dim(DimensionKind::SubDimension, N, literal(1), 1);
        g.addCoordinateEdge(E::Split, {uB}, {b0, b1});
        Id const nB0 = dim(DimensionKind::MacroTileNumber, ceilDivide(K, t8)),
                 iB0 = dim(DimensionKind::MacroTileIndex, t8);
        Id const nB1 = dim(DimensionKind::MacroTileNumber, ceilDivide(N, t16)),
                 iB1 = dim(DimensionKind::MacroTileIndex, t16);
        g.addCoordinateEdge(E::Tile, {b0}, {nB0, iB0});
        g.addCoordinateEdge(E::Tile, {b1}, {nB1, iB1});
        g.addCoordinateEdge(E::PassThrough, {nB0}, {kk});
        g.addCoordinateEdge(E::PassThrough, {nB1}, {wg1});
        Id const tB = tile("b", t8, t16);
        g.addCoordinateEdge(E::Flatten, {iB0, iB1}, {tB});

        // D: the accumulator tile, stored through Join.
        Id const uD = user("D", M * N), d0 = dim(DimensionKind::SubDimension, M, N, 0),
                 d1 = dim(DimensionKind::SubDimension, N, literal(1), 1);
        g.addCoordinateEdge(E::Join, {d0, d1}, {uD});
        Id const nD0 = dim(DimensionKind::MacroTileNumber, ceilDivide(M, t16)),
                 iD0 = dim(DimensionKind::MacroTileIndex, t16);
        Id const nD1 = dim(DimensionKind::MacroTileNumber, ceilDivide(N, t16)),
                 iD1 = dim(DimensionKind::MacroTileIndex, t16);
        g.addCoordinateEdge(E::Tile, {d0}, {nD0, iD0});
        g.addCoordinateEdge(E::Tile, {d1}, {nD1, iD1});
        g.addCoordinateEdge(E::PassThrough, {nD0}, {wg0});
        g.addCoordinateEdge(E::PassThrough, {nD1}, {wg1});
        Id const acc = tile("acc", t16, t16), product = tile("ab", t16, t16);
        g.addCoordinateEdge(E::Flatten, {iD0, iD1}, {acc});
        g.addCoordinateEdge(E::DataFlow, {uA}, {tA});
        g.addCoordinateEdge(E::DataFlow, {uB}, {tB});
        g.addCoordinateEdge(E::DataFlow, {tA, tB}, {product});
        g.addCoordinateEdge(E::DataFlow, {product}, {acc});
        g.addCoordinateEdge(E::DataFlow, {acc}, {uD});

        using O = OperationKind;
        using C = ControlEdgeKind;
        Id const kernel = g.addOperation({.kind = O::Kernel});
        Id const zero = g.addOperation(
            {.kind = O::Assign, .expression = literal(Value::real(0.0, DataType::F32))});
        g.mapping.connect(zero, role::dest, acc);
        Id const loop =
            g.addOperation({.kind = O::ForLoop,
                            .expression = binary(BinaryOp::Less, index(kk), dimensionSize(kk)),
                            .name = "K"});
        g.mapping.connect(loop, role::counter, kk);
        Id const init = g.addOperation({.kind = O::Assign, .expression = literal(0)});
        Id const step = g.addOperation({.kind = O::Assign, .expression = index(kk) + literal(1)});
        g.mapping.connect(init, role::dest, kk);
        g.mapping.connect(step, role::dest, kk);
        Id const loadA = g.addOperation({.kind = O::LoadTiled, .dtype = DataType::F32});
        g.mapping.connect(loadA, role::source, uA);
        g.mapping.connect(loadA, role::dest, tA);
        Id const loadB = g.addOperation({.kind = O::LoadTiled, .dtype = DataType::F32});
        g.mapping.connect(loadB, role::source, uB);
        g.mapping.connect(loadB, role::dest, tB);
        Id const mul = g.addOperation({.kind = O::Multiply, .dtype = DataType::F32});
        g.mapping.connect(mul, role::lhs, tA);
        g.mapping.connect(mul, role::rhs, tB);
        g.mapping.connect(mul, role::dest, product);
        Id const add = g.addOperation(
            {.kind = O::Assign,
             .expression = dataValue(acc, DataType::F32) + dataValue(product, DataType::F32),
             .dtype = DataType::F32});
        g.mapping.connect(add, role::dest, acc);
        Id const store = g.addOperation({.kind = O::StoreTiled, .dtype = DataType::F32});
        g.mapping.connect(store, role::source, acc);
        g.mapping.connect(store, role::dest, uD);

        g.addControlEdge(C::Body, kernel, zero);
        g.addControlEdge(C::Sequence, zero, loop);
        g.addControlEdge(C::Sequence, loop, store);
        g.addControlEdge(C::Initialize, loop, init);
        g.addControlEdge(C::ForLoopIncrement, loop, step);
        g.addControlEdge(C::Body, loop, loadA);
        g.addControlEdge(C::Sequence, loadA, loadB);
        g.addControlEdge(C::Sequence, loadB, mul);
        g.addControlEdge(C::Sequence, mul, add);
    }
};

} // namespace

TEST(Interpreter, HandLoweredTiledGemmAgreesOnRaggedSizes) {
    TiledGemm gemm;
    // 37 x 29 x 19: no size is a multiple of its tile, so every edge tile is masked.
    EXPECT_LT(interpreterError(gemm.command, gemm.graph, {{"M", 37}, {"N", 29}, {"K", 19}}), 1e-5);
    EXPECT_LT(interpreterError(gemm.command, gemm.graph, {{"M", 32}, {"N", 16}, {"K", 8}}), 1e-5);
}

TEST(Interpreter, ReportsALoopThatNeverEnds) {
    TiledGemm gemm;
    // Make the increment a no-op: the loop would run forever.
    for (Id op : gemm.graph.control.nodes()) {
        auto& o = gemm.graph.control.node(op);
        if (o.kind == OperationKind::Assign && o.expression &&
            std::holds_alternative<expr::Binary>(*o.expression) && !o.dtype)
            o.expression = index(gemm.graph.mapping.get(op, role::dest));
    }
    Bindings b = randomBindings(gemm.command, {{"M", 16}, {"N", 16}, {"K", 8}}, 3);
    EXPECT_THROW(
        {
            try {
                interpret(gemm.graph, b, {.maxLoopIterations = 100});
            } catch (UserError const& e) {
                EXPECT_STREQ(e.what(), "error: ForLoop #54 (K) ran 100 iterations without ending");
                throw;
            }
        },
        UserError);
}

TEST(Interpreter, MissingSizeIsAUserError) {
    Command c = axpy();
    EXPECT_THROW(randomBindings(c, {}, 1), UserError);
}

std::string bindingError(Command const& c, std::map<std::string, double> const& problem) {
    try {
        randomBindings(c, problem, 1);
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

// Sizes are refused for what is wrong with them, with the bound a Command's own sizes have; a
// tensor whose extent passes int64 is refused, not wrapped to a small or negative one.
TEST(Interpreter, SizesOutOfRangeSayWhy) {
    Command const c = axpy();
    EXPECT_EQ(bindingError(c, {{"N", -1}}),
              "error: size 'N' must be an integer from 0 to 1099511627776, not -1");
    EXPECT_EQ(bindingError(c, {{"N", 2.5}}),
              "error: size 'N' must be an integer from 0 to 1099511627776, not 2.5");
    EXPECT_EQ(bindingError(c, {{"N", 1099511627777.0}}),
              "error: size 'N' must be an integer from 0 to 1099511627776, not 1099511627777");
    EXPECT_EQ(bindingError(c, {{"N", 1099511627776.0}}),
              "error: tensor 'X' has 1099511627776 elements; the host reference stops at 2^31");
    Command const g = gemm(DataType::F32, false);
    double const big = 1099511627776.0;
    EXPECT_EQ(bindingError(g, {{"M", big}, {"N", big}, {"K", big}}),
              "error: tensor 'A' has more elements than 2^63; the host reference stops at 2^31");
}

TEST(Interpreter, CatchesAWronglyTiledGraph) {
    TiledGemm gemm;
    // Break the lowering: A's K tile claims 4 columns while B's has 8.
    for (Id d : gemm.graph.coordinates.nodes()) {
        auto& dim = gemm.graph.coordinates.node(d);
        if (dim.kind == DimensionKind::MacroTileIndex && literalInt(dim.size) == 8) {
            dim.size = literal(4);
            break;
        }
    }
    EXPECT_GT(interpreterError(gemm.command, gemm.graph, {{"M", 37}, {"N", 29}, {"K", 19}}), 1e-2);
}
