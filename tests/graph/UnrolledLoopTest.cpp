// UnrolledLoopTest.cpp: the copies code generation writes out for a loop counted by an Unroll
// dimension (unrolledCopies), and the loops it cannot write out, refused by name.
#include "kiln/graph/UnrolledLoop.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"

#include <fmt/format.h>
#include <functional>
#include <gtest/gtest.h>

namespace kiln {
namespace {

// A Kernel whose body is a loop over u, an Unroll dimension of `copies` values: Initialize
// u = start(ko), ForLoopIncrement u = step(u, ko), while condition(u, ko), where ko stands for an
// outer loop's counter, unknown at compile time.
using Formula = std::function<ExprPtr(ExprPtr const& u, ExprPtr const& ko)>;

struct UnrolledGraph {
    KernelGraph g;
    Id u = 0, ko = 0, loop = 0;

    UnrolledGraph(
        std::int64_t copies, Formula const& condition,
        Formula const& start = [](ExprPtr const&, ExprPtr const&) { return literal(0); },
        Formula const& step = [](ExprPtr const& u, ExprPtr const&) { return u + literal(1); }) {
        u = g.addDimension({.kind = DimensionKind::Unroll, .size = literal(copies), .name = "u"});
        ko = g.addDimension({.kind = DimensionKind::ForLoop, .size = literal(8), .name = "ko"});
        Id const kernel = g.addOperation({.kind = OperationKind::Kernel, .name = "unrolled"});
        loop = g.addOperation({.kind = OperationKind::ForLoop,
                               .expression = condition(index(u), index(ko)),
                               .name = "u"});
        Id const init = g.addOperation(
            {.kind = OperationKind::Assign, .expression = start(index(u), index(ko))});
        Id const increment = g.addOperation(
            {.kind = OperationKind::Assign, .expression = step(index(u), index(ko))});
        Id const body = g.addOperation({.kind = OperationKind::Nop});
        g.mapping.connect(loop, role::counter, u);
        g.mapping.connect(init, role::dest, u);
        g.mapping.connect(increment, role::dest, u);
        g.addControlEdge(ControlEdgeKind::Body, kernel, loop);
        g.addControlEdge(ControlEdgeKind::Initialize, loop, init);
        g.addControlEdge(ControlEdgeKind::ForLoopIncrement, loop, increment);
        g.addControlEdge(ControlEdgeKind::Body, loop, body);
    }
};

Formula lessThan(std::int64_t n) {
    return [n](ExprPtr const& u, ExprPtr const&) { return binary(BinaryOp::Less, u, literal(n)); };
}

std::string errorOf(UnrolledGraph const& l) {
    try {
        unrolledCopies(l.g, l.loop);
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

TEST(UnrolledLoop, EachValueOfTheCounterIsOneCopy) {
    UnrolledGraph const l(4, lessThan(4));
    auto const copies = unrolledCopies(l.g, l.loop);
    ASSERT_EQ(copies.size(), 4u);
    for (std::size_t c = 0; c < copies.size(); ++c) {
        EXPECT_EQ(copies[c].value, static_cast<std::int64_t>(c));
        // u < 4 surely holds at u = 0 .. 3: no copy needs a guard.
        EXPECT_EQ(literalInt(copies[c].condition), std::int64_t{1});
    }
}

TEST(UnrolledLoop, CopiesPastTheLastKTileAreGuardedAndTheLoopStopsAtItsEnd) {
    // gemm-k-unroll's condition: u < 2 && ko * 2 + u < 5 (five K tiles, UNROLL = 2). At u = 0
    // and 1 it depends on ko, so each copy keeps the guard (without u < 2, which holds); at
    // u = 2 it is surely false.
    UnrolledGraph const l(2, [](ExprPtr const& u, ExprPtr const& ko) {
        return binary(BinaryOp::LogicalAnd, binary(BinaryOp::Less, u, literal(2)),
                      binary(BinaryOp::Less, ko * literal(2) + u, literal(5)));
    });
    auto const copies = unrolledCopies(l.g, l.loop);
    ASSERT_EQ(copies.size(), 2u);
    EXPECT_EQ(copies[1].value, 1);
    EXPECT_EQ(toString(copies[1].condition),
              toString(simplify(
                  binary(BinaryOp::Less, index(l.ko) * literal(2) + literal(1), literal(5)))));
}

TEST(UnrolledLoop, ALoopCodeGenerationCannotWriteOutIsRefusedByName) {
    // The condition still holds after the counter's last value.
    UnrolledGraph const endless(2, lessThan(3));
    EXPECT_EQ(
        errorOf(endless),
        fmt::format("error: the unrolled loop #{} (u): its condition {} does not end it within "
                    "the 2 values of its counter #{} (at 2, it is true)",
                    endless.loop, toString(endless.g.control.node(endless.loop).expression),
                    endless.u));
    // A start that is not a constant.
    UnrolledGraph const moving(2, lessThan(2),
                               [](ExprPtr const&, ExprPtr const& ko) { return ko; });
    EXPECT_NE(errorOf(moving).find("starts its counter at"), std::string::npos) << errorOf(moving);
    // A step that is not a constant.
    UnrolledGraph const strided(
        2, lessThan(2), [](ExprPtr const&, ExprPtr const&) { return literal(0); },
        [](ExprPtr const& u, ExprPtr const& ko) { return u + ko; });
    EXPECT_NE(errorOf(strided).find("not by a constant"), std::string::npos) << errorOf(strided);
}

} // namespace
} // namespace kiln
