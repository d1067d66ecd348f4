// PlatformLoadTest.cpp: platforms by name, and the errors of a missing or unusable driver.
#include "kiln/runtime/Platform.h"

#include <cstdlib>
#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

TEST(PlatformLoad, UnknownPlatformsAreUnsupported) {
    Expected<std::shared_ptr<Platform>> metal = loadPlatform("metal");
    ASSERT_FALSE(metal.ok());
    EXPECT_EQ(metal.error().code(), ErrorCode::Unsupported);
    EXPECT_EQ(metal.error().message(), "unknown platform 'metal'; known platforms: cuda, hip");
    EXPECT_EQ(platformNames(), (std::vector<std::string>{"cuda", "hip"})); // HIP: HipPlatformTest
}

#if KILN_HAVE_CUDA

TEST(PlatformLoad, AMissingDriverLibraryIsNoDriver) {
    PlatformOptions options;
    options.driverLibrary = "libkiln-no-such-cuda.so.1";
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda", options);
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    std::string const& message = platform.error().message();
    EXPECT_EQ(message.rfind("no CUDA driver: cannot load 'libkiln-no-such-cuda.so.1': ", 0), 0u)
        << message;
    EXPECT_NE(message.find("libkiln-no-such-cuda.so.1: cannot open shared object file"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("(install the NVIDIA driver, or set KILN_CUDA_DRIVER to the path of "
                           "libcuda.so.1)"),
              std::string::npos)
        << message;
}

TEST(PlatformLoad, TheEnvironmentVariableNamesTheDriver) {
    ASSERT_EQ(setenv(kCudaDriverVariable, "/nonexistent/libcuda.so.1", 1), 0);
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda");
    unsetenv(kCudaDriverVariable);
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(platform.error().message().rfind(
                  "no CUDA driver: cannot load '/nonexistent/libcuda.so.1': ", 0),
              0u)
        << platform.error().message();
}

TEST(PlatformLoad, ALibraryThatIsNotTheDriverIsNoDriver) {
    // libm loads but has none of the driver's entry points.
    PlatformOptions options;
    options.driverLibrary = "libm.so.6";
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda", options);
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(platform.error().message(),
              "no usable CUDA driver: 'libm.so.6' lacks cuInit, cuDriverGetVersion or "
              "cuGetProcAddress (a CUDA driver of 11.3 or newer is needed)");
}

TEST(PlatformLoad, TheDefaultDriverLoadsOrSaysWhy) {
    // Whatever this machine has: a platform, or NoDriver / NoDevice with a message; never a crash.
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda");
    if (platform.ok()) {
        EXPECT_EQ((*platform)->name(), "cuda");
        EXPECT_GT((*platform)->deviceCount(), 0);
        EXPECT_EQ((*platform)->version().rfind("CUDA ", 0), 0u);
    } else {
        EXPECT_TRUE(platform.error().code() == ErrorCode::NoDriver ||
                    platform.error().code() == ErrorCode::NoDevice)
            << platform.error().message();
        EXPECT_EQ(platform.error().message().rfind("no ", 0), 0u) << platform.error().message();
    }
}

#else

TEST(PlatformLoad, ABuildWithoutCudaSaysSo) {
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda");
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::Unsupported);
    EXPECT_NE(platform.error().message().find("cuda.h was not found"), std::string::npos);
}

#endif

} // namespace
} // namespace kiln::runtime
