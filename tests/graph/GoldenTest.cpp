// Golden files: the printed graph of each example Command, compared line for line with
// tests/golden/<name>.txt. When a change to translate or to the printed form is intended, run
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R Golden
// to rewrite the files, and review the diff before committing it.
#include "CheckLines.h"
#include "ExampleCommands.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace kiln::test {
namespace {

std::string goldenPath(std::string const& name) {
    return std::string(KILN_SOURCE_DIR) + "/tests/golden/" + name + ".txt";
}

// The first line on which `actual` and `expected` differ, both shown.
std::string firstDifference(std::string const& actual, std::string const& expected) {
    std::istringstream a(actual), e(expected);
    std::string la, le;
    for (int line = 1;; ++line) {
        bool const moreA = static_cast<bool>(std::getline(a, la));
        bool const moreE = static_cast<bool>(std::getline(e, le));
        if (!moreA && !moreE)
            return "no difference";
        if (!moreA || !moreE || la != le)
            return "line " + std::to_string(line) + ":\n  expected: " + (moreE ? le : "<end>") +
                   "\n  actual:   " + (moreA ? la : "<end>");
    }
}

void expectGolden(std::string const& name, Command const& command) {
    KernelGraph const graph = translate(command);
    EXPECT_EQ(describe(graph, verify(graph)), "");
    std::string const actual = toText(graph);
    std::string const path = goldenPath(name);

    if (char const* update = std::getenv("KILN_UPDATE_GOLDEN");
        update && std::string(update) == "1") {
        std::ofstream(path) << actual;
        std::cout << "rewrote " << path << "\n";
        return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "no golden file " << path
                    << "; run with KILN_UPDATE_GOLDEN=1 to create it, then review it";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str())
        << "the printed graph of '" << name << "' differs from " << path << " at "
        << firstDifference(actual, expected.str())
        << "\nIf the change is intended, rerun with KILN_UPDATE_GOLDEN=1 to rewrite the golden "
           "file and review its diff.";
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
