// BlasLoadTest.cpp: cuBLAS loaded at run time: a missing library is a clear error, not a crash.
#include "kiln/runtime/cuda/Blas.h"

#include <cstdlib>
#include <gtest/gtest.h>

namespace kiln::runtime::cuda {
namespace {

TEST(BlasLoad, AMissingLibraryIsNotFoundNamingWhatWasTried) {
    auto library = BlasLibrary::load("libkiln-no-such-cublas.so.12");
    ASSERT_FALSE(library.ok());
    EXPECT_EQ(library.error().code(), ErrorCode::NotFound);
    std::string const& message = library.error().message();
    EXPECT_EQ(message.rfind("cuBLAS not found: libkiln-no-such-cublas.so.12: cannot open shared "
                            "object file",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("(install cuBLAS, or set KILN_CUBLAS_LIBRARY to the path of "
                           "libcublas.so)"),
              std::string::npos)
        << message;
}

TEST(BlasLoad, ALibraryWithoutTheEntryPointsIsNotFoundNamingThem) {
    // libm opens but is no cuBLAS: every required entry point is named.
    auto library = BlasLibrary::load("libm.so.6");
    ASSERT_FALSE(library.ok());
    EXPECT_EQ(library.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(library.error().message(),
              "cuBLAS not found: 'libm.so.6' lacks cublasCreate_v2, cublasDestroy_v2, "
              "cublasSetStream_v2, cublasSetMathMode, cublasGetVersion_v2, cublasSgemm_v2, "
              "cublasGemmEx (a cuBLAS of CUDA 11 or newer is needed)");
}

TEST(BlasLoad, TheEnvironmentVariableReplacesTheDefaultList) {
    char const* saved = std::getenv(kCublasLibraryVariable);
    std::string const previous = saved ? saved : "";
    ::setenv(kCublasLibraryVariable, "/nowhere/libcublas.so", 1);
    EXPECT_EQ(BlasLibrary::candidates(), std::vector<std::string>{"/nowhere/libcublas.so"});
    auto library = BlasLibrary::load();
    ASSERT_FALSE(library.ok());
    EXPECT_NE(library.error().message().find("/nowhere/libcublas.so: cannot open"),
              std::string::npos)
        << library.error().message();
    if (saved)
        ::setenv(kCublasLibraryVariable, previous.c_str(), 1);
    else
        ::unsetenv(kCublasLibraryVariable);
    std::vector<std::string> const defaults = BlasLibrary::candidates();
    ASSERT_EQ(defaults.size(), 6u);
    EXPECT_EQ(defaults.front(), "libcublas.so.13");
    EXPECT_EQ(defaults.back(), "/usr/local/cuda/lib64/libcublas.so");
}

TEST(BlasLoad, WhereCublasIsInstalledItsEntryPointsResolve) {
    auto library = BlasLibrary::load();
    if (!library.ok())
        GTEST_SKIP() << library.error().message();
    EXPECT_FALSE(library.value()->path().empty());
    // cuBLAS's status name, then its own words.
    EXPECT_EQ(library.value()->describe(7).rfind("CUBLAS_STATUS_INVALID_VALUE (", 0), 0u)
        << library.value()->describe(7);
    EXPECT_EQ(library.value()->describe(12345).rfind("cuBLAS status 12345", 0), 0u);
}

TEST(BlasLoad, GemmShapeCountsTwoFlopsPerMultiplyAdd) {
    EXPECT_EQ((GemmShape{.m = 4096, .n = 4096, .k = 4096}.flops()), 2.0 * 4096 * 4096 * 4096);
    EXPECT_EQ((GemmShape{.m = 3, .n = 5, .k = 7}.flops()), 210.0);
}

} // namespace
} // namespace kiln::runtime::cuda
