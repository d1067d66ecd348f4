// CommandBufferTest.cpp: command buffers (CUDA graphs) and page-locked host memory on the device.
//
// Saxpy launches recorded once and replayed many times compute what as many launches compute,
// with the inputs of each replay copied in from pinned memory as it is when the replay runs and
// the result copied out to pinned memory; pageable memory is read at each replay too; a failed
// recording leaves a stream that runs and synchronizes; pinned copies round-trip. A figure
// compares launching 100 kernels with replaying them.
#include "kiln/runtime/CommandBuffer.h"

#include "gpu/GpuFixture.h"
#include "kiln/runtime/PinnedHostMemory.h"
#include "kiln/runtime/TypedKernel.h"
#include "kiln/test/RuntimePtx.h"

#include <chrono>
#include <cmath>

namespace kiln::runtime::test {
namespace {

using CommandBufferTest = GpuTest;
using Saxpy = TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::uint32_t>;

std::uint32_t blocksFor(std::size_t count) {
    return static_cast<std::uint32_t>((count + 255) / 256);
}

TEST_F(CommandBufferTest, ReplayedSaxpyLaunchesMatchTheCpuReplayAfterReplay) {
    KILN_ASSERT_OK_AND_ASSIGN(
        Saxpy saxpy, Saxpy::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy),
                                                                         "kiln_saxpy")));
    std::size_t const n = (std::size_t{1} << 20) + 37;
    auto const count = static_cast<std::uint32_t>(n);
    std::vector<float> const y0 = randomFloats(n, 51);
    KILN_ASSERT_OK_AND_ASSIGN(auto x, PinnedHostMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto y, PinnedHostMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dx, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dy, DeviceMemory<float>::allocate(device(), n));
    ASSERT_TRUE(dy.write(y0).ok());
    float const alphas[] = {0.5f, -1.25f, 2.0f};

    Stream stream = newStream();
    KILN_ASSERT_OK_AND_ASSIGN(CommandBuffer step, CommandBuffer::record(stream, [&](Stream& s) {
                                  s.copy(dx, x);
                                  for (float const alpha : alphas)
                                      s.launch(saxpy, {blocksFor(n)}, {256}, 0, dx, dy, alpha,
                                               count);
                                  s.copy(y, dy);
                              }));
    ASSERT_TRUE(stream.synchronize().ok());
    EXPECT_EQ(*dy.read(), y0); // recording ran nothing

    // Any stream of the device replays it: every other replay goes to a second one.
    Stream other = newStream();
    std::vector<float> expected = y0;
    for (int replay = 0; replay < 8; ++replay) {
        std::vector<float> const input = randomFloats(n, 100 + replay);
        std::copy(input.begin(), input.end(), x.begin()); // read when the replay's copy runs
        Stream& on = replay % 2 == 0 ? stream : other;
        on.replay(step);
        ASSERT_TRUE(on.synchronize().ok()) << "replay " << replay;
        for (std::size_t i = 0; i < n; ++i) {
            for (float const alpha : alphas)
                expected[i] = std::fma(alpha, input[i], expected[i]);
        }
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i)
            wrong += y[i] != expected[i];
        ASSERT_EQ(wrong, 0u) << "replay " << replay << ": y[0] = " << y[0] << ", expected "
                             << expected[0];
    }
}

TEST_F(CommandBufferTest, PinnedCopiesRoundTrip) {
    std::size_t const count = std::size_t{16} << 20; // 64 MB of words
    std::vector<std::uint32_t> const words = randomWords(count, 61);
    KILN_ASSERT_OK_AND_ASSIGN(auto up, PinnedHostMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(auto down,
                              PinnedHostMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(auto a, DeviceMemory<std::uint32_t>::allocate(device(), count));
    KILN_ASSERT_OK_AND_ASSIGN(auto b, DeviceMemory<std::uint32_t>::allocate(device(), count));
    std::copy(words.begin(), words.end(), up.begin());
    std::fill(down.begin(), down.end(), 0u);
    Stream stream = newStream();
    stream.copy(a, up).copy(b, a).copy(down, b);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    EXPECT_TRUE(std::equal(words.begin(), words.end(), down.begin()));
}

TEST_F(CommandBufferTest, AFailedRecordingLeavesAStreamThatRuns) {
    KILN_ASSERT_OK_AND_ASSIGN(
        Saxpy saxpy, Saxpy::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::saxpy),
                                                                         "kiln_saxpy")));
    std::size_t const n = 4096;
    std::vector<float> const x = randomFloats(n, 71);
    std::vector<float> const y0 = randomFloats(n, 72);
    KILN_ASSERT_OK_AND_ASSIGN(auto dx, DeviceMemory<float>::allocate(device(), n));
    KILN_ASSERT_OK_AND_ASSIGN(auto dy, DeviceMemory<float>::allocate(device(), n));
    ASSERT_TRUE(dx.write(x).ok());
    ASSERT_TRUE(dy.write(y0).ok());
    Stream stream = newStream();

    // Kiln refuses a launch: 2048 threads per block.
    Expected<CommandBuffer> refused = CommandBuffer::record(stream, [&](Stream& s) {
        s.launch(saxpy, {16}, {256}, 0, dx, dy, 1.0f, std::uint32_t{n})
            .launch(saxpy, {16}, {2048}, 0, dx, dy, 1.0f, std::uint32_t{n});
    });
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code(), ErrorCode::LaunchOutOfLimits);
    EXPECT_EQ(refused.error().message().rfind("recording a command buffer: ", 0), 0u)
        << refused.error().message();

    // CUDA refuses a call on this thread that would wait for the recording stream.
    Expected<CommandBuffer> spoiled = CommandBuffer::record(stream, [&](Stream& s) {
        s.launch(saxpy, {16}, {256}, 0, dx, dy, 1.0f, std::uint32_t{n});
        Status const synchronized = device()->synchronize();
        ASSERT_FALSE(synchronized.ok());
        EXPECT_EQ(synchronized.error().message().rfind(
                      "cuCtxSynchronize failed: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 0),
                  0u)
            << synchronized.error().message();
    });
    ASSERT_FALSE(spoiled.ok());
    EXPECT_EQ(spoiled.error().code(), ErrorCode::DriverError);
    EXPECT_EQ(spoiled.error().message().rfind("recording a command buffer: cuStreamEndCapture "
                                              "failed: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                              0),
              0u)
        << spoiled.error().message();

    // Neither ran anything, and the stream runs work again.
    EXPECT_EQ(*dy.read(), y0);
    std::vector<float> result(n);
    stream.launch(saxpy, {16}, {256}, 0, dx, dy, 3.0f, std::uint32_t{n}).copy(result, dy);
    ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(result[i], std::fma(3.0f, x[i], y0[i])) << i;
}

TEST_F(CommandBufferTest, PageableHostMemoryIsReadAtEachReplayToo) {
    std::size_t const n = 1 << 20;
    std::vector<float> host = randomFloats(n, 81);
    std::vector<float> back(n, 0.0f);
    KILN_ASSERT_OK_AND_ASSIGN(auto d, DeviceMemory<float>::allocate(device(), n));
    Stream stream = newStream();
    KILN_ASSERT_OK_AND_ASSIGN(
        CommandBuffer roundTrip,
        CommandBuffer::record(stream, [&](Stream& s) { s.copy(d, host).copy(back, d); }));
    EXPECT_EQ(back, std::vector<float>(n, 0.0f));
    for (float const first : {7.0f, 8.0f}) {
        host[0] = first;
        stream.replay(roundTrip);
        ASSERT_TRUE(stream.synchronize().ok()) << stream.status().message();
        EXPECT_EQ(back, host);
    }
}

TEST_F(CommandBufferTest, ReplayingLaunchesTakesLessTimeThanLaunchingThem) {
    using Empty = TypedKernel<>;
    KILN_ASSERT_OK_AND_ASSIGN(
        Empty empty, Empty::load(device(), KernelLoaderSpec::ptxInMemory(std::string(ptx::empty),
                                                                         "kiln_empty")));
    int const launches = 100;
    Stream stream = newStream();
    KILN_ASSERT_OK_AND_ASSIGN(CommandBuffer hundred, CommandBuffer::record(stream, [&](Stream& s) {
                                  for (int i = 0; i < launches; ++i)
                                      s.launch(empty, {1}, {32}, 0);
                              }));
    auto timeOf = [&](auto&& submit) {
        double best = 1e30;
        for (int trial = 0; trial < 20; ++trial) {
            auto const start = std::chrono::steady_clock::now();
            submit();
            Status const done = stream.synchronize();
            double const microseconds =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count();
            EXPECT_TRUE(done.ok()) << done.message();
            best = std::min(best, microseconds);
        }
        return best;
    };
    double const launched = timeOf([&] {
        for (int i = 0; i < launches; ++i)
            stream.launch(empty, {1}, {32}, 0);
    });
    double const replayed = timeOf([&] { stream.replay(hundred); });
    std::printf("[ gpu      ] %d empty kernels, submitted and waited for: %.1f us launched one by "
                "one, %.1f us replayed as one command buffer\n",
                launches, launched, replayed);
    EXPECT_LT(replayed, launched); // about 85 us against 370 to 410 us on an H100, driver 580
}

} // namespace
} // namespace kiln::runtime::test
