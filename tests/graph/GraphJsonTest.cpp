// GraphJson: KernelGraphs saved as JSON and read back with the same ids and expressions.
#include "kiln/graph/GraphJson.h"

#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <set>

namespace kiln {
namespace {

ExprPtr expr(KernelGraph const& g, std::string_view text) {
    struct Names : NameResolver {
        KernelGraph const& graph;
        explicit Names(KernelGraph const& g)
            : graph(g) {}
        ExprPtr name(std::string_view n) const override {
            auto const* a = graph.findArgument(n);
            return a ? argument(a->name, a->dtype) : nullptr;
        }
        std::optional<DataType> dataType(Id d) const override {
            return graph.coordinates.node(d).dtype;
        }
    };
    return parseExpression(text, Names(g));
}

/// A graph that uses every dimension, coordinate edge, operation and control edge kind, with
/// gaps in its ids (a removed dimension and operation).
KernelGraph everyKindGraph() {
    KernelGraph g;
    g.name = "every_kind";
    g.arguments = {{"A", KernelArgument::Kind::Tensor, DataType::F32},
                   {"alpha", KernelArgument::Kind::Scalar, DataType::F32},
                   {"M", KernelArgument::Kind::Size, DataType::I64},
                   {"N", KernelArgument::Kind::Size, DataType::I64}};
    using DK = DimensionKind;
    Id const u = g.addDimension(
        {.kind = DK::User, .size = expr(g, "M * N"), .name = "A", .dtype = DataType::F32});
    Id const s0 = g.addDimension(
        {.kind = DK::SubDimension, .size = expr(g, "M"), .stride = expr(g, "N"), .axis = 0});
    Id const s1 = g.addDimension(
        {.kind = DK::SubDimension, .size = expr(g, "N"), .stride = literal(1), .axis = 1});
    Id const gone = g.addDimension({.kind = DK::Register});
    Id const lin = g.addDimension(
        {.kind = DK::Linear, .size = expr(g, "M * N"), .name = "A", .dtype = DataType::F32});
    Id const mt = g.addDimension({.kind = DK::MacroTile,
                                  .size = literal(2048),
                                  .dtype = DataType::F32,
                                  .shape = {literal(64), literal(32)}});
    Id const mtn =
        g.addDimension({.kind = DK::MacroTileNumber, .size = expr(g, "ceildiv(M, 64)"), .axis = 0});
    Id const mti = g.addDimension({.kind = DK::MacroTileIndex, .size = literal(64), .axis = 0});
    Id const wt = g.addDimension({.kind = DK::WaveTile,
                                  .size = literal(256),
                                  .dtype = DataType::F16,
                                  .shape = {literal(16), literal(16)}});
    Id const tt = g.addDimension(
        {.kind = DK::ThreadTile, .dtype = DataType::F32, .shape = {literal(4), literal(4)}});
    Id const wg = g.addDimension({.kind = DK::Workgroup, .axis = 0});
    g.coordinates.node(wg).size = expr(g, "ceildiv(size#" + std::to_string(s0) + ", 64)");
    Id const wi = g.addDimension({.kind = DK::Workitem, .size = literal(256), .axis = 0});
    Id const loop = g.addDimension({.kind = DK::ForLoop, .size = expr(g, "N"), .name = "K"});
    Id const unroll = g.addDimension({.kind = DK::Unroll, .size = literal(4), .name = "K"});
    Id const reg =
        g.addDimension({.kind = DK::Register, .size = literal(4), .dtype = DataType::I32});
    Id const sh = g.addDimension({.kind = DK::Shared,
                                  .size = literal(2048),
                                  .dtype = DataType::BF16,
                                  .shape = {literal(64), literal(32)}});
    g.removeDimension(gone);

    using CE = CoordinateEdgeKind;
    g.addCoordinateEdge(CE::Split, {u}, {s0, s1});
    g.addCoordinateEdge(CE::Join, {s0, s1}, {u});
    g.addCoordinateEdge(CE::Flatten, {s0, s1}, {lin});
    g.addCoordinateEdge(CE::Tile, {s0}, {mtn, mti});
    g.addCoordinateEdge(CE::PassThrough, {mtn}, {wg});
    g.addCoordinateEdge(CE::Forget, {loop, unroll}, {reg});
    g.addCoordinateEdge(CE::Inherit, {wi}, {tt, wt});
    g.addCoordinateEdge(CE::Sunder, {lin}, {mt, sh, unroll});
    g.addCoordinateEdge(CE::DataFlow, {u}, {mt});

    using OK = OperationKind;
    Id const kernel = g.addOperation({.kind = OK::Kernel});
    Id const forLoop =
        g.addOperation({.kind = OK::ForLoop,
                        .expression = expr(g, "index#" + std::to_string(loop) + " < N"),
                        .name = "K"});
    Id const init =
        g.addOperation({.kind = OK::Assign, .expression = literal(0), .dtype = DataType::I64});
    Id const step = g.addOperation({.kind = OK::Assign,
                                    .expression = expr(g, "index#" + std::to_string(loop) + " + 1"),
                                    .dtype = DataType::I64});
    Id const branch = g.addOperation(
        {.kind = OK::If,
         .expression = expr(g, "index#" + std::to_string(wi) + " < 200 && !(M == 3)")});
    Id const removed = g.addOperation({.kind = OK::Nop});
    Id const loadLinear = g.addOperation({.kind = OK::LoadLinear, .dtype = DataType::F32});
    Id const storeLinear = g.addOperation({.kind = OK::StoreLinear});
    Id const loadTiled = g.addOperation({.kind = OK::LoadTiled, .dtype = DataType::F32});
    Id const storeTiled = g.addOperation({.kind = OK::StoreTiled});
    Id const loadShared = g.addOperation({.kind = OK::LoadShared, .dtype = DataType::BF16});
    Id const storeShared = g.addOperation({.kind = OK::StoreShared});
    Id const assign = g.addOperation(
        {.kind = OK::Assign,
         .expression = expr(g, "select(value#" + std::to_string(mt) + " > 0.0, alpha * value#" +
                                   std::to_string(mt) + ", f32(value#" + std::to_string(wt) +
                                   ")) + stride#" + std::to_string(s0)),
         .dtype = DataType::F32});
    Id const multiply =
        g.addOperation({.kind = OK::Multiply, .dtype = DataType::F32, .transposeA = true});
    Id const reduce =
        g.addOperation({.kind = OK::Reduce, .dtype = DataType::F32, .combine = Combine::Max});
    Id const barrier = g.addOperation({.kind = OK::Barrier});
    Id const nop = g.addOperation({.kind = OK::Nop, .name = "keeps a place"});
    g.removeOperation(removed);

    using CK = ControlEdgeKind;
    g.addControlEdge(CK::Body, kernel, forLoop);
    g.addControlEdge(CK::Initialize, forLoop, init);
    g.addControlEdge(CK::ForLoopIncrement, forLoop, step);
    g.addControlEdge(CK::Body, forLoop, branch);
    g.addControlEdge(CK::Body, branch, loadTiled);
    g.addControlEdge(CK::Else, branch, nop);
    for (auto [from, to] : {std::pair{loadTiled, storeShared},
                            {storeShared, barrier},
                            {barrier, loadShared},
                            {loadShared, multiply},
                            {multiply, assign},
                            {assign, reduce},
                            {reduce, storeTiled},
                            {storeTiled, loadLinear},
                            {loadLinear, storeLinear}})
        g.addControlEdge(CK::Sequence, from, to);

    g.mapping.connect(loadTiled, "user", u);
    g.mapping.connect(loadTiled, "dest", mt);
    g.mapping.connect(multiply, "lhs", mt);
    g.mapping.connect(multiply, "rhs", wt);
    g.mapping.connect(multiply, "dest", tt);
    g.mapping.connect(assign, "dest", reg);
    g.mapping.connect(forLoop, "counter", loop);
    g.mapping.connect(storeShared, "dest", sh);
    return g;
}

TEST(GraphJson, EveryKindRoundTripsWithItsIds) {
    KernelGraph const g = everyKindGraph();
    std::string const saved = saveGraph(g);
    KernelGraph const loaded = parseGraph(saved, "every.json");

    EXPECT_EQ(saveGraph(loaded), saved);
    EXPECT_EQ(toText(loaded), toText(g));
    EXPECT_EQ(loaded.nextId(), g.nextId());
    EXPECT_EQ(loaded.coordinates.nodes(), g.coordinates.nodes());
    EXPECT_EQ(loaded.coordinates.edges(), g.coordinates.edges());
    EXPECT_EQ(loaded.control.nodes(), g.control.nodes());
    EXPECT_EQ(loaded.control.edges(), g.control.edges());
    EXPECT_EQ(loaded.mapping.all(), g.mapping.all());
    EXPECT_FALSE(loaded.coordinates.contains(4)); // the removed Register

    // Every kind of every enum appears, so that a new kind cannot go untested.
    std::set<DimensionKind> dims;
    std::set<CoordinateEdgeKind> edges;
    std::set<OperationKind> ops;
    std::set<ControlEdgeKind> controls;
    for (Id id : loaded.coordinates.nodes())
        dims.insert(loaded.coordinates.node(id).kind);
    for (Id id : loaded.coordinates.edges())
        edges.insert(loaded.coordinates.edge(id).kind);
    for (Id id : loaded.control.nodes())
        ops.insert(loaded.control.node(id).kind);
    for (Id id : loaded.control.edges())
        controls.insert(loaded.control.edge(id).kind);
    EXPECT_EQ(dims.size(), allDimensionKinds().size());
    EXPECT_EQ(edges.size(), allCoordinateEdgeKinds().size());
    EXPECT_EQ(ops.size(), allOperationKinds().size());
    EXPECT_EQ(controls.size(), allControlEdgeKinds().size());

    // Expressions come back as the same trees, leaves typed from the arguments and dimensions.
    for (Id id : g.coordinates.nodes()) {
        auto const &a = g.coordinates.node(id), &b = loaded.coordinates.node(id);
        EXPECT_TRUE(equal(a.size, b.size) || (!a.size && !b.size)) << id;
        EXPECT_TRUE(equal(a.stride, b.stride) || (!a.stride && !b.stride)) << id;
        EXPECT_EQ(a.shape.size(), b.shape.size()) << id;
        EXPECT_EQ(a.axis, b.axis);
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.dtype, b.dtype);
    }
    for (Id id : g.control.nodes()) {
        auto const &a = g.control.node(id), &b = loaded.control.node(id);
        EXPECT_TRUE(equal(a.expression, b.expression) || (!a.expression && !b.expression)) << id;
        EXPECT_EQ(resultType(a.expression ? *a.expression : Expression(expr::Literal{})),
                  resultType(b.expression ? *b.expression : Expression(expr::Literal{})));
        EXPECT_EQ(a.dtype, b.dtype);
        EXPECT_EQ(a.transposeA, b.transposeA);
        EXPECT_EQ(a.combine, b.combine);
        EXPECT_EQ(a.name, b.name);
    }
    // New elements continue after the saved nextId, never reusing a removed id.
    KernelGraph more = loaded;
    EXPECT_EQ(more.addDimension({.kind = DimensionKind::Register}), g.nextId());
}

TEST(GraphJson, SavesOneElementPerLine) {
    KernelGraph g;
    g.name = "copy";
    g.arguments = {{"N", KernelArgument::Kind::Size, DataType::I64}};
    Id const a = g.addDimension(
        {.kind = DimensionKind::Linear, .size = expr(g, "N"), .name = "x", .dtype = DataType::F32});
    Id const b = g.addDimension(
        {.kind = DimensionKind::Linear, .size = expr(g, "N"), .name = "y", .dtype = DataType::F32});
    g.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {a}, {b});
    Id const k = g.addOperation({.kind = OperationKind::Kernel});
    Id const s = g.addOperation({.kind = OperationKind::Assign,
                                 .expression = expr(g, "value#1 * 2.0"),
                                 .dtype = DataType::F32});
    g.addControlEdge(ControlEdgeKind::Body, k, s);
    g.mapping.connect(s, "dest", b);
    EXPECT_EQ(saveGraph(g), R"({
  "format": "kiln.kernelgraph",
  "version": 1,
  "name": "copy",
  "nextId": 7,
  "arguments": [
    {"name": "N", "kind": "size", "dtype": "i64"}
  ],
  "coordinates": {
    "nodes": [
      {"id": 1, "kind": "Linear", "name": "x", "dtype": "f32", "size": "N"},
      {"id": 2, "kind": "Linear", "name": "y", "dtype": "f32", "size": "N"}
    ],
    "edges": [
      {"id": 3, "kind": "DataFlow", "tails": [1], "heads": [2]}
    ]
  },
  "control": {
    "operations": [
      {"id": 4, "kind": "Kernel"},
      {"id": 5, "kind": "Assign", "dtype": "f32", "expression": "value#1 * 2.0"}
    ],
    "edges": [
      {"id": 6, "kind": "Body", "from": 4, "to": 5}
    ]
  },
  "mapping": [
    {"op": 5, "role": "dest", "dimension": 2}
  ]
}
)");
}

TEST(GraphJson, TranslatedExamplesRoundTripAndVerify) {
    int count = 0;
    for (auto const& entry : std::filesystem::directory_iterator(KILN_SOURCE_DIR "/examples")) {
        if (entry.path().extension() != ".json" ||
            entry.path().filename().string().ends_with(".space.json")) // search spaces
            continue;
        SCOPED_TRACE(entry.path().string());
        KernelGraph const g = translate(loadCommand(entry.path().string()));
        std::string const saved = saveGraph(g);
        KernelGraph const loaded = parseGraph(saved, "translated.json");
        EXPECT_EQ(saveGraph(loaded), saved);
        EXPECT_EQ(toText(loaded), toText(g));
        EXPECT_EQ(describe(loaded, verify(loaded)), describe(g, verify(g)));
        ++count;
    }
    EXPECT_GE(count, 4);
}

std::string errorOf(std::string_view text) {
    try {
        parseGraph(text, "g.json");
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

/// A minimal graph file with `nodes`, `edges`, `ops` and `mapping` spliced in.
std::string graphText(std::string_view nodes, std::string_view edges = "",
                      std::string_view ops = "", std::string_view mapping = "") {
    return fmt::format(R"({{"format": "kiln.kernelgraph", "version": 1, "name": "g",
"arguments": [{{"name": "N", "kind": "size", "dtype": "i64"}}],
"coordinates": {{"nodes": [{}],
"edges": [{}]}},
"control": {{"operations": [{}], "edges": []}},
"mapping": [{}]}})",
                       nodes, edges, ops, mapping);
}

TEST(GraphJson, ReportsBadFilesAtTheOffendingValue) {
    EXPECT_EQ(errorOf(R"({"format": "kiln.kernelgraph", "version": 2})"),
              "g.json:1:43: error: unsupported kiln.kernelgraph version 2; this Kiln reads version "
              "1 [at /version]");
    EXPECT_EQ(
        errorOf(R"({"format": "kiln.command", "version": 1})"),
        "g.json:1:12: error: expected format 'kiln.kernelgraph', got 'kiln.command' [at /format]");
    std::string_view const node = R"({"id": 1, "kind": "Linear", "dtype": "f32", "size": "N"})";
    EXPECT_EQ(
        errorOf(graphText(node, R"({"id": 2, "kind": "PassThrough", "tails": [1], "heads": [9]})")),
        "g.json:4:68: error: head 9 is not a dimension of this graph [at "
        "/coordinates/edges/0/heads/0]");
    EXPECT_EQ(
        errorOf(graphText(node, R"({"id": 2, "kind": "Tile", "tails": [1, 1], "heads": [1]})")),
        "g.json:4:46: error: Tile takes 1 tail, got 2 [at /coordinates/edges/0/tails]");
    EXPECT_EQ(errorOf(graphText(node, R"({"id": 1, "kind": "Tile", "tails": [1], "heads": [1]})")),
              "g.json:4:18: error: id 1 is used twice; first at line 3, column 34 [at "
              "/coordinates/edges/0/id]");
    EXPECT_EQ(errorOf(graphText(node, R"({"id": 2, "kind": "Tiles", "tails": [1], "heads": [1]})")),
              "g.json:4:29: error: unknown coordinate edge kind 'Tiles' (did you mean 'Tile'?); "
              "expected one of "
              "Split, Join, Flatten, Tile, PassThrough, Forget, Inherit, Sunder, DataFlow [at "
              "/coordinates/edges/0/kind]");
    EXPECT_EQ(errorOf(graphText(R"({"id": 1, "kind": "Linear", "size": "size#7 * N"})")),
              "g.json:3:64: error: size#7 names no dimension of this graph [at "
              "/coordinates/nodes/0/size]");
    EXPECT_EQ(
        errorOf(graphText(node, "", R"({"id": 2, "kind": "Assign", "expression": "value#1 + M"})")),
        "g.json:5:81: error: unknown name 'M' [at /control/operations/0/expression]");
    EXPECT_EQ(errorOf(graphText(R"({"id": 1, "kind": "ForLoop", "size": "N"})", "",
                                R"({"id": 2, "kind": "Assign", "expression": "value#1"})")),
              "g.json:5:71: error: value#1 names no data dimension [at "
              "/control/operations/0/expression]");
    EXPECT_EQ(errorOf(graphText(node, "", R"({"id": 2, "kind": "Kernel"})",
                                R"({"op": 1, "role": "dest", "dimension": 1})")),
              "g.json:6:20: error: op 1 is not an operation of this graph [at /mapping/0/op]");
}

} // namespace
} // namespace kiln
