// GemmReferenceTest.cpp: which Commands cuBLAS can check, and the shape it is given.
#include "kiln/scheduler/GemmReference.h"

#include "kiln/graph/CommandJson.h"

#include <gtest/gtest.h>

namespace kiln::scheduler {
namespace {

std::string const kExamples = std::string(KILN_SOURCE_DIR) + "/examples/";

TEST(GemmReference, TheF32ExampleIsAlphaABPlusBetaCWithBTransposed) {
    Command const command = loadCommand(kExamples + "gemm.json");
    auto const form = matchGemm(command);
    ASSERT_TRUE(form.has_value());
    EXPECT_EQ(form->a, "A");
    EXPECT_EQ(form->b, "B");
    EXPECT_EQ(form->c, "C");
    EXPECT_EQ(form->d, "D");
    EXPECT_EQ(form->alpha, "alpha");
    EXPECT_EQ(form->beta, "beta");
    EXPECT_FALSE(form->transA);
    EXPECT_TRUE(form->transB);
    Bindings const bindings =
        randomBindings(command, {{"M", 300}, {"N", 40}, {"K", 17}, {"alpha", 2}, {"beta", 1}}, 1);
    auto const shape = gemmShape(*form, bindings);
    ASSERT_TRUE(shape.ok()) << shape.error().message();
    EXPECT_EQ(shape.value().m, 300);
    EXPECT_EQ(shape.value().n, 40);
    EXPECT_EQ(shape.value().k, 17);
    EXPECT_TRUE(shape.value().transB);
}

TEST(GemmReference, TheF16ExampleIsAPlainProduct) {
    Command const command = loadCommand(kExamples + "gemm-f16.json");
    auto const form = matchGemm(command);
    ASSERT_TRUE(form.has_value());
    EXPECT_EQ(form->c, "");
    EXPECT_EQ(form->alpha, "");
    EXPECT_FALSE(form->transB);
    auto const shape =
        gemmShape(*form, randomBindings(command, {{"M", 8}, {"N", 16}, {"K", 24}}, 1));
    ASSERT_TRUE(shape.ok()) << shape.error().message();
    EXPECT_EQ(shape.value().flops(), 2.0 * 8 * 16 * 24);
}

TEST(GemmReference, OtherCommandsAreNotGemms) {
    EXPECT_FALSE(matchGemm(loadCommand(kExamples + "axpy.json")).has_value());
    EXPECT_FALSE(matchGemm(loadCommand(kExamples + "row-reduction.json")).has_value());
    // A bias added to the product is not alpha * ab + beta * c.
    Command c("biased");
    c.size("M");
    c.tensor("A", DataType::F32, {c.size("M"), c.size("M")});
    c.tensor("B", DataType::F32, {c.size("M"), c.size("M")});
    c.tensor("D", DataType::F32, {c.size("M"), c.size("M")});
    std::string const ab = c.multiply(c.loadTiled("A"), c.loadTiled("B"));
    c.storeTiled("D", c.execute(ab + " + 1.0"));
    EXPECT_FALSE(matchGemm(c).has_value());
}

} // namespace
} // namespace kiln::scheduler
