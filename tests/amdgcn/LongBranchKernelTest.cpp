// LongBranchKernelTest.cpp: a GEMM whose unrolled K loop passes 128 KiB of AMDGCN (found by the
// property test, seed 1204: bf16, MMA=1, 32 x 64 x 64 tiles, the K loop unrolled 3 times)
// assembles for gfx90a, gfx942 and gfx1100 with long branches (s_getpc_b64 / s_setpc_b64),
// each landing on its label, where short branches ("branch size exceeds simm16") did not.
#include "AmdTestSupport.h"
#include "LoweringTestSupport.h"
#include "kiln/lowering/Codegen.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

std::map<std::string, std::int64_t> const kLongLoopParams = {
    {"MMA", 1}, {"MT_M", 32}, {"MT_N", 64}, {"MT_K", 64}, {"WT_M", 16}, {"UNROLL", 3}};

TEST(AmdgcnLongBranch, UnrolledGemmKLoopOver128KiBAssembles) {
    for (std::string const& target : amdgcn::test::kTargets) {
        SCOPED_TRACE(target);
        KernelGraph const graph =
            test::lowered("../tests/amdgcn/commands/gemm-bf16-long-k-loop.json",
                          "gemm.pipeline.json", kLongLoopParams, target);
        lowering::EmittedKernel const kernel =
            lowering::emitKernel(graph, {.target = target, .schedule = kLongLoopParams});
        // The K loop's exit and back edge (at least) are long.
        EXPECT_NE(kernel.code.find("s_getpc_b64"), std::string::npos);
        EXPECT_NE(kernel.code.find("s_setpc_b64"), std::string::npos);
        std::string why;
        int const followed = amdgcn::test::checkLongBranches(kernel.code, target, why);
        if (followed < 0)
            GTEST_SKIP() << why;
        EXPECT_GE(followed, 2);
    }
}

} // namespace
} // namespace kiln
