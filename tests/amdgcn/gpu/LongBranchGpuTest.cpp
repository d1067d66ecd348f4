// LongBranchGpuTest.cpp: the GEMM whose unrolled K loop passes 128 KiB (property test seed 1204;
// LongBranchKernelTest.cpp assembles it) runs on an AMD GPU through its long branches
// (s_getpc_b64 / s_setpc_b64) and matches the CPU reference, at sizes that take the K loop
// several times and are not multiples of the tiles. Only a run shows that the hardware lands
// where the disassembly says. Label gpu: skipped where HIP finds no device (KILN_REQUIRE_GPU=1
// fails instead).
#include "LoweringTestSupport.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Platform.h"
#include "kiln/scheduler/DeviceRun.h"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <tuple>

namespace kiln::test {
namespace {

std::map<std::string, std::int64_t> const kLongLoopParams = {
    {"MMA", 1}, {"MT_M", 32}, {"MT_N", 64}, {"MT_K", 64}, {"WT_M", 16}, {"UNROLL", 3}};

TEST(AmdgcnLongBranchGpu, UnrolledGemmKLoopOver128KiBMatchesTheReference) {
    std::string why;
    std::shared_ptr<runtime::Device> device;
    if (auto platform = runtime::loadPlatform("hip"); !platform.ok())
        why = platform.error().message();
    else if (auto opened = (*platform)->device(0); !opened.ok())
        why = opened.error().message();
    else
        device = *opened;
    if (!device) {
        char const* require = std::getenv("KILN_REQUIRE_GPU");
        if (require && std::string(require) == "1")
            FAIL() << "KILN_REQUIRE_GPU=1 but there is no usable AMD GPU: " << why;
        GTEST_SKIP() << "no AMD GPU: " << why;
    }
    std::string const target = device->description().target;
    std::string const command = "../tests/amdgcn/commands/gemm-bf16-long-k-loop.json";
    KernelGraph const graph = lowered(command, "gemm.pipeline.json", kLongLoopParams, target);
    auto const kernel =
        lowering::emitKernel(graph, {.target = target, .schedule = kLongLoopParams});
    ASSERT_NE(kernel.code.find("s_setpc_b64"), std::string::npos) << "no long branch on " << target;
    Command const loaded = loadCommand(sourcePath("examples/" + command));
    for (auto const& [m, n, k] : {std::tuple{70.0, 130.0, 200.0}, std::tuple{32.0, 64.0, 64.0}}) {
        auto problem = loaded.defaults;
        problem["M"] = m;
        problem["N"] = n;
        problem["K"] = k;
        auto const result = scheduler::runOnDevice(device, loaded, problem, graph, kernel);
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
            << "M=" << m << " N=" << n << " K=" << k << ", in " << result.value().worstTensor;
        std::printf("[ gpu      ] %s M=%g N=%g K=%g: max relative error %.3g\n", target.c_str(), m,
                    n, k, result.value().maxRelativeError);
    }
}

} // namespace
} // namespace kiln::test
