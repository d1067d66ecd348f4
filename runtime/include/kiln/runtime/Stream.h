// Stream.h: an in-order queue of device work with a fluent interface.
//
//   stream.launch(kernel, grid, block, shared, a, b, alpha, n).copy(host, b).record(done);
//   Status s = stream.synchronize();
//
// Each call returns the stream; the first failure is kept (later calls are skipped) and returned
// by status() and synchronize(), which then clears it. A typed launch's argument types are
// checked at compile time (non-narrowing conversions to the kernel's Params only); an untyped
// launch checks its KernelArguments at run time. Every launch checks grid, block and shared
// memory against the device and kernel first.
//
// Copies between the device and the host are queued like everything else; when the host side is
// read or written depends on the host memory. Page-locked memory (PinnedHostMemory) is copied
// asynchronously: the call returns at once and the stream reads or writes the memory when it
// gets there, so leave it alone until synchronize() (or an event after the copy). Pageable
// memory (a std::vector) goes through the driver's staging and the call may wait for it; keep it
// valid and unchanged until synchronize() all the same. A CommandBuffer records a stream's work
// for replay (CommandBuffer.h).
#pragma once

#include "kiln/runtime/Backend.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Event.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/KernelArguments.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/TypedKernel.h"

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::runtime {

class CommandBuffer;

/// Whether an Arg converts to the kernel parameter type Param without narrowing.
template <class Param, class Arg>
concept ArgumentFor = requires(Arg&& arg) {
    Param{static_cast<Arg&&>(arg)};
};

/// An in-order queue of work on one device.
class Stream {
public:
    /// A new stream on `device`.
    static Expected<Stream> create(std::shared_ptr<Device> device);

    /// Launches a typed kernel; arguments convert to Params... without narrowing.
    template <class... Params, class... Args>
    requires(sizeof...(Params) == sizeof...(Args) &&
             (ArgumentFor<Params, Args> &&
              ...)) Stream& launch(TypedKernel<Params...> const& kernel, Dim3 grid, Dim3 block,
                                   std::size_t sharedBytes, Args&&... args) {
        if (!status_.ok())
            return *this;
        std::tuple<Params...> values{Params{std::forward<Args>(args)}...};
        std::array<void*, sizeof...(Params)> pointers = std::apply(
            [](auto&... value) { return std::array<void*, sizeof...(Params)>{&value...}; }, values);
        return launchChecked(kernel.kernel(), {grid, block, sharedBytes, Dim3{}}, pointers.data());
    }
    /// Launches a kernel with run-time arguments, checked against its manifest and layout.
    Stream& launch(Kernel const& kernel, LaunchConfig const& config,
                   KernelArguments const& arguments);

    /// Copies host elements (a span, a std::vector, PinnedHostMemory) to a buffer of the same
    /// size.
    template <class T>
    Stream& copy(DeviceMemory<T>& dst, std::type_identity_t<std::span<T const>> src) {
        return then(checkSizes("copy to device", dst.size(), src.size()), [&] {
            return backend_->copyHostToDevice(dst.pointer().address(), src.data(), dst.bytes());
        });
    }
    /// Copies a buffer to host elements (a span, a std::vector, PinnedHostMemory) of the same
    /// size.
    template <class T>
    Stream& copy(std::type_identity_t<std::span<T>> dst, DeviceMemory<T> const& src) {
        return then(checkSizes("copy to host", src.size(), dst.size()), [&] {
            return backend_->copyDeviceToHost(dst.data(), src.pointer().address(), src.bytes());
        });
    }
    /// Copies a buffer to a buffer of the same size.
    template <class T>
    Stream& copy(DeviceMemory<T>& dst, DeviceMemory<T> const& src) {
        return then(checkSizes("copy on device", dst.size(), src.size()), [&] {
            return backend_->copyDeviceToDevice(dst.pointer().address(), src.pointer().address(),
                                                src.bytes());
        });
    }
    /// Sets every element of a buffer of 4-byte elements to `value`.
    template <class T>
    requires(sizeof(T) == 4) Stream& fill(DeviceMemory<T>& dst, T value) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        return then(Status(), [&] {
            return dst.empty() ? Status()
                               : backend_->fill32(dst.pointer().address(), bits, dst.size());
        });
    }
    /// Records `event` here.
    Stream& record(Event& event) {
        return then(Status(), [&] { return backend_->record(event.backend()); });
    }
    /// Makes later work wait for `event`.
    Stream& waitFor(Event const& event) {
        return then(Status(), [&] { return backend_->waitFor(event.backend()); });
    }
    /// Runs the work recorded in `buffer`, after the work so far; any stream of the device the
    /// buffer was recorded on may replay it, any number of times.
    Stream& replay(CommandBuffer const& buffer);

    /// Waits for all work so far; returns the first failure since the last synchronize (a
    /// queued failure, or the device's) and clears it. While the stream records a command
    /// buffer there is nothing to wait for: that is an error, which fails the recording.
    Status synchronize();
    /// The first failure so far, or success.
    Status const& status() const { return status_; }
    /// Keeps `failure` as the stream's first failure (unless there is one already), as a failed
    /// launch would be: a launcher that fails before it enqueues anything (a tensor map the
    /// copy engine cannot describe) reports where the stream's other failures are.
    Stream& fail(Status failure) {
        return then(std::move(failure), [] { return Status(); });
    }

    /// The device it runs on.
    Device& device() const { return *device_; }
    /// The platform's stream.
    StreamBackend& backend() const { return *backend_; }

private:
    friend class CommandBuffer; // records through the stream: its state and backend

    Stream(std::shared_ptr<Device> device, std::unique_ptr<StreamBackend> backend)
        : device_(std::move(device))
        , backend_(std::move(backend)) {}

    Stream& launchChecked(Kernel const& kernel, LaunchConfig const& config, void** arguments);
    Status checkDevice(std::string const& what, DeviceDescription const& other) const;
    static Status checkSizes(char const* what, std::size_t expected, std::size_t given);
    template <class F>
    Stream& then(Status precondition, F&& operation) {
        if (!status_.ok())
            return *this;
        status_ = precondition.ok() ? operation() : precondition;
        return *this;
    }

    std::shared_ptr<Device> device_;
    std::unique_ptr<StreamBackend> backend_;
    Status status_;
    bool recording_ = false; ///< inside CommandBuffer::record
};

} // namespace kiln::runtime
