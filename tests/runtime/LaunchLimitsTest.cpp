// LaunchLimitsTest.cpp: grid, block and shared memory against a made-up H100's limits.
#include "kiln/runtime/LaunchLimits.h"

#include "FakeDevice.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

KernelAttributes smallKernel() {
    KernelAttributes kernel;
    kernel.maxThreadsPerBlock = 1024;
    kernel.registers = 16;
    kernel.maxDynamicSharedBytes = 49152;
    return kernel;
}

std::string check(LaunchConfig const& config, KernelAttributes const& kernel = smallKernel()) {
    Status status = checkLaunchLimits(test::fakeH100(), "k", kernel, config);
    if (status.ok())
        return "ok";
    EXPECT_EQ(status.error().code(), ErrorCode::LaunchOutOfLimits);
    return status.error().message();
}

std::string const kPrefix = "launch of 'k' on device 0 'NVIDIA H100 80GB HBM3' (sm_90): ";

TEST(LaunchLimits, LaunchesAtTheLimitsPass) {
    EXPECT_EQ(check({{2147483647, 65535, 65535}, {1024, 1, 1}, 0}), "ok");
    EXPECT_EQ(check({{1, 1, 1}, {16, 1, 64}, 232448}), "ok");
    EXPECT_EQ(check({{1, 1, 1}, {1, 1024, 1}, 0}), "ok");
}

TEST(LaunchLimits, ZeroExtentsAreRefused) {
    EXPECT_EQ(check({{0, 1, 1}, {32, 1, 1}, 0}), kPrefix + "grid (0, 1, 1) has a zero extent in x");
    EXPECT_EQ(check({{1, 1, 1}, {32, 1, 0}, 0}),
              kPrefix + "block (32, 1, 0) has a zero extent in z");
}

TEST(LaunchLimits, ExtentsOverTheDeviceLimitsAreRefused) {
    EXPECT_EQ(check({{1, 65536, 1}, {32, 1, 1}, 0}),
              kPrefix + "grid (1, 65536, 1): y = 65536 is over the device's limit of 65535");
    EXPECT_EQ(check({{1, 1, 1}, {1, 1, 65}, 0}),
              kPrefix + "block (1, 1, 65): z = 65 is over the device's limit of 64");
    EXPECT_EQ(check({{1, 1, 1}, {2048, 1, 1}, 0}),
              kPrefix + "block (2048, 1, 1): x = 2048 is over the device's limit of 1024");
}

TEST(LaunchLimits, TooManyThreadsAreRefused) {
    EXPECT_EQ(check({{1, 1, 1}, {64, 32, 1}, 0}),
              kPrefix + "block (64, 32, 1) has 2048 threads; the device allows 1024 per block");
    KernelAttributes heavy = smallKernel();
    heavy.maxThreadsPerBlock = 256;
    heavy.registers = 255;
    EXPECT_EQ(check({{1, 1, 1}, {512, 1, 1}, 0}, heavy),
              kPrefix + "block (512, 1, 1) has 512 threads; the kernel allows 256 (it uses 255 "
                        "registers per thread)");
}

TEST(LaunchLimits, SharedMemoryOverTheOptInLimitIsRefused) {
    EXPECT_EQ(check({{1, 1, 1}, {32, 1, 1}, 232449}),
              kPrefix + "232449 bytes of dynamic shared memory plus 0 static is over the "
                        "device's limit of 232448 bytes per block (opt-in)");
    KernelAttributes withStatic = smallKernel();
    withStatic.staticSharedBytes = 1024;
    EXPECT_EQ(check({{1, 1, 1}, {32, 1, 1}, 232448 - 1024}, withStatic), "ok");
    EXPECT_EQ(check({{1, 1, 1}, {32, 1, 1}, 232448}, withStatic),
              kPrefix + "232448 bytes of dynamic shared memory plus 1024 static is over the "
                        "device's limit of 232448 bytes per block (opt-in)");
}

TEST(LaunchLimits, ClustersMustTileTheGridAndStayPortable) {
    LaunchConfig config{{132, 2, 1}, {128, 1, 1}, 0, {2, 1, 1}};
    EXPECT_EQ(check(config), "ok");
    config.cluster = {0, 1, 1};
    EXPECT_EQ(check(config), kPrefix + "cluster (0, 1, 1) has a zero extent in x");
    config.cluster = {4, 4, 1};
    EXPECT_EQ(check(config),
              kPrefix + "cluster (4, 4, 1) has 16 blocks; a portable cluster has at most 8");
    config.cluster = {8, 1, 1};
    EXPECT_EQ(check(config),
              kPrefix + "grid (132, 2, 1) is not a whole number of clusters (8, 1, 1)");
    DeviceDescription ampere = test::fakeH100();
    ampere.computeMajor = 8;
    config.cluster = {2, 1, 1};
    Status status = checkLaunchLimits(ampere, "k", smallKernel(), config);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(),
              kPrefix + "cluster (2, 1, 1): thread-block clusters need an NVIDIA device of "
                        "compute capability 9.0 or newer");
}

} // namespace
} // namespace kiln::runtime
