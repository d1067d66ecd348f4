// The verifier: translated graphs are valid, and each invariant, broken on purpose, is reported
// with its exact message. Ids below are those of the translated GEMM (tests/golden/gemm.txt):
// #2 User A, #3/#4 its SubDimensions, #5 MacroTile a, #7 Flatten, #9 LoadTiled A, #14 MacroTile
// b, #23 MacroTile c, #29 MacroTile mm, #31 Multiply, #33 MacroTile e, #35 Assign, #37 User D,
// #43 StoreTiled D; the next id is #45.
#include "kiln/graph/Verify.h"

#include "ExampleCommands.h"
#include "kiln/graph/Translate.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

KernelGraph gemm() {
    KernelGraph g = translate(gemmCommand());
    EXPECT_EQ(g.nextId(), 45);
    return g;
}

// The problems of `g`, each as describe() prints it.
std::vector<std::string> problems(KernelGraph const& g) {
    std::vector<std::string> out;
    for (auto const& p : verify(g))
        out.push_back(describe(g, p));
    return out;
}

using Lines = std::vector<std::string>;

// A Kernel whose body is a loop over k in [0, 4): Initialize k = 0, ForLoopIncrement k = k + 1,
// and a Nop as the loop's body.
struct LoopGraph {
    KernelGraph g;
    Id counter, kernel, loop, init, increment, body;

    LoopGraph() {
        counter = g.addDimension({.kind = DimensionKind::ForLoop, .size = literal(4), .name = "k"});
        kernel = g.addOperation({.kind = OperationKind::Kernel, .name = "loop"});
        loop = g.addOperation({.kind = OperationKind::ForLoop,
                               .expression = binary(BinaryOp::Less, index(counter), literal(4)),
                               .name = "k"});
        init = g.addOperation({.kind = OperationKind::Assign, .expression = literal(0)});
        increment = g.addOperation(
            {.kind = OperationKind::Assign, .expression = index(counter) + literal(1)});
        body = g.addOperation({.kind = OperationKind::Nop});
        g.mapping.connect(loop, role::counter, counter);
        g.mapping.connect(init, role::dest, counter);
        g.mapping.connect(increment, role::dest, counter);
        g.addControlEdge(ControlEdgeKind::Body, kernel, loop);
        g.addControlEdge(ControlEdgeKind::Initialize, loop, init);
        g.addControlEdge(ControlEdgeKind::ForLoopIncrement, loop, increment);
        g.addControlEdge(ControlEdgeKind::Body, loop, body);
    }
};

TEST(Verify, TranslatedExamplesAreValid) {
    for (Command const& c : {axpyCommand(), reluChainCommand(), gemmCommand(), rowSumCommand()}) {
        KernelGraph const g = translate(c);
        EXPECT_EQ(problems(g), Lines{}) << c.name();
        EXPECT_NO_THROW(verifyOrFail(g));
        EXPECT_NO_THROW(check(g, "translate"));
    }
}

TEST(Verify, LoopWithInitializeAndIncrementIsValid) {
    LoopGraph const l;
    EXPECT_EQ(problems(l.g), Lines{});
}

TEST(Verify, EmptyGraphIsValid) {
    EXPECT_EQ(problems(KernelGraph{}), Lines{});
}

// Coordinates.

TEST(Verify, TransformArity) {
    KernelGraph g = gemm();
    g.addCoordinateEdge(CoordinateEdgeKind::Tile, {3, 4}, {23});
    g.addCoordinateEdge(CoordinateEdgeKind::Sunder, {14}, {23});
    g.addCoordinateEdge(CoordinateEdgeKind::PassThrough, {14}, {23, 29});
    EXPECT_EQ(problems(g), (Lines{"#45 Tile: has 2 tails; Tile takes exactly 1",
                                  "#46 Sunder: has 1 head; Sunder takes at least 2",
                                  "#47 PassThrough: has 2 heads; PassThrough takes exactly 1"}));
}

TEST(Verify, TransformCycle) {
    KernelGraph g = gemm();
    g.addCoordinateEdge(CoordinateEdgeKind::PassThrough, {5}, {3}); // Flatten #7 takes #3 to #5
    EXPECT_EQ(problems(g),
              Lines{"#7 Flatten: coordinate transforms form a cycle through dimensions "
                    "#3, #5 (edges #7, #45)"});
}

TEST(Verify, TransformFromADimensionToItselfIsACycle) {
    KernelGraph g = gemm();
    g.addCoordinateEdge(CoordinateEdgeKind::PassThrough, {29}, {29});
    EXPECT_EQ(problems(g), Lines{"#45 PassThrough: coordinate transforms form a cycle through "
                                 "dimensions #29 (edges #45)"});
}

TEST(Verify, DataFlowMayGoBackAndForth) {
    KernelGraph g = gemm();
    g.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {5}, {2}); // #8 is DataFlow #2 -> #5
    EXPECT_EQ(problems(g), Lines{});
}

TEST(Verify, DataFlowJoinsDataDimensions) {
    KernelGraph g = gemm();
    g.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {3, 5}, {4});
    EXPECT_EQ(problems(g), (Lines{"#45 DataFlow: tail #3 SubDimension holds no data",
                                  "#45 DataFlow: head #4 SubDimension holds no data"}));
}

TEST(Verify, SubDimensionNeedsSizeStrideAndAxis) {
    KernelGraph g = gemm();
    g.coordinates.node(3).size = nullptr;
    g.coordinates.node(3).stride = nullptr;
    g.coordinates.node(3).axis = -1;
    EXPECT_EQ(problems(g),
              (Lines{"#3 SubDimension: needs a size", "#3 SubDimension: needs a stride",
                     "#3 SubDimension: needs an axis (0 or more)"}));
}

TEST(Verify, TilesNeedSizeAndElementType) {
    KernelGraph g = gemm();
    g.coordinates.node(5).size = nullptr;
    g.coordinates.node(5).dtype = std::nullopt;
    // A Linear reading the same values keeps its size; Register only needs a type.
    g.addDimension({.kind = DimensionKind::Linear, .dtype = DataType::F32});
    g.addDimension({.kind = DimensionKind::Register});
    EXPECT_EQ(problems(g),
              (Lines{"#5 MacroTile: needs a size", "#5 MacroTile: needs an element type",
                     "#45 Linear: needs a size", "#46 Register: needs an element type"}));
}

TEST(Verify, UserDimensionNamesATensorArgumentOfItsType) {
    KernelGraph g = gemm();
    g.coordinates.node(2).name = "Q";
    g.coordinates.node(11).name = "alpha";
    g.coordinates.node(20).dtype = DataType::F16;
    EXPECT_EQ(problems(g),
              (Lines{"#2 User: names tensor 'Q', which is not an argument of the graph",
                     "#11 User: names 'alpha', which is a scalar argument, not a tensor",
                     "#20 User: holds f16 but tensor 'C' is f32"}));
}

TEST(Verify, TileShapeMultipliesToItsSize) {
    KernelGraph g = gemm();
    g.coordinates.node(5).shape = {literal(4), literal(8)};
    g.coordinates.node(5).size = literal(30);
    EXPECT_EQ(problems(g), Lines{"#5 MacroTile: shape has 32 elements but size is 30"});
    g.coordinates.node(5).size = literal(4) * literal(8);
    EXPECT_EQ(problems(g), Lines{});
}

// Control.

TEST(Verify, GraphNeedsAKernel) {
    KernelGraph g = gemm();
    g.removeOperation(1);
    EXPECT_EQ(problems(g), Lines{"graph: has no Kernel operation"});
}

TEST(Verify, OnlyOneKernel) {
    KernelGraph g = gemm();
    g.addOperation({.kind = OperationKind::Kernel});
    EXPECT_EQ(problems(g), Lines{"#45 Kernel: is a second Kernel (the first is #1)"});
}

TEST(Verify, KernelIsTheRootAndControlHasNoCycle) {
    KernelGraph g = gemm();
    g.addControlEdge(ControlEdgeKind::Sequence, 43, 1);
    EXPECT_EQ(problems(g),
              (Lines{"#1 Kernel: has an incoming Sequence edge #45; the Kernel is the root",
                     "#10 Body: control edges form a cycle through operations #1, #9, #18, #27, "
                     "#31, #35, #43 (edges #10, #19, #28, #32, #36, #44, #45)"}));
}

TEST(Verify, ControlCycleBelowTheKernel) {
    KernelGraph g = gemm();
    g.addControlEdge(ControlEdgeKind::Sequence, 43, 35);
    EXPECT_EQ(problems(g), Lines{"#44 Sequence: control edges form a cycle through operations #35, "
                                 "#43 (edges #44, #45)"});
}

TEST(Verify, EveryOperationIsReachedFromTheKernel) {
    KernelGraph g = gemm();
    Id const nop = g.addOperation({.kind = OperationKind::Nop});
    Id const barrier = g.addOperation({.kind = OperationKind::Barrier});
    g.addControlEdge(ControlEdgeKind::Sequence, nop, barrier); // reached from nop, not the Kernel
    EXPECT_EQ(problems(g),
              (Lines{"#45 Nop: is not reached from the Kernel #1 by control edges",
                     "#46 Barrier: is not reached from the Kernel #1 by control edges"}));
}

TEST(Verify, ControlEdgeJoinsOneOperationToOne) {
    KernelGraph g = gemm();
    Id const id = g.nextId();
    g.reserveId(id);
    g.control.addEdge(id, ControlEdge{ControlEdgeKind::Sequence}, {9, 18}, {27});
    EXPECT_EQ(problems(g), Lines{"#45 Sequence: has 2 tails and 1 head; a control edge joins one "
                                 "operation to one"});
}

TEST(Verify, BodyOnlyFromKernelForLoopOrIf) {
    KernelGraph g = gemm();
    Id const nop = g.addOperation({.kind = OperationKind::Nop});
    g.addControlEdge(ControlEdgeKind::Body, 9, nop);
    EXPECT_EQ(problems(g), Lines{"#46 Body: starts at #9 LoadTiled; only Kernel, ForLoop and If "
                                 "have a Body"});
}

TEST(Verify, ElseOnlyFromIf) {
    LoopGraph l;
    Id const other = l.g.addOperation({.kind = OperationKind::Nop});
    l.g.addControlEdge(ControlEdgeKind::Else, l.loop, other);
    Id const branch = l.g.addOperation({.kind = OperationKind::If, .expression = literal(1)});
    l.g.addControlEdge(ControlEdgeKind::Sequence, l.loop, branch);
    Id const otherwise = l.g.addOperation({.kind = OperationKind::Nop});
    l.g.addControlEdge(ControlEdgeKind::Else, branch, otherwise);
    EXPECT_EQ(problems(l.g), Lines{"#12 Else: starts at #3 ForLoop; only If has an Else"});
}

TEST(Verify, InitializeAndIncrementGoFromForLoopToAssign) {
    LoopGraph l;
    Id const branch = l.g.addOperation({.kind = OperationKind::If, .expression = literal(1)});
    l.g.addControlEdge(ControlEdgeKind::Sequence, l.loop, branch);
    l.g.addControlEdge(ControlEdgeKind::Initialize, branch, l.init);
    l.g.addControlEdge(ControlEdgeKind::ForLoopIncrement, l.loop, l.body);
    EXPECT_EQ(problems(l.g),
              (Lines{"#13 Initialize: starts at #11 If; only ForLoop has Initialize edges",
                     "#14 ForLoopIncrement: ends at #6 Nop; ForLoopIncrement edges end at an "
                     "Assign"}));
}

TEST(Verify, ConditionsAndValuesArePresent) {
    LoopGraph l;
    l.g.control.node(l.loop).expression = nullptr;
    l.g.control.node(l.init).expression = nullptr;
    Id const branch = l.g.addOperation({.kind = OperationKind::If});
    l.g.addControlEdge(ControlEdgeKind::Sequence, l.loop, branch);
    EXPECT_EQ(problems(l.g),
              (Lines{"#3 ForLoop: needs a condition", "#4 Assign: needs an expression",
                     "#11 If: needs a condition"}));
}

// Mapping.

TEST(Verify, MissingRoles) {
    KernelGraph g = gemm();
    g.mapping.disconnect(9, role::dest);
    g.mapping.forget(31);
    g.mapping.disconnect(35, role::dest);
    EXPECT_EQ(problems(g),
              (Lines{"#9 LoadTiled: needs a 'dest' connection to a data dimension other than User",
                     "#31 Multiply: needs a 'lhs' connection to a data dimension other than User",
                     "#31 Multiply: needs a 'rhs' connection to a data dimension other than User",
                     "#31 Multiply: needs a 'dest' connection to a data dimension other than User",
                     "#35 Assign: needs a 'dest' connection to a data dimension other than User, "
                     "or a ForLoop or Unroll dimension"}));
}

TEST(Verify, RolesNameDimensionsOfTheRightKind) {
    KernelGraph g = gemm();
    g.mapping.connect(9, role::source, 5); // a tile, not the User tensor
    g.mapping.connect(43, role::dest, 33); // a store into a tile
    g.mapping.connect(31, role::lhs, 3);   // a SubDimension holds no values
    LoopGraph l;
    l.g.mapping.connect(l.loop, role::counter,
                        l.g.addDimension({.kind = DimensionKind::Workgroup}));
    EXPECT_EQ(
        problems(g),
        (Lines{"#9 LoadTiled: 'source' is #5 MacroTile; LoadTiled needs a User dimension there",
               "#31 Multiply: 'lhs' is #3 SubDimension; Multiply needs a data dimension other "
               "than User there",
               "#43 StoreTiled: 'dest' is #33 MacroTile; StoreTiled needs a User dimension "
               "there"}));
    EXPECT_EQ(problems(l.g),
              Lines{"#3 ForLoop: 'counter' is #11 Workgroup; ForLoop needs a ForLoop or "
                    "Unroll dimension there"});
}

// A loop counted by an Unroll dimension is an unrolled loop: valid, with its counter assigned
// like any other.
TEST(Verify, UnrollDimensionCountsALoop) {
    LoopGraph l;
    Id const copy = l.g.addDimension({.kind = DimensionKind::Unroll, .size = literal(4)});
    l.g.mapping.connect(l.loop, role::counter, copy);
    l.g.mapping.connect(l.init, role::dest, copy);
    EXPECT_EQ(problems(l.g), Lines{});
}

TEST(Verify, SharedMemoryRoles) {
    KernelGraph g = gemm();
    Id const shared = g.addDimension({.kind = DimensionKind::Shared, .dtype = DataType::F16});
    Id const store = g.addOperation({.kind = OperationKind::StoreShared});
    Id const load = g.addOperation({.kind = OperationKind::LoadShared});
    g.addControlEdge(ControlEdgeKind::Sequence, 43, store);
    g.addControlEdge(ControlEdgeKind::Sequence, store, load);
    g.mapping.connect(store, role::source, 5);
    g.mapping.connect(store, role::dest, shared);
    g.mapping.connect(load, role::source, 5);
    g.mapping.connect(load, role::dest, shared);
    EXPECT_EQ(problems(g), Lines{"#47 LoadShared: 'source' is #5 MacroTile; LoadShared needs a "
                                 "Shared dimension there"});
}

TEST(Verify, NoUnexpectedOrDanglingConnections) {
    KernelGraph g = gemm();
    g.mapping.connect(31, "bias", 23);
    g.mapping.connect(31, role::rhs, 999);
    g.mapping.connect(1, role::dest, 5);
    g.mapping.connect(998, role::dest, 5);
    EXPECT_EQ(problems(g),
              (Lines{"#1 Kernel: has a 'dest' connection, which Kernel does not use",
                     "#31 Multiply: 'rhs' names #999, which is not a dimension",
                     "#31 Multiply: has a 'bias' connection, which Multiply does not use",
                     "#998: the Mapping connects #998, which is not an operation"}));
}

// Expressions.

TEST(Verify, OperationExpressionLeaves) {
    KernelGraph g = gemm();
    auto const f32 = DataType::F32;
    g.control.node(35).expression = dataValue(999, f32) + dataValue(3, f32) + dataValue(5, f32) +
                                    argument("gamma", f32) + argument("alpha", DataType::F64) +
                                    argument("A", DataType::F16) + tag("t", f32) + index(998) +
                                    dimensionSize(997) + dimensionStride(996);
    EXPECT_EQ(problems(g),
              (Lines{"#35 Assign: expression reads value#999, which names no dimension",
                     "#35 Assign: expression reads value#3, but #3 SubDimension holds no data",
                     "#35 Assign: expression reads value#5 as f32, but #5 holds f16",
                     "#35 Assign: expression reads argument 'gamma', which the graph does not "
                     "declare",
                     "#35 Assign: expression reads argument 'alpha' as f64, but it is declared f32",
                     "#35 Assign: expression reads 'A', which is a tensor, not a value",
                     "#35 Assign: expression reads 't', a Command tag bound to no dimension",
                     "#35 Assign: expression reads index#998, which names no dimension",
                     "#35 Assign: expression reads size#997, which names no dimension",
                     "#35 Assign: expression reads stride#996, which names no dimension"}));
}

TEST(Verify, LeavesInsideSelectConvertAndUnary) {
    LoopGraph l;
    l.g.control.node(l.loop).expression = select(unary(UnaryOp::LogicalNot, index(50)),
                                                 convert(DataType::I32, index(51)), literal(0));
    EXPECT_EQ(problems(l.g),
              (Lines{"#3 ForLoop: condition reads index#50, which names no dimension",
                     "#3 ForLoop: condition reads index#51, which names no dimension"}));
}

TEST(Verify, DimensionExpressionLeaves) {
    KernelGraph g = gemm();
    g.coordinates.node(3).size = argument("M", DataType::I64) * index(999);
    g.coordinates.node(3).stride = dimensionStride(998);
    g.coordinates.node(5).shape[1] = argument("L", DataType::I64);
    EXPECT_EQ(
        problems(g),
        (Lines{"#3 SubDimension: size reads index#999, which names no dimension",
               "#3 SubDimension: stride reads stride#998, which names no dimension",
               "#5 MacroTile: shape[1] reads argument 'L', which the graph does not declare"}));
}

TEST(Verify, RepeatedLeafIsReportedOnce) {
    KernelGraph g = gemm();
    g.control.node(35).expression = index(999) * index(999);
    EXPECT_EQ(problems(g),
              Lines{"#35 Assign: expression reads index#999, which names no dimension"});
}

// Reporting.

TEST(Verify, ProblemsAreOrderedByElement) {
    KernelGraph g = gemm();
    g.mapping.disconnect(43, role::source);
    g.coordinates.node(4).stride = nullptr;
    g.removeOperation(1);
    auto const found = verify(g);
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0], (Problem{0, "has no Kernel operation"}));
    EXPECT_EQ(found[1], (Problem{4, "needs a stride"}));
    EXPECT_EQ(found[2],
              (Problem{43, "needs a 'source' connection to a data dimension other than User"}));
}

TEST(Verify, LoadersGetAUserError) {
    KernelGraph g = gemm();
    g.coordinates.node(4).stride = nullptr;
    g.mapping.disconnect(43, role::source);
    try {
        verifyOrFail(g, SourceLocation{.file = "g.json"});
        FAIL() << "no error";
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(),
                  "graph is not valid: #4 SubDimension: needs a stride; #43 StoreTiled: "
                  "needs a 'source' connection to a data dimension other than User");
        EXPECT_EQ(e.location().file, "g.json");
    }
}

TEST(Verify, RewritesGetAnInternalError) {
    KernelGraph g = gemm();
    g.coordinates.node(4).stride = nullptr;
    try {
        check(g, "rule tile-workgroups");
        FAIL() << "no error";
    } catch (InternalError const& e) {
        EXPECT_EQ(std::string(e.what()).rfind("internal error: graph is not valid after rule "
                                              "tile-workgroups: #4 SubDimension: needs a stride (",
                                              0),
                  0u)
            << e.what();
    }
}

TEST(Verify, DescribeNamesElementsOfEveryPart) {
    KernelGraph const g = gemm();
    EXPECT_EQ(describe(g, Problem{3, "m"}), "#3 SubDimension: m");
    EXPECT_EQ(describe(g, Problem{6, "m"}), "#6 Split: m");
    EXPECT_EQ(describe(g, Problem{31, "m"}), "#31 Multiply: m");
    EXPECT_EQ(describe(g, Problem{10, "m"}), "#10 Body: m");
    EXPECT_EQ(describe(g, Problem{0, "m"}), "graph: m");
    EXPECT_EQ(describe(g, Problem{500, "m"}), "#500: m");
}

} // namespace
} // namespace kiln::test
