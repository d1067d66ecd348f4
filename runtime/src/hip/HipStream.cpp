// HipStream.cpp: HIP streams (and their recording into graphs) and events; launches with the
// packed argument buffer.
#include "HipKernel.h"
#include "HipObjects.h"

#include <cstdint>

namespace kiln::runtime::hip {
namespace {

void* pointer(std::uint64_t address) {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
}

class HipEvent final : public EventBackend {
public:
    HipEvent(HipContext context, EventHandle event)
        : context_(std::move(context))
        , event_(event) {}
    ~HipEvent() override {
        ScopedDevice scope(api(), context_.ordinal);
        (void)api().hipEventDestroy(event_);
    }

    Status synchronize() override {
        return context_.runtime->check(api().hipEventSynchronize(event_), "hipEventSynchronize",
                                       context_.device);
    }
    Expected<float> millisecondsSince(EventBackend const& start) const override {
        float milliseconds = 0;
        KILN_RETURN_IF_ERROR(context_.runtime->check(
            api().hipEventElapsedTime(&milliseconds, static_cast<EventHandle>(start.native()),
                                      event_),
            "hipEventElapsedTime", context_.device));
        return milliseconds;
    }
    void* native() const override { return event_; }

private:
    HipFunctions const& api() const { return context_.runtime->api(); }
    HipContext context_;
    EventHandle event_;
};

class HipStream final : public StreamBackend {
public:
    HipStream(HipContext context, StreamHandle stream)
        : context_(std::move(context))
        , stream_(stream) {}
    ~HipStream() override {
        ScopedDevice scope(api(), context_.ordinal);
        (void)api().hipStreamDestroy(stream_);
    }

    Status launch(KernelBackend const& kernel, LaunchConfig const& config,
                  void** arguments) override {
        auto const* hipKernel = dynamic_cast<HipKernel const*>(&kernel);
        if (!hipKernel) {
            return Error(ErrorCode::InvalidArgument, "kernel '" + kernel.name() +
                                                         "' was not loaded by HIP and cannot run "
                                                         "on " +
                                                         context_.device);
        }
        // The arguments go as one buffer laid out as the metadata note says (HIP's `extra`
        // form): HIP copies it at the call, so it may go when the call returns.
        std::vector<unsigned char> buffer = hipKernel->packArguments(arguments);
        std::size_t size = buffer.size();
        void* extra[] = {kHipLaunchParamBufferPointer, buffer.data(), kHipLaunchParamBufferSize,
                         &size, kHipLaunchParamEnd};
        ScopedDevice scope(api(), context_.ordinal);
        HipError const result = api().hipModuleLaunchKernel(
            static_cast<FunctionHandle>(kernel.native()), config.grid.x, config.grid.y,
            config.grid.z, config.block.x, config.block.y, config.block.z,
            static_cast<unsigned>(config.sharedBytes), stream_, nullptr, extra);
        return check(result, "hipModuleLaunchKernel",
                     "kernel '" + kernel.name() + "', grid " + config.grid.toString() + ", block " +
                         config.block.toString() + ", " + std::to_string(config.sharedBytes) +
                         " bytes of dynamic LDS");
    }
    Status copyDeviceToDevice(std::uint64_t dst, std::uint64_t src, std::size_t bytes) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipMemcpyDtoDAsync(pointer(dst), pointer(src), bytes, stream_),
                     "hipMemcpyDtoDAsync", std::to_string(bytes) + " bytes");
    }
    Status copyHostToDevice(std::uint64_t dst, void const* src, std::size_t bytes) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipMemcpyHtoDAsync(pointer(dst), src, bytes, stream_),
                     "hipMemcpyHtoDAsync", std::to_string(bytes) + " bytes");
    }
    Status copyDeviceToHost(void* dst, std::uint64_t src, std::size_t bytes) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipMemcpyDtoHAsync(dst, pointer(src), bytes, stream_),
                     "hipMemcpyDtoHAsync", std::to_string(bytes) + " bytes");
    }
    Status fill32(std::uint64_t dst, std::uint32_t value, std::size_t count) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipMemsetD32Async(pointer(dst), static_cast<int>(value), count, stream_),
                     "hipMemsetD32Async", std::to_string(count) + " words");
    }
    Status record(EventBackend& event) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipEventRecord(static_cast<EventHandle>(event.native()), stream_),
                     "hipEventRecord", "");
    }
    Status waitFor(EventBackend const& event) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipStreamWaitEvent(stream_, static_cast<EventHandle>(event.native()), 0),
                     "hipStreamWaitEvent", "");
    }
    Status synchronize() override {
        return check(api().hipStreamSynchronize(stream_), "hipStreamSynchronize", "");
    }
    Status beginCapture() override {
        ScopedDevice scope(api(), context_.ordinal);
        // Thread-local: a call of this thread that is unsafe while a stream records (an
        // allocation, a synchronous copy, a synchronize) fails and spoils the recording rather
        // than running at recording time; other threads are left alone.
        return check(api().hipStreamBeginCapture(stream_, kHipStreamCaptureModeThreadLocal),
                     "hipStreamBeginCapture", "");
    }
    Expected<std::unique_ptr<CommandBufferBackend>> endCapture() override {
        ScopedDevice scope(api(), context_.ordinal);
        GraphHandle graph = nullptr;
        HipError const result = api().hipStreamEndCapture(stream_, &graph);
        if (result != kHipSuccess) {
            if (graph)
                (void)api().hipGraphDestroy(graph);
            return check(result, "hipStreamEndCapture",
                         result == kHipErrorStreamCaptureInvalidated
                             ? "a call made while recording that HIP refuses then (an "
                               "allocation, a synchronous copy, a synchronize) spoiled it"
                             : "")
                .error();
        }
        return instantiateHipGraph(context_, graph);
    }
    void abandonCapture() override {
        ScopedDevice scope(api(), context_.ordinal);
        GraphHandle graph = nullptr;
        if (api().hipStreamEndCapture(stream_, &graph) == kHipSuccess && graph)
            (void)api().hipGraphDestroy(graph);
    }
    Status replay(CommandBufferBackend const& buffer) override {
        ScopedDevice scope(api(), context_.ordinal);
        return check(api().hipGraphLaunch(static_cast<GraphExecHandle>(buffer.native()), stream_),
                     "hipGraphLaunch", "");
    }
    void* native() const override { return stream_; }

private:
    HipFunctions const& api() const { return context_.runtime->api(); }
    Status check(HipError result, char const* call, std::string const& what) const {
        if (result == kHipSuccess)
            return {};
        return context_.runtime->check(
            result, call, what.empty() ? context_.device : what + " on " + context_.device);
    }

    HipContext context_;
    StreamHandle stream_;
};

} // namespace

Expected<std::unique_ptr<StreamBackend>> createHipStream(HipContext const& context) {
    ScopedDevice scope(context.runtime->api(), context.ordinal);
    StreamHandle stream = nullptr;
    KILN_RETURN_IF_ERROR(context.runtime->check(
        context.runtime->api().hipStreamCreateWithFlags(&stream, kHipStreamNonBlocking),
        "hipStreamCreateWithFlags", context.device));
    return std::unique_ptr<StreamBackend>(std::make_unique<HipStream>(context, stream));
}

Expected<std::unique_ptr<EventBackend>> createHipEvent(HipContext const& context) {
    ScopedDevice scope(context.runtime->api(), context.ordinal);
    EventHandle event = nullptr;
    KILN_RETURN_IF_ERROR(context.runtime->check(context.runtime->api().hipEventCreate(&event),
                                                "hipEventCreate", context.device));
    return std::unique_ptr<EventBackend>(std::make_unique<HipEvent>(context, event));
}

} // namespace kiln::runtime::hip
