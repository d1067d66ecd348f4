// The DOT drawing: key lines of a translated axpy, escaping, and that every arrow joins nodes
// the drawing declares.
#include "kiln/graph/GraphDot.h"

#include "CheckLines.h"
#include "ExampleCommands.h"
#include "kiln/graph/Translate.h"

#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>

namespace kiln::test {
namespace {

TEST(GraphDot, AxpyKeyLines) {
    // Ids as in tests/golden/axpy.txt.
    auto const failure = checkLines(toDot(translate(axpyCommand())), R"(
        CHECK: digraph "axpy" {
        CHECK: subgraph cluster_coordinates {
        CHECK: n2 [shape=ellipse, label="#2 User x\nf32\nsize N"];
        CHECK-NEXT: n3 [shape=ellipse, label="#3 SubDimension\naxis 0\nsize N\nstride 1"];
        CHECK: n5 [shape=box, height=0.2, style=filled, fillcolor="#eeeeee", label="#5 Split"];
        CHECK-NEXT: n2 -> n5 [label="0"];
        CHECK-NEXT: n5 -> n3 [label="0"];
        CHECK: label="#19 DataFlow"];
        CHECK-NEXT: n4 -> n19 [label="0", color=blue];
        CHECK-NEXT: n12 -> n19 [label="1", color=blue];
        CHECK-NEXT: n19 -> n18 [label="0", color=blue];
        CHECK: subgraph cluster_control {
        CHECK-NOT: ellipse
        CHECK: n20 [shape=box, style=rounded, label="#20 Assign\nf32\nvalue#4 * alpha + value#12"];
        CHECK: n1 -> n8 [label="#9 Body"];
        CHECK-NEXT: n8 -> n16 [label="#17 Sequence"];
        CHECK: n8 -> n2 [style=dashed, color=gray40, constraint=false, label="source"];
        CHECK-NEXT: n8 -> n4 [style=dashed, color=gray40, constraint=false, label="dest"];
        CHECK: n27 -> n22 [style=dashed, color=gray40, constraint=false, label="dest"];
        CHECK-NEXT: }
    )");
    EXPECT_FALSE(failure) << *failure;
}

TEST(GraphDot, TransposesAndCombineAreLabelled) {
    std::string const gemm = toDot(translate(gemmCommand()));
    EXPECT_NE(
        gemm.find("n31 [shape=box, style=rounded, label=\"#31 Multiply\\nf32\\ntranspose B\"];"),
        std::string::npos)
        << gemm;
    std::string const rowSum = toDot(translate(rowSumCommand()));
    EXPECT_NE(rowSum.find("label=\"#13 Reduce\\nf32\\nsum\""), std::string::npos) << rowSum;
}

TEST(GraphDot, QuotesEscape) {
    EXPECT_EQ(dotQuoted("plain"), "\"plain\"");
    EXPECT_EQ(dotQuoted("say \"hi\""), "\"say \\\"hi\\\"\"");
    EXPECT_EQ(dotQuoted("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(dotQuoted("two\nlines"), "\"two\\nlines\"");
    EXPECT_EQ(dotQuoted("tab\there"), "\"tab here\"");
}

TEST(GraphDot, NamesAreEscaped) {
    KernelGraph g;
    g.name = "odd \"name\"\\";
    g.addOperation({.kind = OperationKind::Kernel, .name = "k\"1"});
    std::string const dot = toDot(g);
    EXPECT_EQ(dot.substr(0, dot.find('\n')), "digraph \"odd \\\"name\\\"\\\\\" {");
    EXPECT_NE(dot.find("n1 [shape=box, style=rounded, label=\"#1 Kernel k\\\"1\"];"),
              std::string::npos)
        << dot;
}

// Every arrow of every example joins two declared Graphviz nodes, and every element is declared.
TEST(GraphDot, ArrowsJoinDeclaredNodes) {
    std::regex const declaration(R"(^\s*(n\d+) \[shape=)"), arrow(R"(^\s*(n\d+) -> (n\d+) \[)");
    for (Command const& c : {axpyCommand(), reluChainCommand(), gemmCommand(), rowSumCommand()}) {
        KernelGraph const g = translate(c);
        std::istringstream in(toDot(g));
        std::set<std::string> declared;
        std::vector<std::pair<std::string, std::string>> arrows;
        for (std::string line; std::getline(in, line);) {
            std::smatch m;
            if (std::regex_search(line, m, declaration))
                declared.insert(m[1]);
            else if (std::regex_search(line, m, arrow))
                arrows.emplace_back(m[1], m[2]);
        }
        EXPECT_EQ(declared.size(), g.coordinates.size() + g.control.nodes().size()) << c.name();
        std::size_t mapped = 0, ports = 0;
        for (auto const& [op, connections] : g.mapping.all())
            mapped += connections.size();
        for (Id e : g.coordinates.edges())
            ports += g.coordinates.tails(e).size() + g.coordinates.heads(e).size();
        EXPECT_EQ(arrows.size(), ports + g.control.edges().size() + mapped) << c.name();
        for (auto const& [from, to] : arrows) {
            EXPECT_TRUE(declared.count(from)) << c.name() << ": " << from;
            EXPECT_TRUE(declared.count(to)) << c.name() << ": " << to;
        }
    }
}

} // namespace
} // namespace kiln::test
