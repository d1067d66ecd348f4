// KernelRunTest.cpp: hand-written PTX kernels run on random inputs and compared with the CPU.
#include "gpu/GpuFixture.h"
#include "kiln/runtime/Module.h"
#include "kiln/runtime/TypedKernel.h"
#include "kiln/test/RuntimePtx.h"

#include <bit>
#include <cmath>

namespace kiln::runtime::test {
namespace {

using KernelRunTest = GpuTest;

std::string const kPtxDir = std::string(KILN_SOURCE_DIR) + "/tests/runtime/ptx/";
constexpr std::uint32_t kPoison = 0x7fc0dead; // a NaN: any element left unwritten shows

using VectorAdd = TypedKernel<DevicePointer<float const>, DevicePointer<float const>,
                              DevicePointer<float>, std::uint32_t>;
using Saxpy = TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::uint32_t>;

std::uint32_t blocksFor(std::size_t count, std::uint32_t block) {
    return static_cast<std::uint32_t>((count + block - 1) / block);
}

TEST_F(KernelRunTest, VectorAddFromEmbeddedPtxMatchesTheCpu) {
    KILN_ASSERT_OK_AND_ASSIGN(
        VectorAdd add, VectorAdd::load(device(), KernelLoaderSpec::ptxInMemory(
                                                     std::string(ptx::vector_add), "kiln_vadd")));
    std::size_t const n = (1u << 20) + 37; // not a multiple of the block
    std::vector<float> const a = randomFloats(n, 11);
    std::vector<float> const b = randomFloats(n, 12);
    KILN_ASSERT_OK_AND_ASSIGN(auto da, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto db, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dc, DeviceMemory<float>::allocate(device(), n));
    std::vector<float> c(n, 0.0f);
    Stream stream = newStream();
    stream.copy(da, a)
        .copy(db, b)
        .fill(dc, std::bit_cast<float>(kPoison))
        .launch(add, {blocksFor(n, 256)}, {256}, 0, da, db, dc, static_cast<std::uint32_t>(n))
        .copy(c, dc);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        wrong += c[i] != a[i] + b[i];
    EXPECT_EQ(wrong, 0u) << "first: c[0] = " << c[0] << ", expected " << a[0] + b[0];
}

TEST_F(KernelRunTest, SaxpyFromDiskWithItsManifestMatchesTheCpu) {
    KILN_ASSERT_OK_AND_ASSIGN(KernelManifest manifest,
                              KernelManifest::fromFile(kPtxDir + "saxpy.json"));
    KernelLoaderSpec const spec =
        KernelLoaderSpec::ptxOnDisk(kPtxDir + "saxpy.ptx", "kiln_saxpy").withManifest(manifest);
    KILN_ASSERT_OK_AND_ASSIGN(Saxpy saxpy, Saxpy::load(device(), spec));
    if (saxpy.kernel().parameterLayout()) { // the driver's own view agrees with the manifest
        EXPECT_EQ(*saxpy.kernel().parameterLayout(),
                  (std::vector<ParameterLayout>{{0, 8}, {8, 8}, {16, 4}, {20, 4}}));
    }
    std::size_t const n = 3 * 256 * 1000 + 5;
    float const alpha = 1.7f;
    std::vector<float> const x = randomFloats(n, 21);
    std::vector<float> y = randomFloats(n, 22);
    KILN_ASSERT_OK_AND_ASSIGN(auto dx, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dy, DeviceMemory<float>::allocate(device(), n));
    std::vector<float> result(n);
    Stream stream = newStream();
    stream.copy(dx, x).copy(dy, y).launch(saxpy, {blocksFor(n, 256)}, {256}, 0, dx, dy, alpha,
                                          static_cast<std::uint32_t>(n));
    stream.copy(result, dy);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        wrong += result[i] != std::fma(alpha, x[i], y[i]);
    EXPECT_EQ(wrong, 0u);
}

TEST_F(KernelRunTest, RunTimeArgumentsLaunchTheSameKernel) {
    KILN_ASSERT_OK_AND_ASSIGN(KernelManifest manifest,
                              KernelManifest::fromFile(kPtxDir + "saxpy.json"));
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel kernel,
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy), "kiln_saxpy")
                                   .withManifest(manifest)));
    std::size_t const n = 4096;
    std::vector<float> const x = randomFloats(n, 31);
    std::vector<float> const y = randomFloats(n, 32);
    KILN_ASSERT_OK_AND_ASSIGN(auto dx, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dy, DeviceMemory<float>::allocate(device(), n));
    KernelArguments arguments;
    arguments.add(DevicePointer<float const>(dx)).add(dy).add(-0.5f).add(std::uint32_t{n});
    std::vector<float> result(n);
    Stream stream = newStream();
    stream.copy(dx, x).copy(dy, y).launch(kernel, {{16}, {256}, 0}, arguments).copy(result, dy);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(result[i], std::fma(-0.5f, x[i], y[i])) << i;
}

TEST_F(KernelRunTest, CopyKernelCopiesEveryVectorForAnyCountAndGrid) {
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel copy,
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::copy), "kiln_copy")));
    using Copy = TypedKernel<DevicePointer<std::uint32_t const>, DevicePointer<std::uint32_t>,
                             std::uint64_t>;
    KILN_ASSERT_OK_AND_ASSIGN(Copy typed, Copy::create(copy));
    for (std::uint64_t const vectors : {std::uint64_t{1}, std::uint64_t{1000003}}) {
        for (std::uint32_t const grid : {1u, 7u, 264u}) {
            std::vector<std::uint32_t> const words = randomWords(vectors * 4, grid);
            KILN_ASSERT_OK_AND_ASSIGN(
                auto src, DeviceMemory<std::uint32_t>::allocate(device(), words.size()));
            KILN_ASSERT_OK_AND_ASSIGN(
                auto dst, DeviceMemory<std::uint32_t>::allocate(device(), words.size()));
            std::vector<std::uint32_t> back(words.size());
            Stream stream = newStream();
            stream.copy(src, words)
                .fill(dst, kPoison)
                .launch(typed, {grid}, {256}, 0, src, dst, vectors);
            stream.copy(back, dst);
            ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
            ASSERT_EQ(back, words) << vectors << " vectors, grid " << grid;
        }
    }
}

TEST_F(KernelRunTest, MoreThan48KBOfSharedMemoryRaisesTheLimitFirst) {
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel reverse,
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::reverse_shared),
                                                             "kiln_reverse_shared")));
    EXPECT_LE(reverse.attributes().maxDynamicSharedBytes, 49152u);
    using Reverse = TypedKernel<DevicePointer<float const>, DevicePointer<float>, std::uint32_t>;
    KILN_ASSERT_OK_AND_ASSIGN(Reverse typed, Reverse::create(reverse));
    std::uint32_t const chunk = 25600; // 100 KB of floats per block
    std::uint32_t const blocks = 300;
    std::size_t const n = std::size_t{chunk} * blocks;
    std::vector<float> const in = randomFloats(n, 41);
    KILN_ASSERT_OK_AND_ASSIGN(auto din, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dout, DeviceMemory<float>::allocate(device(), n));
    std::vector<float> out(n);
    Stream stream = newStream();
    stream.copy(din, in).fill(dout, std::bit_cast<float>(kPoison));
    stream.launch(typed, {blocks}, {1024}, chunk * sizeof(float), din, dout, chunk).copy(out, dout);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    EXPECT_GE(reverse.attributes().maxDynamicSharedBytes, chunk * sizeof(float));
    std::size_t wrong = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
        for (std::size_t i = 0; i < chunk; ++i) {
            wrong += out[b * chunk + i] != in[b * chunk + chunk - 1 - i];
        }
    }
    EXPECT_EQ(wrong, 0u);
}

TEST_F(KernelRunTest, AManifestAskingForMoreThan48KBRaisesTheLimitAtLoad) {
    KernelManifest manifest;
    manifest.entry = "kiln_reverse_shared";
    manifest.target = "sm_80";
    manifest.sharedBytes = 80 * 1024;
    manifest.parameters = {{"in", ScalarType::F32, ParameterKind::Pointer, 8, 0},
                           {"out", ScalarType::F32, ParameterKind::Pointer, 8, 8},
                           {"n", ScalarType::U32, ParameterKind::Value, 4, 16}};
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel reverse,
        Kernel::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::reverse_shared),
                                                             "kiln_reverse_shared")
                                   .withManifest(manifest)));
    EXPECT_EQ(reverse.attributes().maxDynamicSharedBytes, 80u * 1024);
}

TEST_F(KernelRunTest, CubinFromDiskRuns) {
#ifdef KILN_TEST_CUBIN_SM90
    if (device()->description().computeMajor != 9 || device()->description().computeMinor != 0) {
        GTEST_SKIP() << "the test cubin is for sm_90; this is " << device()->description().target;
    }
    KILN_ASSERT_OK_AND_ASSIGN(
        VectorAdd add, VectorAdd::load(device(), KernelLoaderSpec::cubinOnDisk(KILN_TEST_CUBIN_SM90,
                                                                               "kiln_vadd")));
    std::size_t const n = 1000;
    std::vector<float> const a = randomFloats(n, 51);
    std::vector<float> const b = randomFloats(n, 52);
    KILN_ASSERT_OK_AND_ASSIGN(auto da, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto db, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dc, DeviceMemory<float>::allocate(device(), n));
    std::vector<float> c(n);
    Stream stream = newStream();
    stream.copy(da, a).copy(db, b).launch(add, {4}, {256}, 0, da, db, dc, std::uint32_t{n});
    stream.copy(c, dc);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], a[i] + b[i]) << i;
#else
    GTEST_SKIP() << "ptxas was not found at configure time, so there is no test cubin";
#endif
}

} // namespace
} // namespace kiln::runtime::test
