// CudaStream.cpp: CUDA streams (and their recording into graphs) and events.
#include "CudaObjects.h"

namespace kiln::runtime::cuda {
namespace {

class CudaEvent final : public EventBackend {
public:
    CudaEvent(CudaContext context, CUevent event)
        : context_(std::move(context))
        , event_(event) {}
    ~CudaEvent() override {
        ScopedContext scope(api(), context_.context);
        api().cuEventDestroy(event_);
    }

    Status synchronize() override {
        return context_.driver->check(api().cuEventSynchronize(event_), "cuEventSynchronize",
                                      context_.device);
    }
    Expected<float> millisecondsSince(EventBackend const& start) const override {
        float milliseconds = 0;
        KILN_RETURN_IF_ERROR(context_.driver->check(
            api().cuEventElapsedTime(&milliseconds, static_cast<CUevent>(start.native()), event_),
            "cuEventElapsedTime", context_.device));
        return milliseconds;
    }
    void* native() const override { return event_; }

private:
    CudaFunctions const& api() const { return context_.driver->api(); }
    CudaContext context_;
    CUevent event_;
};

class CudaStream final : public StreamBackend {
public:
    CudaStream(CudaContext context, CUstream stream)
        : context_(std::move(context))
        , stream_(stream) {}
    ~CudaStream() override {
        ScopedContext scope(api(), context_.context);
        api().cuStreamDestroy(stream_);
    }

    Status launch(KernelBackend const& kernel, LaunchConfig const& config,
                  void** arguments) override {
        ScopedContext scope(api(), context_.context);
        auto const function = static_cast<CUfunction>(kernel.native());
        std::string const what = "kernel '" + kernel.name() + "', grid " + config.grid.toString() +
                                 ", block " + config.block.toString() + ", " +
                                 std::to_string(config.sharedBytes) +
                                 " bytes of dynamic shared memory";
        if (config.cluster.count() == 1) {
            return check(api().cuLaunchKernel(function, config.grid.x, config.grid.y, config.grid.z,
                                              config.block.x, config.block.y, config.block.z,
                                              static_cast<unsigned>(config.sharedBytes), stream_,
                                              arguments, nullptr),
                         "cuLaunchKernel", what);
        }
        if (!api().cuLaunchKernelEx)
            return Error(ErrorCode::Unsupported,
                         "cluster launches need a CUDA 11.8 driver or newer (no cuLaunchKernelEx)");
        CUlaunchAttribute cluster{};
        cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        cluster.value.clusterDim.x = config.cluster.x;
        cluster.value.clusterDim.y = config.cluster.y;
        cluster.value.clusterDim.z = config.cluster.z;
        CUlaunchConfig launch{};
        launch.gridDimX = config.grid.x;
        launch.gridDimY = config.grid.y;
        launch.gridDimZ = config.grid.z;
        launch.blockDimX = config.block.x;
        launch.blockDimY = config.block.y;
        launch.blockDimZ = config.block.z;
        launch.sharedMemBytes = static_cast<unsigned>(config.sharedBytes);
        launch.hStream = stream_;
        launch.attrs = &cluster;
        launch.numAttrs = 1;
        return check(api().cuLaunchKernelEx(&launch, function, arguments, nullptr),
                     "cuLaunchKernelEx", what + ", cluster " + config.cluster.toString());
    }
    Status copyDeviceToDevice(std::uint64_t dst, std::uint64_t src, std::size_t bytes) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuMemcpyDtoDAsync(dst, src, bytes, stream_), "cuMemcpyDtoDAsync",
                     std::to_string(bytes) + " bytes");
    }
    Status copyHostToDevice(std::uint64_t dst, void const* src, std::size_t bytes) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuMemcpyHtoDAsync(dst, src, bytes, stream_), "cuMemcpyHtoDAsync",
                     std::to_string(bytes) + " bytes");
    }
    Status copyDeviceToHost(void* dst, std::uint64_t src, std::size_t bytes) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuMemcpyDtoHAsync(dst, src, bytes, stream_), "cuMemcpyDtoHAsync",
                     std::to_string(bytes) + " bytes");
    }
    Status fill32(std::uint64_t dst, std::uint32_t value, std::size_t count) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuMemsetD32Async(dst, value, count, stream_), "cuMemsetD32Async",
                     std::to_string(count) + " words");
    }
    Status record(EventBackend& event) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuEventRecord(static_cast<CUevent>(event.native()), stream_),
                     "cuEventRecord", "");
    }
    Status waitFor(EventBackend const& event) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuStreamWaitEvent(stream_, static_cast<CUevent>(event.native()), 0),
                     "cuStreamWaitEvent", "");
    }
    Status synchronize() override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuStreamSynchronize(stream_), "cuStreamSynchronize", "");
    }
    Status beginCapture() override {
        if (!api().cuGraphInstantiateWithFlags) {
            int const version = context_.driver->version();
            return Error(ErrorCode::Unsupported,
                         "command buffers need a CUDA driver of 11.4 or newer "
                         "(cuGraphInstantiateWithFlags); this one is CUDA " +
                             std::to_string(version / 1000) + "." +
                             std::to_string(version % 1000 / 10) + ", on " + context_.device);
        }
        ScopedContext scope(api(), context_.context);
        // Thread-local: a call of this thread that is unsafe while a stream records (an
        // allocation, a context synchronize) fails and spoils the recording rather than running
        // at recording time; other threads are left alone.
        return check(api().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                     "cuStreamBeginCapture", "");
    }
    Expected<std::unique_ptr<CommandBufferBackend>> endCapture() override {
        ScopedContext scope(api(), context_.context);
        CUgraph graph = nullptr;
        CUresult const result = api().cuStreamEndCapture(stream_, &graph);
        if (result != CUDA_SUCCESS) {
            if (graph)
                api().cuGraphDestroy(graph);
            return check(result, "cuStreamEndCapture",
                         result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                             ? "a call made while recording that CUDA refuses then (an "
                               "allocation, a device synchronize) spoiled it"
                             : "")
                .error();
        }
        return instantiateCudaGraph(context_, graph);
    }
    void abandonCapture() override {
        ScopedContext scope(api(), context_.context);
        CUgraph graph = nullptr;
        if (api().cuStreamEndCapture(stream_, &graph) == CUDA_SUCCESS && graph)
            api().cuGraphDestroy(graph);
    }
    Status replay(CommandBufferBackend const& buffer) override {
        ScopedContext scope(api(), context_.context);
        return check(api().cuGraphLaunch(static_cast<CUgraphExec>(buffer.native()), stream_),
                     "cuGraphLaunch", "");
    }
    void* native() const override { return stream_; }

private:
    CudaFunctions const& api() const { return context_.driver->api(); }
    Status check(CUresult result, char const* call, std::string const& what) const {
        if (result == CUDA_SUCCESS)
            return {};
        return context_.driver->check(
            result, call, what.empty() ? context_.device : what + " on " + context_.device);
    }

    CudaContext context_;
    CUstream stream_;
};

} // namespace

Expected<std::unique_ptr<StreamBackend>> createCudaStream(CudaContext const& context) {
    ScopedContext scope(context.driver->api(), context.context);
    CUstream stream = nullptr;
    KILN_RETURN_IF_ERROR(
        context.driver->check(context.driver->api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                              "cuStreamCreate", context.device));
    return std::unique_ptr<StreamBackend>(std::make_unique<CudaStream>(context, stream));
}

Expected<std::unique_ptr<EventBackend>> createCudaEvent(CudaContext const& context) {
    ScopedContext scope(context.driver->api(), context.context);
    CUevent event = nullptr;
    KILN_RETURN_IF_ERROR(
        context.driver->check(context.driver->api().cuEventCreate(&event, CU_EVENT_DEFAULT),
                              "cuEventCreate", context.device));
    return std::unique_ptr<EventBackend>(std::make_unique<CudaEvent>(context, event));
}

} // namespace kiln::runtime::cuda
