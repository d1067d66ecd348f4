// translate(): the elements, edges and Mapping roles each kind of Command operation becomes
// (the table in Translate.h), on the example Commands.
#include "kiln/graph/Translate.h"

#include "ExampleCommands.h"
#include "kiln/graph/ExpressionText.h"

#include <gtest/gtest.h>
#include <map>

namespace kiln::test {
namespace {

using Ids = std::vector<Id>;

template <class Kind>
std::map<std::string, int> histogram(std::vector<Kind> const& kinds) {
    std::map<std::string, int> out;
    for (Kind k : kinds)
        ++out[std::string(name(k))];
    return out;
}

std::map<std::string, int> dimensionKinds(KernelGraph const& g) {
    std::vector<DimensionKind> kinds;
    for (Id d : g.coordinates.nodes())
        kinds.push_back(g.coordinates.node(d).kind);
    return histogram(kinds);
}
std::map<std::string, int> edgeKinds(KernelGraph const& g) {
    std::vector<CoordinateEdgeKind> kinds;
    for (Id e : g.coordinates.edges())
        kinds.push_back(g.coordinates.edge(e).kind);
    return histogram(kinds);
}
std::vector<OperationKind> operationOrder(KernelGraph const& g) {
    std::vector<OperationKind> out;
    for (Id op : g.sequence(g.kernel(), ControlEdgeKind::Body))
        out.push_back(g.control.node(op).kind);
    return out;
}
// The dimension `op` uses in `role`, described as "Kind name".
std::string role(KernelGraph const& g, Id op, std::string_view r) {
    Dimension const& d = g.coordinates.node(g.mapping.get(op, r));
    return std::string(name(d.kind)) + " " + d.name;
}

using Counts = std::map<std::string, int>;
using OK = OperationKind;

TEST(Translate, GemmElements) {
    KernelGraph const g = translate(gemmCommand());
    EXPECT_EQ(g.name, "gemm");
    EXPECT_EQ(dimensionKinds(g), (Counts{{"User", 4}, {"SubDimension", 8}, {"MacroTile", 5}}));
    EXPECT_EQ(edgeKinds(g), (Counts{{"Split", 3}, {"Join", 1}, {"Flatten", 4}, {"DataFlow", 6}}));
    EXPECT_EQ(g.control.nodes().size(), 7u);
    EXPECT_EQ(g.control.edges().size(), 6u);
    EXPECT_EQ(operationOrder(g), (std::vector<OK>{OK::LoadTiled, OK::LoadTiled, OK::LoadTiled,
                                                  OK::Multiply, OK::Assign, OK::StoreTiled}));
    ASSERT_EQ(g.arguments.size(), 9u);
    EXPECT_EQ(g.arguments[0].name, "A");
    EXPECT_EQ(g.arguments[0].kind, KernelArgument::Kind::Tensor);
    EXPECT_EQ(g.arguments[4].name, "alpha");
    EXPECT_EQ(g.arguments[4].kind, KernelArgument::Kind::Scalar);
    EXPECT_EQ(g.arguments[8].name, "K");
    EXPECT_EQ(g.arguments[8].kind, KernelArgument::Kind::Size);
}

TEST(Translate, GemmRoles) {
    KernelGraph const g = translate(gemmCommand());
    Ids const ops = g.sequence(g.kernel(), ControlEdgeKind::Body);
    EXPECT_EQ(role(g, ops[0], role::source), "User A");
    EXPECT_EQ(role(g, ops[0], role::dest), "MacroTile a");
    EXPECT_EQ(role(g, ops[1], role::source), "User B");
    EXPECT_EQ(role(g, ops[3], role::lhs), "MacroTile a");
    EXPECT_EQ(role(g, ops[3], role::rhs), "MacroTile b");
    EXPECT_EQ(role(g, ops[3], role::dest), "MacroTile mm");
    Operation const& multiply = g.control.node(ops[3]);
    EXPECT_FALSE(multiply.transposeA);
    EXPECT_TRUE(multiply.transposeB);
    EXPECT_EQ(multiply.dtype, DataType::F32);
    EXPECT_EQ(role(g, ops[4], role::dest), "MacroTile e");
    Id const mm = g.mapping.get(ops[3], role::dest), c = g.mapping.get(ops[2], role::dest);
    EXPECT_EQ(toString(g.control.node(ops[4]).expression),
              "alpha * value#" + std::to_string(mm) + " + beta * value#" + std::to_string(c));
    EXPECT_EQ(role(g, ops[5], role::source), "MacroTile e");
    EXPECT_EQ(role(g, ops[5], role::dest), "User D");
    EXPECT_EQ(g.mapping.connections(g.kernel()).size(), 0u);
    // The product's tile is [M, N] although B is stored [N, K].
    Dimension const& product = g.coordinates.node(mm);
    EXPECT_EQ(toString(product.shape[0]) + " x " + toString(product.shape[1]), "M x N");
    EXPECT_EQ(toString(g.coordinates.node(g.mapping.get(ops[1], role::dest)).size), "N * K");
}

TEST(Translate, LoadsSplitTheTensorIntoItsAxes) {
    KernelGraph const g = translate(gemmCommand());
    Id const load = g.sequence(g.kernel(), ControlEdgeKind::Body)[0];
    Id const user = g.mapping.get(load, role::source), tile = g.mapping.get(load, role::dest);
    Ids const out = g.coordinates.outgoing(user);
    ASSERT_EQ(out.size(), 2u); // Split and DataFlow
    EXPECT_EQ(g.coordinates.edge(out[0]).kind, CoordinateEdgeKind::Split);
    Ids const subs = g.coordinates.heads(out[0]);
    ASSERT_EQ(subs.size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) {
        Dimension const& sub = g.coordinates.node(subs[k]);
        EXPECT_EQ(sub.kind, DimensionKind::SubDimension);
        EXPECT_EQ(sub.axis, static_cast<int>(k));
    }
    EXPECT_EQ(toString(g.coordinates.node(subs[0]).stride), "K");
    EXPECT_EQ(toString(g.coordinates.node(subs[1]).stride), "1");
    EXPECT_EQ(g.coordinates.edge(out[1]).kind, CoordinateEdgeKind::DataFlow);
    EXPECT_EQ(g.coordinates.heads(out[1]), Ids{tile});
    Ids const into = g.coordinates.incoming(tile);
    ASSERT_EQ(into.size(), 2u);
    EXPECT_EQ(g.coordinates.edge(into[0]).kind, CoordinateEdgeKind::Flatten);
    EXPECT_EQ(g.coordinates.tails(into[0]), subs);
}

TEST(Translate, StoresJoinTheAxes) {
    KernelGraph const g = translate(rowSumCommand());
    Id const store = g.sequence(g.kernel(), ControlEdgeKind::Body).back();
    Id const user = g.mapping.get(store, role::dest);
    Ids const in = g.coordinates.incoming(user);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(g.coordinates.edge(in[0]).kind, CoordinateEdgeKind::Join);
    EXPECT_EQ(g.coordinates.edge(in[1]).kind, CoordinateEdgeKind::DataFlow);
    EXPECT_EQ(g.coordinates.tails(in[1]), Ids{g.mapping.get(store, role::source)});
}

TEST(Translate, Axpy) {
    KernelGraph const g = translate(axpyCommand());
    EXPECT_EQ(dimensionKinds(g), (Counts{{"User", 3}, {"SubDimension", 3}, {"Linear", 3}}));
    EXPECT_EQ(operationOrder(g),
              (std::vector<OK>{OK::LoadLinear, OK::LoadLinear, OK::Assign, OK::StoreLinear}));
    Ids const ops = g.sequence(g.kernel(), ControlEdgeKind::Body);
    EXPECT_EQ(role(g, ops[2], role::dest), "Linear e");
    EXPECT_EQ(role(g, ops[3], role::dest), "User y");
    EXPECT_EQ(g.control.node(ops[2]).dtype, DataType::F32);
}

TEST(Translate, FusedChainFlowsFromEveryOperand) {
    KernelGraph const g = translate(reluChainCommand());
    EXPECT_EQ(operationOrder(g), (std::vector<OK>{OK::LoadTiled, OK::LoadTiled, OK::LoadTiled,
                                                  OK::Assign, OK::StoreTiled}));
    Ids const ops = g.sequence(g.kernel(), ControlEdgeKind::Body);
    Id const dest = g.mapping.get(ops[3], role::dest);
    Ids const in = g.coordinates.incoming(dest);
    ASSERT_EQ(in.size(), 2u); // DataFlow from the operands, Flatten from the store's axes
    EXPECT_EQ(g.coordinates.edge(in[0]).kind, CoordinateEdgeKind::DataFlow);
    EXPECT_EQ(g.coordinates.tails(in[0]),
              (Ids{g.mapping.get(ops[0], role::dest), g.mapping.get(ops[1], role::dest),
                   g.mapping.get(ops[2], role::dest)}));
    EXPECT_EQ(g.coordinates.edge(in[1]).kind, CoordinateEdgeKind::Flatten);
}

TEST(Translate, RowSum) {
    KernelGraph const g = translate(rowSumCommand());
    EXPECT_EQ(edgeKinds(g), (Counts{{"Split", 1}, {"Join", 1}, {"Flatten", 2}, {"DataFlow", 3}}));
    Ids const ops = g.sequence(g.kernel(), ControlEdgeKind::Body);
    ASSERT_EQ(ops.size(), 3u);
    Operation const& reduce = g.control.node(ops[1]);
    EXPECT_EQ(reduce.kind, OK::Reduce);
    EXPECT_EQ(reduce.combine, Combine::Sum);
    EXPECT_EQ(role(g, ops[1], role::source), "MacroTile x");
    EXPECT_EQ(role(g, ops[1], role::dest), "MacroTile r");
    Dimension const& r = g.coordinates.node(g.mapping.get(ops[1], role::dest));
    ASSERT_EQ(r.shape.size(), 1u);
    EXPECT_EQ(toString(r.size), "M");
}

TEST(Translate, GivenStridesReachTheSubDimensions) {
    Command c("transposed_copy");
    ExprPtr const m = c.size("M"), n = c.size("N");
    c.tensor("X", DataType::F32, {m, n}, {literal(1), m}).tensor("Y", DataType::F32, {m, n});
    c.storeTiled("Y", c.loadTiled("X"));
    KernelGraph const g = translate(c);
    Id const load = g.sequence(g.kernel(), ControlEdgeKind::Body)[0];
    Ids const subs =
        g.coordinates.heads(g.coordinates.outgoing(g.mapping.get(load, role::source))[0]);
    EXPECT_EQ(toString(g.coordinates.node(subs[0]).stride), "1");
    EXPECT_EQ(toString(g.coordinates.node(subs[1]).stride), "M");
}

} // namespace
} // namespace kiln::test
