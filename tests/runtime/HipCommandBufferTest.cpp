// HipCommandBufferTest.cpp: command buffers and page-locked host memory on the HIP platform, over
// the fake libamdhip64 (FakeHip.cpp), which records a capturing stream's work into a graph and
// does it at each replay.
//
// A recording runs nothing; each replay runs all of it and reads the pinned host memory as it is
// then. Every way a recording can fail (a Stream call, a call HIP cannot record, a synchronize,
// an exception, the instantiation) ends the capture and leaves the stream as it was.
#include "FakeHipFixture.h"
#include "kiln/runtime/CommandBuffer.h"
#include "kiln/runtime/PinnedHostMemory.h"
#include "kiln/runtime/Stream.h"

#include <cstring>
#include <gtest/gtest.h>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

namespace kiln::runtime {
namespace {

std::string const kDevice0 = "device 0 'AMD Instinct MI300X' (gfx942)";

/// alpha, the third of kiln_axpy's arguments, as a launch packed it (at offset 16).
float alphaOf(test::FakeHipLaunch const& launch) {
    float alpha = 0;
    std::memcpy(&alpha, launch.arguments.data() + 16, sizeof alpha);
    return alpha;
}

TEST_F(FakeHip, PinnedHostMemoryComesFromHipHostMallocAndIsAHostSpan) {
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    {
        Expected<PinnedHostMemory<float>> input = PinnedHostMemory<float>::allocate(device, 4);
        Expected<PinnedHostMemory<float>> output = PinnedHostMemory<float>::allocate(device, 4);
        ASSERT_TRUE(input.ok() && output.ok());
        EXPECT_EQ(fake().liveHostAllocations, 2);
        EXPECT_EQ(fake().hostMallocFlags, (std::vector<unsigned>{1u, 1u})); // hipHostMallocPortable
        EXPECT_EQ(input->size(), 4u);
        EXPECT_EQ(input->bytes(), 16u);
        std::span<float> view = *input;
        EXPECT_EQ(view.data(), input->data());
        EXPECT_EQ(view.size(), 4u);
        std::iota(input->begin(), input->end(), 1.0f);

        // Stream::copy takes it where it takes a host span, both ways.
        Expected<DeviceMemory<float>> x = DeviceMemory<float>::allocate(device, 4);
        Expected<Stream> stream = Stream::create(device);
        ASSERT_TRUE(x.ok() && stream.ok());
        stream->copy(*x, *input).copy(*output, *x);
        ASSERT_TRUE(stream->synchronize().ok());
        EXPECT_EQ(std::vector<float>(output->begin(), output->end()),
                  (std::vector<float>{1, 2, 3, 4}));

        // Moving hands the memory over: it is freed once.
        PinnedHostMemory<float> moved = std::move(*output);
        EXPECT_TRUE(output->empty()); // NOLINT(bugprone-use-after-move): what a move leaves
        EXPECT_EQ(moved[3], 4.0f);
        // No elements, no allocation.
        Expected<PinnedHostMemory<float>> none = PinnedHostMemory<float>::allocate(device, 0);
        ASSERT_TRUE(none.ok());
        EXPECT_TRUE(none->empty());
        EXPECT_EQ(fake().count("hipHostMalloc"), 2);
    }
    EXPECT_EQ(fake().liveHostAllocations, 0);
    EXPECT_EQ(fake().count("hipHostFree"), 2);
}

TEST_F(FakeHip, PinnedHostMemoryHipRefusesIsAnError) {
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    fake().hostMallocResult = 2; // hipErrorOutOfMemory
    Expected<PinnedHostMemory<float>> pinned = PinnedHostMemory<float>::allocate(device, 1 << 20);
    ASSERT_FALSE(pinned.ok());
    EXPECT_EQ(pinned.error().code(), ErrorCode::DriverError);
    EXPECT_EQ(pinned.error().message(),
              "hipHostMalloc failed: hipErrorOutOfMemory (out of memory): 4194304 bytes of "
              "page-locked host memory for " +
                  kDevice0);

    Expected<PinnedHostMemory<float>> nowhere = PinnedHostMemory<float>::allocate(nullptr, 4);
    ASSERT_FALSE(nowhere.ok());
    EXPECT_EQ(nowhere.error().message(), "PinnedHostMemory::allocate: no device");
}

TEST_F(FakeHip, ACommandBufferRecordsTwoLaunchesAndACopyAndEachReplayRunsThem) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    using Axpy = TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::int64_t>;
    Expected<Axpy> kernel = Axpy::load(
        device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy").withManifest(manifest()));
    ASSERT_TRUE(kernel.ok()) << kernel.error().message();
    Expected<DeviceMemory<float>> x = DeviceMemory<float>::allocate(device, 4);
    Expected<DeviceMemory<float>> y = DeviceMemory<float>::allocate(device, 4);
    Expected<PinnedHostMemory<float>> input = PinnedHostMemory<float>::allocate(device, 4);
    Expected<Stream> stream = Stream::create(device);
    ASSERT_TRUE(x.ok() && y.ok() && input.ok() && stream.ok());
    std::vector<float> const zeros(4, 0.0f);
    ASSERT_TRUE(x->write(zeros).ok());
    std::iota(input->begin(), input->end(), 1.0f);

    {
        Expected<CommandBuffer> step = CommandBuffer::record(*stream, [&](Stream& s) {
            s.copy(*x, *input)
                .launch(*kernel, {4}, {256}, 0, *x, *y, 2.0f, std::int64_t{4})
                .launch(*kernel, {4}, {256}, 0, *x, *y, 3.0f, std::int64_t{4});
        });
        ASSERT_TRUE(step.ok()) << step.error().message();
        // Recorded in thread-local capture mode, and nothing ran.
        EXPECT_EQ(fake().captureModes, (std::vector<int>{1}));
        EXPECT_EQ(fake().capturingStreams, 0);
        EXPECT_TRUE(fake().launches.empty());
        EXPECT_EQ(*x->read(), zeros);

        stream->replay(*step);
        ASSERT_TRUE(stream->synchronize().ok());
        EXPECT_EQ(*x->read(), (std::vector<float>{1, 2, 3, 4}));
        ASSERT_EQ(fake().launches.size(), 2u);
        EXPECT_TRUE(fake().launches[0].replayed);
        EXPECT_EQ(alphaOf(fake().launches[0]), 2.0f);
        EXPECT_EQ(alphaOf(fake().launches[1]), 3.0f);

        // The second replay reads the pinned memory as it is when the stream gets to the copy.
        std::iota(input->begin(), input->end(), 10.0f);
        stream->replay(*step);
        ASSERT_TRUE(stream->synchronize().ok());
        EXPECT_EQ(*x->read(), (std::vector<float>{10, 11, 12, 13}));
        ASSERT_EQ(fake().launches.size(), 4u);
        EXPECT_TRUE(fake().launches[3].replayed);
        EXPECT_EQ(alphaOf(fake().launches[3]), 3.0f);
        EXPECT_EQ(fake().replays, (std::vector<int>{3, 3}));
        EXPECT_EQ(fake().liveGraphs, 1);
        EXPECT_EQ(fake().liveGraphExecs, 1);
    }
    // The command buffer destroyed its executable graph and its graph.
    EXPECT_EQ(fake().liveGraphs, 0);
    EXPECT_EQ(fake().liveGraphExecs, 0);
}

/// A device of the fake with a stream and a buffer of four floats holding 0, 0, 0, 0.
class FakeHipRecording : public FakeHip {
protected:
    void SetUp() override {
        FakeHip::SetUp();
        device_ = openDevice();
        ASSERT_TRUE(device_);
        Expected<Stream> stream = Stream::create(device_);
        Expected<DeviceMemory<float>> x = DeviceMemory<float>::allocate(device_, 4);
        ASSERT_TRUE(stream.ok() && x.ok());
        stream_.emplace(std::move(stream).value());
        x_ = std::move(x).value();
        ASSERT_TRUE(x_.write(std::vector<float>(4, 0.0f)).ok());
    }

    /// The stream records nothing any more, holds no failure, and runs work at once.
    void expectTheStreamIsAsBefore() {
        EXPECT_EQ(fake().capturingStreams, 0);
        EXPECT_EQ(fake().count("hipStreamEndCapture"), fake().count("hipStreamBeginCapture"));
        EXPECT_EQ(fake().liveGraphs, 0);
        EXPECT_EQ(fake().liveGraphExecs, 0);
        EXPECT_TRUE(stream_->status().ok()) << stream_->status().message();
        EXPECT_EQ(*x_.read(), std::vector<float>(4, 0.0f)); // what was recorded never ran
        stream_->fill(x_, 9.0f);
        ASSERT_TRUE(stream_->synchronize().ok());
        EXPECT_EQ(*x_.read(), std::vector<float>(4, 9.0f));
    }

    std::shared_ptr<Device> device_;
    std::optional<Stream> stream_;
    DeviceMemory<float> x_;
};

TEST_F(FakeHipRecording, AFailedStreamCallEndsTheRecording) {
    std::vector<float> const three = {1, 2, 3};
    Expected<CommandBuffer> buffer = CommandBuffer::record(*stream_, [&](Stream& s) {
        s.fill(x_, 1.0f).copy(x_, three).fill(x_,
                                              2.0f); // the copy fails; the fill after is skipped
    });
    ASSERT_FALSE(buffer.ok());
    EXPECT_EQ(buffer.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(buffer.error().message(),
              "recording a command buffer: Stream copy to device: 3 elements where the buffer "
              "has 4");
    EXPECT_EQ(fake().count("hipMemsetD32Async"), 1);
    EXPECT_EQ(fake().count("hipGraphInstantiate"), 0); // thrown away, not instantiated
    expectTheStreamIsAsBefore();
}

TEST_F(FakeHipRecording, ACallHipCannotRecordSpoilsTheRecordingAndEndsIt) {
    Expected<CommandBuffer> buffer = CommandBuffer::record(*stream_, [&](Stream& s) {
        s.fill(x_, 1.0f);
        Status const written = x_.write(std::vector<float>(4, 5.0f)); // synchronous: not recordable
        ASSERT_FALSE(written.ok());
        EXPECT_EQ(written.error().message(),
                  "hipMemcpyHtoD failed: hipErrorStreamCaptureUnsupported (operation not "
                  "permitted when stream is capturing): 16 bytes to " +
                      kDevice0);
    });
    ASSERT_FALSE(buffer.ok());
    EXPECT_EQ(buffer.error().code(), ErrorCode::DriverError);
    EXPECT_EQ(buffer.error().message(),
              "recording a command buffer: hipStreamEndCapture failed: "
              "hipErrorStreamCaptureInvalidated (operation failed due to a previous error during "
              "capture): a call made while recording that HIP refuses then (an allocation, a "
              "synchronous copy, a synchronize) spoiled it on " +
                  kDevice0);
    expectTheStreamIsAsBefore();
}

TEST_F(FakeHipRecording, SynchronizeWhileRecordingIsRefused) {
    Expected<CommandBuffer> buffer = CommandBuffer::record(*stream_, [&](Stream& s) {
        s.fill(x_, 1.0f);
        Status const synchronized = s.synchronize();
        EXPECT_EQ(synchronized.error().code(), ErrorCode::InvalidArgument);
    });
    ASSERT_FALSE(buffer.ok());
    EXPECT_EQ(buffer.error().message(),
              "recording a command buffer: Stream::synchronize while the stream records a command "
              "buffer, whose work runs only when it is replayed (replay it, then synchronize)");
    EXPECT_EQ(fake().count("hipStreamSynchronize"), 0); // refused before HIP saw it
    expectTheStreamIsAsBefore();
}

TEST_F(FakeHipRecording, AnExceptionFromTheCommandsEndsTheRecording) {
    auto giveUp = [&](Stream& s) {
        s.fill(x_, 1.0f);
        throw std::runtime_error("the commands gave up");
    };
    EXPECT_THROW((void)CommandBuffer::record(*stream_, giveUp), std::runtime_error);
    EXPECT_EQ(fake().count("hipGraphInstantiate"), 0);
    expectTheStreamIsAsBefore();
}

TEST_F(FakeHipRecording, AFailedInstantiationCarriesHipsLog) {
    fake().graphInstantiateResult = 1; // hipErrorInvalidValue
    fake().graphInstantiateLog = "node 0: no kernel";
    Expected<CommandBuffer> buffer =
        CommandBuffer::record(*stream_, [&](Stream& s) { s.fill(x_, 1.0f); });
    ASSERT_FALSE(buffer.ok());
    EXPECT_EQ(buffer.error().code(), ErrorCode::DriverError);
    EXPECT_EQ(buffer.error().message(),
              "recording a command buffer: hipGraphInstantiate failed: hipErrorInvalidValue "
              "(invalid argument): the recorded graph on " +
                  kDevice0 + " (HIP's log: node 0: no kernel)");
    expectTheStreamIsAsBefore();
}

TEST_F(FakeHipRecording, AStreamHoldingAFailureDoesNotRecord) {
    stream_->copy(x_, std::vector<float>{1, 2, 3});
    Expected<CommandBuffer> buffer =
        CommandBuffer::record(*stream_, [&](Stream& s) { s.fill(x_, 1.0f); });
    ASSERT_FALSE(buffer.ok());
    EXPECT_EQ(buffer.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(buffer.error().message(),
              "recording a command buffer: the stream holds a failure, which synchronize() "
              "returns and clears: Stream copy to device: 3 elements where the buffer has 4");
    EXPECT_EQ(fake().count("hipStreamBeginCapture"), 0);
    EXPECT_FALSE(stream_->synchronize().ok()); // the failure is still the stream's
    expectTheStreamIsAsBefore();
}

TEST_F(FakeHipRecording, RecordingsDoNotNest) {
    Expected<CommandBuffer> buffer = CommandBuffer::record(*stream_, [&](Stream& s) {
        Expected<CommandBuffer> inner = CommandBuffer::record(s, [](Stream&) {});
        ASSERT_FALSE(inner.ok());
        EXPECT_EQ(inner.error().message(),
                  "recording a command buffer: the stream is recording one already (on " +
                      kDevice0 + ")");
    });
    ASSERT_TRUE(buffer.ok()) << buffer.error().message(); // an empty one
    EXPECT_EQ(fake().count("hipStreamBeginCapture"), 1);
}

TEST_F(FakeHipRecording, ACommandBufferReplaysOnlyOnItsDevice) {
    fake().deviceCount = 2;
    std::shared_ptr<Device> other = openDevice(1);
    ASSERT_TRUE(other);
    Expected<Stream> otherStream = Stream::create(other);
    ASSERT_TRUE(otherStream.ok());
    Expected<CommandBuffer> buffer =
        CommandBuffer::record(*stream_, [&](Stream& s) { s.fill(x_, 1.0f); });
    ASSERT_TRUE(buffer.ok()) << buffer.error().message();
    otherStream->replay(*buffer);
    Status const replayed = otherStream->synchronize();
    ASSERT_FALSE(replayed.ok());
    EXPECT_EQ(replayed.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(replayed.error().message(),
              "the command buffer was recorded on " + kDevice0 +
                  " but the stream runs on device 1 'AMD Instinct MI300X' (gfx942)");
    EXPECT_EQ(fake().count("hipGraphLaunch"), 0);
}

} // namespace
} // namespace kiln::runtime
