// Backend.h: the interfaces a platform (CUDA, HIP) implements for streams, events and loaded
// code.
//
// Users hold the value types (Stream, Event, CommandBuffer, Module, Kernel); these are what a
// platform provides underneath. Each platform implements Platform, Device and the five classes
// below; nothing above this line knows which platform runs. native() hands out the platform's own
// handle (CUstream, CUevent, CUgraphExec, CUfunction, or hipStream_t, hipEvent_t, hipGraphExec_t,
// hipFunction_t) for code that calls the driver directly.
#pragma once

#include "kiln/runtime/KernelAttributes.h"
#include "kiln/runtime/LaunchConfig.h"
#include "kiln/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runtime {

class KernelBackend;

/// A recorded point in a stream, for timing and ordering.
class EventBackend {
public:
    virtual ~EventBackend() = default;
    /// Waits on the host until the event has happened.
    virtual Status synchronize() = 0;
    /// Milliseconds from `start` to this event; both recorded and completed.
    virtual Expected<float> millisecondsSince(EventBackend const& start) const = 0;
    /// The platform's handle.
    virtual void* native() const = 0;
};

/// Work recorded from a stream, ready to replay: a CUDA or HIP graph and its executable form,
/// both owned and destroyed with it.
class CommandBufferBackend {
public:
    virtual ~CommandBufferBackend() = default;
    /// The platform's executable graph (CUgraphExec, hipGraphExec_t).
    virtual void* native() const = 0;
};

/// An in-order queue of device work.
class StreamBackend {
public:
    virtual ~StreamBackend() = default;
    /// Launches `kernel`; `arguments` points at one value per parameter. Limits are already
    /// checked by the caller.
    virtual Status launch(KernelBackend const& kernel, LaunchConfig const& config,
                          void** arguments) = 0;
    /// Device-to-device copy of `bytes`.
    virtual Status copyDeviceToDevice(std::uint64_t dst, std::uint64_t src, std::size_t bytes) = 0;
    /// Host-to-device copy; the host memory must stay valid until the stream reaches the copy.
    virtual Status copyHostToDevice(std::uint64_t dst, void const* src, std::size_t bytes) = 0;
    /// Device-to-host copy; the host memory must stay valid until the stream reaches the copy.
    virtual Status copyDeviceToHost(void* dst, std::uint64_t src, std::size_t bytes) = 0;
    /// Sets `count` 32-bit words at `dst` to `value`.
    virtual Status fill32(std::uint64_t dst, std::uint32_t value, std::size_t count) = 0;
    /// Records `event` at the current end of the stream.
    virtual Status record(EventBackend& event) = 0;
    /// Makes later work wait for `event`.
    virtual Status waitFor(EventBackend const& event) = 0;
    /// Waits on the host until all work so far is done.
    virtual Status synchronize() = 0;

    /// Starts recording: until endCapture(), the work given to this stream is recorded, not run.
    /// Calls of this thread that are unsafe while a stream records (allocations, a device
    /// synchronize; on HIP synchronous copies too) fail and spoil the recording.
    virtual Status beginCapture() = 0;
    /// Stops recording and instantiates what was recorded. The stream has left capture mode when
    /// this returns, whether it succeeds or not.
    virtual Expected<std::unique_ptr<CommandBufferBackend>> endCapture() = 0;
    /// Stops recording and throws away what was recorded (after a failure while recording).
    virtual void abandonCapture() = 0;
    /// Runs the recorded work of `buffer`, as one submission, after the work so far.
    virtual Status replay(CommandBufferBackend const& buffer) = 0;

    /// The platform's handle.
    virtual void* native() const = 0;
};

/// One kernel entry of loaded code.
class KernelBackend {
public:
    virtual ~KernelBackend() = default;
    /// The entry name.
    virtual std::string const& name() const = 0;
    /// Registers, shared memory and thread limits of the loaded code.
    virtual Expected<KernelAttributes> attributes() const = 0;
    /// Raises (or lowers) the kernel's dynamic shared memory limit.
    virtual Status setMaxDynamicSharedBytes(std::size_t bytes) = 0;
    /// The parameter layout of the loaded code, or nothing when the driver cannot tell.
    virtual Expected<std::optional<std::vector<ParameterLayout>>> parameterLayout() const = 0;
    /// The platform's handle.
    virtual void* native() const = 0;
};

/// Loaded device code: a module with one or more kernel entries.
class ModuleBackend {
public:
    virtual ~ModuleBackend() = default;
    /// The entry named `name` (NotFound listing what the code defines, where known).
    virtual Expected<std::unique_ptr<KernelBackend>> kernel(std::string const& name) = 0;
    /// The JIT's information log of the load (warnings, resource use), possibly empty.
    virtual std::string const& jitLog() const = 0;
};

} // namespace kiln::runtime
