// CodeObjectOnCudaTest.cpp: AMD code handed to the CUDA platform is refused with a message saying
// where it belongs, before the driver sees it.
#include "gpu/GpuFixture.h"
#include "kiln/runtime/Kernel.h"

namespace kiln::runtime::test {
namespace {

using CodeObjectOnCudaTest = GpuTest;

TEST_F(CodeObjectOnCudaTest, AnAmdCodeObjectIsRefused) {
    Expected<Kernel> kernel =
        Kernel::load(device(), KernelLoaderSpec::codeObjectInMemory("\x7f"
                                                                    "ELF (an AMDGPU code object)",
                                                                    "kiln_axpy"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::Unsupported);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_axpy' (code object in memory) is AMD code, which the CUDA platform "
              "cannot load on " +
                  device()->description().summary() + " (load it on the \"hip\" platform)");
}

} // namespace
} // namespace kiln::runtime::test
