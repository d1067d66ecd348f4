// TmaTest.cpp: Hopper's copy engine and thread-block clusters through the runtime: a tensor map
// made by the driver from a device address, passed to a kernel by value and checked against its
// manifest; a kernel launched in clusters. Both need compute capability 9.0 and skip below it.
#include "GpuFixture.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/KernelArguments.h"
#include "kiln/test/RuntimePtx.h"

#include <cstdint>
#include <vector>

namespace kiln::runtime::test {
namespace {

class TmaTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (!IsSkipped() && device()->description().computeMajor < 9)
            GTEST_SKIP() << "the copy engine and clusters need sm_90; this is "
                         << device()->description().target;
    }
};

constexpr std::uint32_t kBoxRows = 32, kBoxColumns = 64;

KernelManifest tmaCopyManifest() {
    KernelManifest manifest;
    manifest.entry = "kiln_tma_copy";
    manifest.target = "sm_90";
    manifest.block = Dim3{128, 1, 1};
    manifest.parameters = {
        {"map", ScalarType::F16, ParameterKind::TensorMap, 128, 0,
         TensorMapShape{ScalarType::F16, 2, {kBoxColumns, kBoxRows}, TensorMapSwizzle::None}, "in"},
        {"out", ScalarType::U16, ParameterKind::Pointer, 8, 128},
        {"out_columns", ScalarType::U32, ParameterKind::Value, 4, 136}};
    return manifest;
}

// A 100 x 70 matrix (odd in both directions, rows padded to 144 bytes) copied box by box into a
// 128 x 128 buffer: each element arrives where it was, and what the boxes read past the tensor's
// edges arrives as zero.
TEST_F(TmaTest, BoxesOfATensorMapArriveInSharedMemoryAndZerosPastItsEdges) {
    std::uint64_t const rows = 100, columns = 70, rowElements = 72; // 144-byte rows
    std::vector<std::uint32_t> const words = randomWords(rows * rowElements, 81);
    std::vector<std::uint16_t> in(rows * rowElements);
    for (std::size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<std::uint16_t>(words[i] | 1); // never zero
    KILN_ASSERT_OK_AND_ASSIGN(auto din, DeviceMemory<std::uint16_t>::allocate(device(), in.size()));
    std::uint32_t const gridX = 2, gridY = 4; // 128 columns, 128 rows of boxes
    std::uint32_t const outColumns = gridX * kBoxColumns;
    std::size_t const outCount = std::size_t{outColumns} * gridY * kBoxRows;
    KILN_ASSERT_OK_AND_ASSIGN(auto dout, DeviceMemory<std::uint16_t>::allocate(device(), outCount));

    TensorMapLayout const layout =
        TensorMapLayout::matrix(ScalarType::F16, rows, columns, kBoxRows, kBoxColumns,
                                TensorMapSwizzle::None, rowElements * sizeof(std::uint16_t));
    KILN_ASSERT_OK_AND_ASSIGN(TensorMap map,
                              device()->encodeTensorMap(din.pointer().address(), layout));
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel kernel, Kernel::load(device(), KernelLoaderSpec::ptxInMemory(
                                                  std::string(ptx::tma_copy), "kiln_tma_copy")
                                                  .withManifest(tmaCopyManifest())));
    KernelArguments arguments;
    arguments.add(map).add(dout).add(outColumns);
    std::vector<std::uint16_t> out(outCount, 0xffff);
    Stream stream = newStream();
    stream.copy(din, in).copy(dout, std::span<std::uint16_t const>(out));
    stream.launch(kernel, LaunchConfig{{gridX, gridY, 1}, {128, 1, 1}, 0}, arguments)
        .copy(out, dout);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();

    std::size_t wrong = 0;
    for (std::uint64_t r = 0; r < gridY * kBoxRows; ++r) {
        for (std::uint64_t c = 0; c < outColumns; ++c) {
            std::uint16_t const expected = r < rows && c < columns ? in[r * rowElements + c] : 0;
            wrong += out[r * outColumns + c] != expected;
        }
    }
    EXPECT_EQ(wrong, 0u);
}

TEST_F(TmaTest, ATensorMapOfAnotherBoxIsRefusedAtLaunch) {
    KILN_ASSERT_OK_AND_ASSIGN(auto din, DeviceMemory<std::uint16_t>::allocate(device(), 64 * 64));
    KILN_ASSERT_OK_AND_ASSIGN(
        TensorMap map,
        device()->encodeTensorMap(
            din.pointer().address(),
            TensorMapLayout::matrix(ScalarType::F16, 64, 64, 64, 64, TensorMapSwizzle::None)));
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel kernel, Kernel::load(device(), KernelLoaderSpec::ptxInMemory(
                                                  std::string(ptx::tma_copy), "kiln_tma_copy")
                                                  .withManifest(tmaCopyManifest())));
    KernelArguments arguments;
    arguments.add(map).add(din).add(std::uint32_t{64});
    Stream stream = newStream();
    stream.launch(kernel, LaunchConfig{{1, 1, 1}, {128, 1, 1}, 0}, arguments);
    ASSERT_FALSE(stream.status().ok());
    EXPECT_EQ(stream.status().message(),
              "kernel 'kiln_tma_copy': parameter 0 'map' is a tensor map of in (f16 box [64, 32] "
              "swizzle none) but the launch passes a tensor map (f16 box [64, 64] swizzle none)");
}

TEST_F(TmaTest, TheDriverIsNotAskedForALayoutTheCopyEngineCannotDescribe) {
    KILN_ASSERT_OK_AND_ASSIGN(auto din, DeviceMemory<std::uint16_t>::allocate(device(), 64 * 64));
    Expected<TensorMap> map = device()->encodeTensorMap(
        din.pointer().address() + 2,
        TensorMapLayout::matrix(ScalarType::F16, 64, 64, 64, 64, TensorMapSwizzle::None));
    ASSERT_FALSE(map.ok());
    EXPECT_EQ(map.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(map.error().message().find("is not a multiple of 16 bytes"), std::string::npos);
}

TEST_F(TmaTest, BlocksLaunchedInClustersOfTwoKnowTheirRank) {
    std::uint32_t const blocks = 132;
    KILN_ASSERT_OK_AND_ASSIGN(auto dout, DeviceMemory<std::uint32_t>::allocate(device(), blocks));
    KernelManifest manifest;
    manifest.entry = "kiln_cluster_rank";
    manifest.target = "sm_90";
    manifest.cluster = Dim3{2, 1, 1};
    manifest.parameters = {{"out", ScalarType::U32, ParameterKind::Pointer, 8, 0}};
    KILN_ASSERT_OK_AND_ASSIGN(
        Kernel rank, Kernel::load(device(), KernelLoaderSpec::ptxInMemory(
                                                std::string(ptx::cluster_rank), "kiln_cluster_rank")
                                                .withManifest(manifest)));
    KernelArguments arguments;
    arguments.add(dout);
    std::vector<std::uint32_t> out(blocks);
    Stream stream = newStream();
    stream.launch(rank, LaunchConfig{{blocks, 1, 1}, {32, 1, 1}, 0, {2, 1, 1}}, arguments)
        .copy(out, dout);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    for (std::uint32_t b = 0; b < blocks; ++b)
        ASSERT_EQ(out[b], (b % 2) + 256 * 2 + 65536 * (b / 2)) << "block " << b;

    // The manifest's cluster is part of the kernel's contract.
    Stream plain = newStream();
    plain.launch(rank, LaunchConfig{{blocks, 1, 1}, {32, 1, 1}, 0}, arguments);
    ASSERT_FALSE(plain.status().ok());
    EXPECT_NE(plain.status().message().find("cluster (1, 1, 1) differs from the cluster (2, 1, 1) "
                                            "the manifest says the kernel was generated for"),
              std::string::npos);
}

} // namespace
} // namespace kiln::runtime::test
