// CommandBuffer.h: a stream's work recorded once and replayed as one submission (a CUDA or HIP
// graph).
//
//   Expected<CommandBuffer> step = CommandBuffer::record(stream, [&](Stream& s) {
//       s.copy(x, pinnedX).launch(saxpy, {blocks}, {256}, 0, x, y, 2.0f, n).copy(pinnedY, y);
//   });
//   for (int i = 0; i < steps; ++i)
//       stream.replay(*step);
//
// Recording runs `commands` once with the stream in capture mode (cuStreamBeginCapture or
// hipStreamBeginCapture, thread-local): its launches, copies and fills are recorded, not run,
// after the same checks as when they run. The recording is instantiated (cuGraphInstantiate-
// WithFlags, hipGraphInstantiate), and a replay (cuGraphLaunch, hipGraphLaunch) submits all of it
// with one call, which saves the driver's cost per launch where kernels are short.
//
// What is recorded is fixed: kernel arguments are the values given while recording, and copies
// name the device buffers and host memory they were given; the kernels, buffers and host memory
// a command buffer names must outlive its replays.
// A replay reads and writes that host memory when the stream reaches the copy, so new inputs go
// in by rewriting it between replays (after synchronize()). PinnedHostMemory is the memory for
// that; CUDA also replays copies from and to pageable memory (a std::vector), reading it at each
// replay as well. Only stream work is recorded: DeviceMemory::write and read run at once, while
// recording, on CUDA, and are refused on HIP.
//
// A recording succeeds or fails as a whole. The first failure of a Stream call in `commands`
// (later calls are skipped, as always), a call of this thread the driver refuses while a stream
// records (an allocation, Device::synchronize; on HIP synchronous copies too; Stream::synchronize
// is refused by Kiln), an exception, or a failed instantiation ends the capture: the stream is as
// it was before, out of capture mode and holding no error, and record() returns the failure (or
// lets the exception go on). Nothing recorded by a failed recording runs.
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Stream.h"

#include <functional>
#include <memory>

namespace kiln::runtime {

/// Work recorded from a stream, replayed with Stream::replay.
class CommandBuffer {
public:
    /// Records what `commands` gives `stream` (which it is passed). The stream must hold no
    /// failure and not be recording already (InvalidArgument); a driver without graphs is
    /// Unsupported.
    static Expected<CommandBuffer> record(Stream& stream,
                                          std::function<void(Stream&)> const& commands);

    /// The device it runs on.
    Device& device() const { return *device_; }
    /// The platform's command buffer.
    CommandBufferBackend& backend() const { return *backend_; }

private:
    CommandBuffer(std::shared_ptr<Device> device, std::unique_ptr<CommandBufferBackend> backend)
        : device_(std::move(device))
        , backend_(std::move(backend)) {}

    std::shared_ptr<Device> device_;
    std::unique_ptr<CommandBufferBackend> backend_;
};

} // namespace kiln::runtime
