// PtxWriterTest.cpp: expressions written as PTX instructions, one expression at a time.
#include "kiln/lowering/PtxWriter.h"

#include "kiln/lowering/IndexFacts.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

// An index bound to a constant element number (as in an unrolled loop) makes arithmetic on
// immediates: it is computed, not written as `mul.lo.s64 %rd1, 0, -64`.
TEST(PtxWriter, ArithmeticOnImmediatesIsComputed) {
    KernelGraph graph;
    Id const element = graph.addDimension({DimensionKind::Unroll, literal(4)});
    Id const thread = graph.addDimension({DimensionKind::Workitem, literal(64), {}, 0});
    lowering::IndexFacts const facts(graph);
    lowering::PtxWriter writer(graph, facts);
    lowering::PtxBindings bindings;
    bindings.index = [&](Id d) { return d == element ? std::string("0") : std::string("%tid"); };

    EXPECT_EQ(writer.emit(index(element) * literal(-64), DataType::I64, bindings), "0");
    EXPECT_EQ(writer.emit(index(element) + literal(5), DataType::I64, bindings), "5");
    EXPECT_EQ(writer.emit(index(thread) * (index(element) + literal(1)), DataType::I64, bindings),
              "%tid");
    EXPECT_EQ(writer.body(), "");
    // Division by an immediate zero is left to the instruction (loaders refuse it earlier).
    EXPECT_NE(writer.emit(index(thread) / index(element), DataType::I64, bindings), "0");
    EXPECT_NE(writer.body(), "");
}

} // namespace
} // namespace kiln::test
