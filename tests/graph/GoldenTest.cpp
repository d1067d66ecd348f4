// Golden files: the printed graph of each example Command, compared line for line with
// tests/golden/<name>.txt. When a change to translate or to the printed form is intended, run
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R Golden
// to rewrite the files, and review the diff before committing it.
#include "../GoldenFile.h"
#include "CheckLines.h"
#include "ExampleCommands.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

void expectGolden(std::string const& name, Command const& command) {
    KernelGraph const graph = translate(command);
    EXPECT_EQ(describe(graph, verify(graph)), "");
    expectGoldenFile("tests/golden/" + name + ".txt", toText(graph));
}

TEST(Golden, Axpy) {
    expectGolden("axpy", axpyCommand());
}
TEST(Golden, ReluChain) {
    expectGolden("relu_chain", reluChainCommand());
}
TEST(Golden, Gemm) {
    expectGolden("gemm", gemmCommand());
}
TEST(Golden, RowSum) {
    expectGolden("row_sum", rowSumCommand());
}

// The printed form is deterministic: two translations of one Command print the same text.
TEST(Golden, PrintingIsDeterministic) {
    EXPECT_EQ(toText(translate(gemmCommand())), toText(translate(gemmCommand())));
}

// The key lines of the GEMM graph, by CHECK lines, independent of the golden file.
TEST(Golden, GemmKeyLines) {
    auto const failure = checkLines(toText(translate(gemmCommand())), R"(
        CHECK: KernelGraph "gemm"
        CHECK-NEXT: arguments
        CHECK-NEXT:   A: tensor f16
        CHECK: alpha: scalar f32
        CHECK: M: size i64
        CHECK: dimensions
        CHECK: User "A" f16 size={M * K}
        CHECK-NEXT: SubDimension axis=0 size={M} stride={K}
        CHECK-NEXT: SubDimension axis=1 size={K} stride={1}
        CHECK: coordinate edges
        CHECK: operations
        CHECK-NOT: Reduce
        CHECK: Multiply f32 transposeB lhs=
        CHECK: Assign f32 dest=
        CHECK: control edges
        CHECK: Body #1 ->
    )");
    EXPECT_FALSE(failure) << *failure;
}

TEST(CheckLines, ReportsWhatFailed) {
    std::string const output = "a one\nb two\nc three\n";
    EXPECT_FALSE(checkLines(output, "CHECK: one\nCHECK-NEXT: two\nCHECK: three"));
    EXPECT_EQ(checkLines(output, "CHECK: two\nCHECK: one"),
              "check line 2: no line after line 2 contains 'one'");
    EXPECT_EQ(checkLines(output, "CHECK: one\nCHECK-NEXT: three"),
              "check line 2: expected the next line to contain 'three', got 'b two'");
    EXPECT_EQ(checkLines(output, "CHECK: one\nCHECK-NOT: two\nCHECK: three"),
              "check line 3: line 2 contains 'two', which CHECK-NOT forbids: 'b two'");
    EXPECT_EQ(checkLines(output, "CHECK: two\nCHECK-NOT: c"),
              "check line 2: line 3 contains 'c', which CHECK-NOT forbids");
}

} // namespace
} // namespace kiln::test
