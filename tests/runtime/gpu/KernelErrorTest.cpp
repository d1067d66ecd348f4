// KernelErrorTest.cpp: what a user sees when code, signatures or launches are wrong on a real
// device: the whole JIT log, the parameter named, the limit named; nothing launched.
#include "gpu/GpuFixture.h"
#include "kiln/runtime/Module.h"
#include "kiln/runtime/TypedKernel.h"
#include "kiln/test/RuntimePtx.h"

namespace kiln::runtime::test {
namespace {

using KernelErrorTest = GpuTest;

std::string const kPtxDir = std::string(KILN_SOURCE_DIR) + "/tests/runtime/ptx/";

/// PTX whose body holds `errors` lines with an unknown type; its first bad line is line 7.
std::string badPtx(int errors) {
    std::string ptx = ".version 7.0\n.target sm_80\n.address_size 64\n"
                      ".visible .entry kiln_bad(.param .u64 p)\n{\n .reg .f32 %f<4>;\n";
    for (int i = 0; i < errors; ++i)
        ptx += " add.f33 %f1, %f2, %f3;\n";
    ptx += " ret;\n}\n";
    return ptx;
}

TEST_F(KernelErrorTest, APtxSyntaxErrorReturnsTheJitLog) {
    Expected<Kernel> kernel =
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(badPtx(1), "kiln_bad"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::JitFailed);
    std::string const& message = kernel.error().message();
    std::string const head = "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX";
    EXPECT_EQ(message.rfind(head, 0), 0u) << message;
    EXPECT_NE(message.find("kernel 'kiln_bad' (PTX in memory, target sm_80) on " +
                           device()->description().summary() + "; JIT error log ("),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("line 7; error   : Unknown modifier '.f33'"), std::string::npos)
        << message;
}

TEST_F(KernelErrorTest, AJitLogLongerThanAnyFirstBufferComesBackWhole) {
    int const errors = 3000; // about 430 KB of log, several times the first 64 KB buffer
    Expected<Kernel> kernel =
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(badPtx(errors), "kiln_bad"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::JitFailed);
    std::string const& message = kernel.error().message();
    EXPECT_GT(message.size(), std::size_t{256} << 10);
    EXPECT_NE(message.find("line 7; error"), std::string::npos);
    std::string const last = "line " + std::to_string(6 + errors) + "; error";
    EXPECT_NE(message.find(last), std::string::npos)
        << "the log stops before the last bad line; its end: "
        << message.substr(message.size() - 300);
    std::size_t lines = 0;
    for (char c : message)
        lines += c == '\n';
    std::printf("[ gpu      ] JIT error log of %d bad lines: %zu bytes, %zu lines\n", errors,
                message.size(), lines);
}

TEST_F(KernelErrorTest, AWrongTypedSignatureIsRefusedNamingTheParameter) {
    KILN_ASSERT_OK_AND_ASSIGN(KernelManifest manifest,
                              KernelManifest::fromFile(kPtxDir + "saxpy.json"));
    KernelLoaderSpec const spec =
        KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy").withManifest(manifest);
    using WrongAlpha =
        TypedKernel<DevicePointer<float const>, DevicePointer<float>, double, std::uint32_t>;
    Expected<WrongAlpha> kernel = WrongAlpha::load(device(), spec);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::ArgumentMismatch);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is f32 (4 bytes) but the launch passes a "
              "double (8 bytes)");
}

TEST_F(KernelErrorTest, WithoutAManifestTheLoadedLayoutIsChecked) {
    KernelLoaderSpec const spec =
        KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy");
    KILN_ASSERT_OK_AND_ASSIGN(Kernel kernel, Kernel::load(device(), spec));
    if (!kernel.parameterLayout()) {
        GTEST_SKIP() << "the driver (CUDA " << device()->description().driverVersion
                     << ") has no cuFuncGetParamInfo";
    }
    using WrongAlpha =
        TypedKernel<DevicePointer<float const>, DevicePointer<float>, double, std::uint32_t>;
    Expected<WrongAlpha> typed = WrongAlpha::create(kernel);
    ASSERT_FALSE(typed.ok());
    EXPECT_EQ(typed.error().message(),
              "kernel 'kiln_saxpy': parameter 2 is 4 bytes at offset 16 in the loaded code but "
              "the launch passes a double (8 bytes) at offset 16");
    using TooFew = TypedKernel<DevicePointer<float const>, DevicePointer<float>>;
    EXPECT_EQ(TooFew::create(kernel).error().message(),
              "kernel 'kiln_saxpy': the loaded code has 4 parameters but the launch passes 2 "
              "arguments");
}

TEST_F(KernelErrorTest, AManifestThatDisagreesWithTheCodeIsRefusedAtLoad) {
    KernelManifest manifest;
    manifest.entry = "kiln_saxpy";
    manifest.target = "sm_80";
    manifest.parameters = {{"x", ScalarType::F32, ParameterKind::Pointer, 8, 0},
                           {"y", ScalarType::F32, ParameterKind::Pointer, 8, 8},
                           {"alpha", ScalarType::F64, ParameterKind::Value, 8, 16},
                           {"n", ScalarType::U32, ParameterKind::Value, 4, 24}};
    Expected<Kernel> kernel =
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy")
                                   .withManifest(manifest));
    Expected<Kernel> plain = Kernel::load(
        device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy"));
    ASSERT_TRUE(plain.ok());
    if (!plain->parameterLayout())
        GTEST_SKIP() << "the driver has no cuFuncGetParamInfo";
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is 8 bytes at offset 16 in the manifest "
              "but 4 bytes at offset 16 in the loaded code");
}

TEST_F(KernelErrorTest, AManifestForAnotherKernelIsRefused) {
    KILN_ASSERT_OK_AND_ASSIGN(KernelManifest manifest,
                              KernelManifest::fromFile(kPtxDir + "saxpy.json"));
    Expected<Kernel> kernel = Kernel::load(
        device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::vector_add), "kiln_vadd")
                      .withManifest(manifest));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::InvalidManifest);
    EXPECT_EQ(kernel.error().message(), "the manifest describes kernel 'kiln_saxpy' but kernel "
                                        "'kiln_vadd' is asked for from PTX in memory");
}

TEST_F(KernelErrorTest, AMissingEntryListsTheEntriesThereAre) {
    Expected<Kernel> kernel = Kernel::load(
        device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::vector_add), "kiln_vector_add"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_vector_add' is not in PTX in memory; its entries are: kiln_vadd");
}

TEST_F(KernelErrorTest, LaunchesOverTheLimitsAreRefusedBeforeTheDriverSeesThem) {
    KILN_ASSERT_OK_AND_ASSIGN(KernelManifest manifest,
                              KernelManifest::fromFile(kPtxDir + "saxpy.json"));
    using Saxpy =
        TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::uint32_t>;
    KILN_ASSERT_OK_AND_ASSIGN(
        Saxpy saxpy,
        Saxpy::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy")
                                  .withManifest(manifest)));
    KILN_ASSERT_OK_AND_ASSIGN(auto x, DeviceMemory<float>::allocate(device(), 256));
    KILN_ASSERT_OK_AND_ASSIGN(auto y, DeviceMemory<float>::allocate(device(), 256));
    std::string const prefix =
        "launch of 'kiln_saxpy' on " + device()->description().summary() + ": ";

    Stream stream = newStream();
    stream.launch(saxpy, {1}, {128}, 0, x, y, 2.0f, 256u);
    EXPECT_EQ(stream.synchronize().message(),
              prefix + "block (128, 1, 1) differs from the block (256, 1, 1) the manifest says "
                       "the kernel was generated for");
    stream.launch(saxpy, {0}, {256}, 0, x, y, 2.0f, 256u);
    EXPECT_EQ(stream.synchronize().message(), prefix + "grid (0, 1, 1) has a zero extent in x");
    std::size_t const optin =
        static_cast<std::size_t>(device()->description().sharedBytesPerBlockOptin);
    stream.launch(saxpy, {1}, {256}, optin + 1, x, y, 2.0f, 256u);
    EXPECT_EQ(stream.synchronize().message(), prefix + std::to_string(optin + 1) +
                                                  " bytes of dynamic shared memory plus 0 static "
                                                  "is over the device's limit of " +
                                                  std::to_string(optin) +
                                                  " bytes per block (opt-in)");
    // The stream still works after refused launches.
    stream.launch(saxpy, {1}, {256}, 0, x, y, 2.0f, 256u);
    EXPECT_TRUE(stream.synchronize().ok());

    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel plain, Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy),
                                                                           "kiln_saxpy")));
    KILN_ASSERT_OK_AND_ASSIGN(Saxpy any, Saxpy::create(plain));
    stream.launch(any, {1}, {2048}, 0, x, y, 2.0f, 256u);
    EXPECT_EQ(stream.synchronize().message(),
              prefix + "block (2048, 1, 1): x = 2048 is over the device's limit of 1024");
}

TEST_F(KernelErrorTest, RunTimeArgumentsAreCheckedBeforeLaunching) {
    KILN_ASSERT_OK_AND_ASSIGN(KernelManifest manifest,
                              KernelManifest::fromFile(kPtxDir + "saxpy.json"));
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel kernel,
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy")
                                   .withManifest(manifest)));
    KILN_ASSERT_OK_AND_ASSIGN(auto x, DeviceMemory<double>::allocate(device(), 256));
    KILN_ASSERT_OK_AND_ASSIGN(auto y, DeviceMemory<float>::allocate(device(), 256));
    KernelArguments arguments;
    arguments.add(x).add(y).add(2.0f).add(std::uint32_t{256});
    Stream stream = newStream();
    stream.launch(kernel, {{1}, {256}, 0}, arguments);
    EXPECT_EQ(stream.synchronize().message(),
              "kernel 'kiln_saxpy': parameter 0 'x' is a pointer to f32 but the launch passes "
              "DevicePointer<double> (a pointer to f64)");
}

} // namespace
} // namespace kiln::runtime::test
