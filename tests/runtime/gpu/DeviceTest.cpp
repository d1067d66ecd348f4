// DeviceTest.cpp: the real device's description, memory, streams and events.
#include "gpu/GpuFixture.h"
#include "kiln/runtime/ArchOverlay.h"
#include "kiln/runtime/Event.h"
#if KILN_HAVE_CUDA
#include "kiln/runtime/cuda/CudaDriver.h"
#endif

#include <cstring>
#include <thread>

namespace kiln::runtime::test {
namespace {

using DeviceTest = GpuTest;

TEST_F(DeviceTest, DescribesTheDevice) {
    DeviceDescription const& d = device()->description();
    EXPECT_EQ(d.platform, "cuda");
    EXPECT_FALSE(d.name.empty());
    // Compute capability 9.0 is sm_90a: its architecture-specific instructions run there.
    EXPECT_EQ(d.target, "sm_" + std::to_string(d.computeMajor) + std::to_string(d.computeMinor) +
                            (d.computeMajor == 9 && d.computeMinor == 0 ? "a" : ""));
    EXPECT_GT(d.multiprocessorCount, 0);
    EXPECT_EQ(d.warpSize, 32);
    EXPECT_GT(d.l2Bytes, 0);
    EXPECT_GT(d.totalMemoryBytes, std::int64_t{1} << 30);
    EXPECT_EQ(d.maxThreadsPerBlock, 1024);
    EXPECT_EQ(d.sharedBytesPerBlock, 49152);
    EXPECT_GT(d.sharedBytesPerBlockOptin, d.sharedBytesPerBlock);
    EXPECT_GE(d.sharedBytesPerMultiprocessor, d.sharedBytesPerBlockOptin);
    EXPECT_GE(d.driverVersion, 11030);
    std::printf("[ gpu      ] %s: %d SMs, L2 %lld bytes, shared %lld/%lld bytes per block, "
                "clock %lld kHz, memory %lld kHz x %d bits (%.0f GB/s peak)\n",
                d.summary().c_str(), d.multiprocessorCount, static_cast<long long>(d.l2Bytes),
                static_cast<long long>(d.sharedBytesPerBlock),
                static_cast<long long>(d.sharedBytesPerBlockOptin),
                static_cast<long long>(d.clockKHz), static_cast<long long>(d.memoryClockKHz),
                d.memoryBusWidthBits, d.peakMemoryBandwidthGBps());
}

TEST_F(DeviceTest, OverlaysItsFactsOnTheArchitectureDatabase) {
    DeviceDescription const& d = device()->description();
    Expected<arch::Arch> live = liveArch(d);
    if (!live.ok())
        GTEST_SKIP() << live.error().message(); // a target the database lacks
    EXPECT_EQ(live->fact("multiprocessor_count"), d.multiprocessorCount);
    EXPECT_EQ(live->fact("l2_bytes"), d.l2Bytes);
    EXPECT_EQ(live->fact("shared_bytes"), d.sharedBytesPerBlockOptin);
    EXPECT_EQ(live->findFact("l2_bytes")->origin, arch::FactOrigin::Device);
}

TEST_F(DeviceTest, MemoryRoundTripsSynchronouslyAndOnAStream) {
    std::vector<std::uint32_t> const words = randomWords(1 << 20, 1);
    KILN_ASSERT_OK_AND_ASSIGN(auto a,
                              DeviceMemory<std::uint32_t>::allocate(device(), words.size()));
    KILN_ASSERT_OK_AND_ASSIGN(auto b,
                              DeviceMemory<std::uint32_t>::allocate(device(), words.size()));
    ASSERT_TRUE(a.write(words).ok());
    Stream stream = newStream();
    std::vector<std::uint32_t> back(words.size(), 0);
    ASSERT_TRUE(stream.fill(b, 0xdeadbeefu).copy(b, a).copy(back, b).synchronize().ok());
    EXPECT_EQ(back, words);
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::uint32_t> read, a.read());
    EXPECT_EQ(read, words);
    ASSERT_TRUE(stream.fill(b, 0x7fc00001u).synchronize().ok());
    KILN_ASSERT_OK_AND_ASSIGN(read, b.read());
    EXPECT_EQ(read, std::vector<std::uint32_t>(words.size(), 0x7fc00001u));
}

TEST_F(DeviceTest, EmptyBuffersNeedNoAllocation) {
    KILN_ASSERT_OK_AND_ASSIGN(auto empty, DeviceMemory<float>::allocate(device(), 0));
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(empty.pointer().address(), 0u);
    EXPECT_TRUE(empty.write({}).ok());
}

TEST_F(DeviceTest, AStreamKeepsItsFirstErrorAndSkipsTheRest) {
    KILN_ASSERT_OK_AND_ASSIGN(auto a, DeviceMemory<float>::allocate(device(), 16));
    std::vector<float> tooShort(8, 1.0f);
    std::vector<float> host(16, 0.0f);
    Stream stream = newStream();
    stream.copy(a, tooShort).copy(host, a);
    ASSERT_FALSE(stream.status().ok());
    EXPECT_EQ(stream.status().error().message(),
              "Stream copy to device: 8 elements where the buffer has 16");
    Status first = stream.synchronize();
    EXPECT_EQ(first.message(), "Stream copy to device: 8 elements where the buffer has 16");
    EXPECT_TRUE(stream.synchronize().ok()); // cleared
}

TEST_F(DeviceTest, EventsTimeDeviceWork) {
    std::size_t const count = std::size_t{64} << 20; // 256 MB of words
    KILN_ASSERT_OK_AND_ASSIGN(auto a, DeviceMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(auto b, DeviceMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(Event start, Event::create(device()));
    KILN_ASSERT_OK_AND_ASSIGN(Event stop, Event::create(device()));
    Stream stream = newStream();
    stream.fill(a, 0x12345678u).record(start).copy(b, a).record(stop);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    ASSERT_TRUE(stop.synchronize().ok());
    KILN_ASSERT_OK_AND_ASSIGN(float milliseconds, stop.millisecondsSince(start));
    EXPECT_GT(milliseconds, 0.0f);
    double const terabytesPerSecond = 2.0 * a.bytes() / (milliseconds * 1e-3) / 1e12;
    EXPECT_LT(terabytesPerSecond, 20.0); // a copy faster than any HBM means a broken timer
    std::printf("[ gpu      ] 256 MB copy: %.3f ms, %.2f TB/s read + written\n", milliseconds,
                terabytesPerSecond);
}

TEST_F(DeviceTest, AStreamWaitsForAnEventOfAnother) {
    std::size_t const count = std::size_t{16} << 20;
    std::vector<std::uint32_t> const words = randomWords(count, 7);
    KILN_ASSERT_OK_AND_ASSIGN(auto a, DeviceMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(auto b, DeviceMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(Event uploaded, Event::create(device()));
    Stream first = newStream();
    Stream second = newStream();
    std::vector<std::uint32_t> back(count, 0);
    first.copy(a, words).record(uploaded);
    second.waitFor(uploaded).copy(b, a).copy(back, b);
    ASSERT_TRUE(second.synchronize().ok()) << second.status().message();
    ASSERT_TRUE(first.synchronize().ok()) << first.status().message();
    EXPECT_EQ(back, words);
}

#if KILN_HAVE_CUDA
TEST_F(DeviceTest, CallsLeaveTheThreadsCurrentContextAsTheyFoundIt) {
    Expected<std::shared_ptr<cuda::CudaDriver>> driver = cuda::CudaDriver::load();
    ASSERT_TRUE(driver.ok()) << driver.error().message();
    cuda::CudaFunctions const& api = (*driver)->api();
    // A new thread has no current context; Kiln pushes the device's around each call and pops
    // it again, so other code on the thread (another framework) sees what it had.
    std::thread([&] {
        CUcontext before = reinterpret_cast<CUcontext>(1);
        ASSERT_EQ(api.cuCtxGetCurrent(&before), CUDA_SUCCESS);
        ASSERT_EQ(before, nullptr);
        Expected<DeviceMemory<float>> memory = DeviceMemory<float>::allocate(device(), 1024);
        ASSERT_TRUE(memory.ok()) << memory.error().message();
        std::vector<float> const values = randomFloats(1024, 9);
        ASSERT_TRUE(memory->write(values).ok());
        EXPECT_EQ(*memory->read(), values);
        CUcontext after = reinterpret_cast<CUcontext>(1);
        ASSERT_EQ(api.cuCtxGetCurrent(&after), CUDA_SUCCESS);
        EXPECT_EQ(after, nullptr);
    }).join();
}
#endif

TEST_F(DeviceTest, AnotherOrdinalIsNoDevice) {
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda");
    ASSERT_TRUE(platform.ok());
    int const count = (*platform)->deviceCount();
    Expected<std::shared_ptr<Device>> none = (*platform)->device(count);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code(), ErrorCode::NoDevice);
    EXPECT_EQ(none.error().message(), "no CUDA device " + std::to_string(count) +
                                          ": the driver sees " + std::to_string(count) +
                                          " device(s)");
}

} // namespace
} // namespace kiln::runtime::test
