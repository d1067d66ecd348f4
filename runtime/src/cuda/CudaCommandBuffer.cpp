// CudaCommandBuffer.cpp: a graph captured from a CUDA stream and its executable graph.
#include "CudaObjects.h"

namespace kiln::runtime::cuda {
namespace {

class CudaCommandBuffer final : public CommandBufferBackend {
public:
    CudaCommandBuffer(CudaContext context, CUgraph graph, CUgraphExec executable)
        : context_(std::move(context))
        , graph_(graph)
        , executable_(executable) {}
    ~CudaCommandBuffer() override {
        ScopedContext scope(api(), context_.context);
        api().cuGraphExecDestroy(executable_);
        api().cuGraphDestroy(graph_);
    }
    CudaCommandBuffer(CudaCommandBuffer const&) = delete;
    CudaCommandBuffer& operator=(CudaCommandBuffer const&) = delete;

    void* native() const override { return executable_; }

private:
    CudaFunctions const& api() const { return context_.driver->api(); }
    CudaContext context_;
    CUgraph graph_;
    CUgraphExec executable_;
};

} // namespace

Expected<std::unique_ptr<CommandBufferBackend>> instantiateCudaGraph(CudaContext const& context,
                                                                     CUgraph graph) {
    CudaFunctions const& api = context.driver->api();
    ScopedContext scope(api, context.context);
    CUgraphExec executable = nullptr;
    if (CUresult const result = api.cuGraphInstantiateWithFlags(&executable, graph, 0);
        result != CUDA_SUCCESS) {
        api.cuGraphDestroy(graph);
        return context.driver
            ->check(result, "cuGraphInstantiateWithFlags",
                    "the recorded graph on " + context.device)
            .error();
    }
    return std::unique_ptr<CommandBufferBackend>(
        std::make_unique<CudaCommandBuffer>(context, graph, executable));
}

} // namespace kiln::runtime::cuda
