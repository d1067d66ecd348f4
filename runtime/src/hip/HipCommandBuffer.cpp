// HipCommandBuffer.cpp: a graph captured from a HIP stream and its executable graph.
//
// Launches reach the graph as HIP's `extra` argument buffer, which HIP copies into the kernel
// node when it records the launch (ROCm's hipGraphKernelNode copies `extra`'s buffer), so the
// packed arguments may go when the launch call returns, as they may outside a recording.
#include "HipObjects.h"

#include <array>

namespace kiln::runtime::hip {
namespace {

class HipCommandBuffer final : public CommandBufferBackend {
public:
    HipCommandBuffer(HipContext context, GraphHandle graph, GraphExecHandle executable)
        : context_(std::move(context))
        , graph_(graph)
        , executable_(executable) {}
    ~HipCommandBuffer() override {
        ScopedDevice scope(api(), context_.ordinal);
        (void)api().hipGraphExecDestroy(executable_);
        (void)api().hipGraphDestroy(graph_);
    }
    HipCommandBuffer(HipCommandBuffer const&) = delete;
    HipCommandBuffer& operator=(HipCommandBuffer const&) = delete;

    void* native() const override { return executable_; }

private:
    HipFunctions const& api() const { return context_.runtime->api(); }
    HipContext context_;
    GraphHandle graph_;
    GraphExecHandle executable_;
};

} // namespace

Expected<std::unique_ptr<CommandBufferBackend>> instantiateHipGraph(HipContext const& context,
                                                                    GraphHandle graph) {
    HipFunctions const& api = context.runtime->api();
    ScopedDevice scope(api, context.ordinal);
    GraphExecHandle executable = nullptr;
    std::array<char, 4096> log{};
    if (HipError const result =
            api.hipGraphInstantiate(&executable, graph, nullptr, log.data(), log.size());
        result != kHipSuccess) {
        (void)api.hipGraphDestroy(graph);
        log.back() = '\0';
        std::string what = "the recorded graph on " + context.device;
        if (log[0] != '\0')
            what += " (HIP's log: " + std::string(log.data()) + ")";
        return context.runtime->check(result, "hipGraphInstantiate", what).error();
    }
    return std::unique_ptr<CommandBufferBackend>(
        std::make_unique<HipCommandBuffer>(context, graph, executable));
}

} // namespace kiln::runtime::hip
