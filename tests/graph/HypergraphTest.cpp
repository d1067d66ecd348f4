// The hypergraph under the KernelGraph: ordered ports, adjacency, removal, deep copies and ids;
// and the KernelGraph operations built on it (removal of touching edges, Mapping, sequences).
#include "kiln/graph/Hypergraph.h"

#include "kiln/graph/KernelGraph.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using Graph = Hypergraph<std::string, int>;
using Ids = std::vector<Id>;

// Nodes 1..4 ("a".."d"), edge 10: (3, 1) -> (4, 2), edge 11: (2) -> (3).
Graph sample() {
    Graph g;
    g.addNode(1, "a");
    g.addNode(2, "b");
    g.addNode(3, "c");
    g.addNode(4, "d");
    g.addEdge(10, 100, {3, 1}, {4, 2});
    g.addEdge(11, 110, {2}, {3});
    return g;
}

TEST(Hypergraph, PortsKeepTheirOrder) {
    Graph const g = sample();
    EXPECT_EQ(g.tails(10), (Ids{3, 1}));
    EXPECT_EQ(g.heads(10), (Ids{4, 2}));
    EXPECT_EQ(g.tails(11), Ids{2});
    EXPECT_EQ(g.heads(11), Ids{3});
    EXPECT_EQ(g.node(3), "c");
    EXPECT_EQ(g.edge(10), 100);
}

TEST(Hypergraph, ANodeMayTakeSeveralPortsOfOneEdge) {
    Graph g;
    g.addNode(1, "a");
    g.addNode(2, "b");
    g.addEdge(3, 0, {1, 2, 1}, {2});
    EXPECT_EQ(g.tails(3), (Ids{1, 2, 1}));
    EXPECT_EQ(g.outgoing(1), Ids{3}); // once
}

TEST(Hypergraph, Adjacency) {
    Graph const g = sample();
    EXPECT_EQ(g.outgoing(3), Ids{10});
    EXPECT_EQ(g.incoming(3), Ids{11});
    EXPECT_EQ(g.outgoing(2), Ids{11});
    EXPECT_EQ(g.incoming(2), Ids{10});
    EXPECT_EQ(g.outgoing(4), Ids{});
    EXPECT_EQ(g.incoming(1), Ids{});
}

TEST(Hypergraph, ElementsInInsertionOrder) {
    Graph g;
    g.addNode(7, "x");
    g.addNode(2, "y");
    g.addEdge(5, 0, {7}, {2});
    g.addNode(3, "z");
    EXPECT_EQ(g.nodes(), (Ids{7, 2, 3}));
    EXPECT_EQ(g.edges(), Ids{5});
    EXPECT_EQ(g.elements(), (Ids{7, 2, 5, 3}));
    EXPECT_EQ(g.size(), 4u);
    EXPECT_TRUE(g.isNode(7));
    EXPECT_TRUE(g.isEdge(5));
    EXPECT_FALSE(g.isEdge(7));
    EXPECT_FALSE(g.contains(4));
    EXPECT_FALSE(g.contains(-1));
    EXPECT_FALSE(g.contains(1000));
}

TEST(Hypergraph, Removal) {
    Graph g = sample();
    EXPECT_THROW(g.remove(3), InternalError); // still has edges
    g.remove(10);
    EXPECT_FALSE(g.contains(10));
    EXPECT_EQ(g.outgoing(3), Ids{});
    EXPECT_EQ(g.incoming(2), Ids{});
    EXPECT_EQ(g.incoming(3), Ids{11});
    g.remove(4);
    EXPECT_EQ(g.nodes(), (Ids{1, 2, 3}));
    EXPECT_THROW(g.node(4), InternalError);
    EXPECT_THROW(g.tails(3), InternalError); // a node has no tails
}

TEST(Hypergraph, BadInsertionsAreInternalErrors) {
    Graph g = sample();
    EXPECT_THROW(g.addNode(2, "again"), InternalError);
    EXPECT_THROW(g.addEdge(12, 0, {1}, {99}), InternalError);
    EXPECT_THROW(g.addEdge(12, 0, {10}, {1}), InternalError); // an edge is not a node
    EXPECT_THROW(g.addEdge(1, 0, {2}, {3}), InternalError);
    EXPECT_FALSE(g.contains(12));
}

TEST(Hypergraph, CopiesAreDeepAndIndependent) {
    Graph original = sample();
    Graph copy = original;
    copy.node(1) = "changed";
    copy.remove(10);
    copy.addNode(20, "new");
    EXPECT_EQ(original.node(1), "a");
    EXPECT_EQ(original.heads(10), (Ids{4, 2}));
    EXPECT_FALSE(original.contains(20));
    EXPECT_EQ(copy.elements(), (Ids{1, 2, 3, 4, 11, 20}));

    Graph assigned;
    assigned = original;
    EXPECT_EQ(assigned.tails(10), (Ids{3, 1}));
    EXPECT_EQ(assigned.heads(10), (Ids{4, 2}));
    EXPECT_EQ(assigned.elements(), original.elements());
    Graph moved = std::move(assigned);
    EXPECT_EQ(moved.heads(10), (Ids{4, 2}));
}

TEST(KernelGraph, IdsAreSharedAndNeverReused) {
    KernelGraph g;
    Id const a = g.addDimension({.kind = DimensionKind::Linear});
    Id const b = g.addDimension({.kind = DimensionKind::Linear});
    Id const kernel = g.addOperation({.kind = OperationKind::Kernel});
    Id const e = g.addCoordinateEdge(CoordinateEdgeKind::PassThrough, {a}, {b});
    EXPECT_EQ((Ids{a, b, kernel, e}), (Ids{1, 2, 3, 4}));
    g.removeDimension(b); // and edge e with it
    EXPECT_FALSE(g.coordinates.contains(e));
    EXPECT_EQ(g.coordinates.outgoing(a), Ids{});
    EXPECT_EQ(g.addDimension({.kind = DimensionKind::Linear}), 5);
    g.reserveId(10);
    EXPECT_EQ(g.nextId(), 11);
    g.reserveId(3);
    EXPECT_EQ(g.nextId(), 11);
}

TEST(KernelGraph, RemovingAnOperationRemovesItsEdgesAndConnections) {
    KernelGraph g;
    Id const d = g.addDimension({.kind = DimensionKind::Linear});
    Id const kernel = g.addOperation({.kind = OperationKind::Kernel});
    Id const op = g.addOperation({.kind = OperationKind::Nop});
    Id const next = g.addOperation({.kind = OperationKind::Nop});
    Id const body = g.addControlEdge(ControlEdgeKind::Body, kernel, op);
    g.addControlEdge(ControlEdgeKind::Sequence, op, next);
    g.mapping.connect(op, "dest", d);
    g.removeOperation(op);
    EXPECT_FALSE(g.control.contains(body));
    EXPECT_EQ(g.control.edges(), Ids{});
    EXPECT_EQ(g.mapping.connections(op).size(), 0u);
    EXPECT_EQ(g.mapping.users(d), Ids{});
    EXPECT_EQ(g.kernel(), kernel);
}

TEST(KernelGraph, Mapping) {
    Mapping m;
    m.connect(5, "source", 1);
    m.connect(5, "dest", 2);
    m.connect(5, "source", 3); // replaces
    m.connect(7, "lhs", 3);
    EXPECT_EQ(m.connections(5), (std::vector<Connection>{{"source", 3}, {"dest", 2}}));
    EXPECT_EQ(m.find(5, "dest"), 2);
    EXPECT_EQ(m.find(5, "lhs"), std::nullopt);
    EXPECT_EQ(m.get(7, "lhs"), 3);
    EXPECT_THROW(m.get(7, "rhs"), InternalError);
    EXPECT_EQ(m.users(3), (Ids{5, 7}));
    m.disconnect(5, "source");
    EXPECT_EQ(m.users(3), Ids{7});
    m.disconnect(7, "lhs");
    EXPECT_EQ(m.all().count(7), 0u); // no empty entries left behind
}

TEST(KernelGraph, SequenceIsTopological) {
    KernelGraph g;
    Id const kernel = g.addOperation({.kind = OperationKind::Kernel});
    Id const a = g.addOperation({.kind = OperationKind::Nop});
    Id const b = g.addOperation({.kind = OperationKind::Nop});
    Id const c = g.addOperation({.kind = OperationKind::Nop});
    Id const d = g.addOperation({.kind = OperationKind::Nop});
    // Body -> a and -> c; a -> d, c -> b -> d: d last, b after c.
    g.addControlEdge(ControlEdgeKind::Body, kernel, c);
    g.addControlEdge(ControlEdgeKind::Body, kernel, a);
    g.addControlEdge(ControlEdgeKind::Sequence, a, d);
    g.addControlEdge(ControlEdgeKind::Sequence, c, b);
    g.addControlEdge(ControlEdgeKind::Sequence, b, d);
    EXPECT_EQ(g.sequence(kernel, ControlEdgeKind::Body), (Ids{a, c, b, d}));
    EXPECT_EQ(g.successors(kernel, ControlEdgeKind::Body), (Ids{c, a}));
    g.addControlEdge(ControlEdgeKind::Sequence, d, c);
    EXPECT_THROW(g.sequence(kernel, ControlEdgeKind::Body), InternalError);
}

TEST(KernelGraph, NoKernelIsAnInternalError) {
    KernelGraph g;
    EXPECT_THROW(g.kernel(), InternalError);
}

} // namespace
} // namespace kiln
