// The interface half of a generated kernel: parameters from the graph's arguments, the launch
// shape, the manifest JSON (tensor maps included) and the graph's hash, and the tensors' geometry
// that tensor maps describe (TensorMaps.h). Shared by every target.
#include "CodeGenerators.h"
#include "KernelWalker.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/GraphJson.h"
#include "kiln/graph/Simplify.h"
#include "kiln/lowering/Clusters.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/LaunchShape.h"
#include "kiln/lowering/TensorMaps.h"
#include "kiln/lowering/TileOrder.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kiln::lowering {

void describeInterface(KernelGraph const& graph, CodegenOptions const& options,
                       LaunchShape const& shape, EmittedKernel& kernel) {
    kernel.target = options.target;
    kernel.entry = options.entry.empty() ? "kiln_" + graph.name : options.entry;
    for (char& c : kernel.entry)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            c = '_';
    kernel.schedule = options.schedule;
    std::size_t offset = 0;
    for (auto const& arg : graph.arguments) {
        ParameterInfo p;
        p.name = arg.name;
        p.pointer = arg.kind == KernelArgument::Kind::Tensor;
        p.type = arg.dtype == DataType::Bool ? "u8" : std::string(name(arg.dtype));
        p.size = p.pointer ? 8 : static_cast<std::size_t>(sizeInBytes(arg.dtype));
        offset = (offset + p.size - 1) / p.size * p.size;
        p.offset = offset;
        offset += p.size;
        p.meaning = fmt::format("{} {}", name(arg.kind), arg.name);
        kernel.parameters.push_back(std::move(p));
    }
    // A Reduce's rows split over workgroups: the workspace where their parts meet, last.
    if (auto const workspace = detail::splitRowsWorkspace(graph, shape)) {
        ParameterInfo p;
        p.name = kWorkspaceParameter;
        p.pointer = true;
        p.type = "u8";
        p.size = 8;
        p.offset = (offset + 7) / 8 * 8;
        offset = p.offset + p.size;
        p.meaning = "workspace";
        p.workspaceBytes = toString(workspace->bytes);
        kernel.parameters.push_back(std::move(p));
    }
    // Clusters: the grid of blocks of tiles they take, rounded up along their axes (TileOrder.h).
    ClusterShape const cluster = clusterShape(options.schedule);
    for (int a = 0; a < 3; ++a) {
        kernel.block[a] = shape.block[a];
        kernel.grid.push_back(toString(simplify(clusteredExtent(shape.grid[a], a == 0   ? cluster.m
                                                                               : a == 1 ? cluster.n
                                                                                        : 1))));
    }
    // FNV-1a of the graph's JSON form: equal graphs, equal hashes, on every machine.
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : saveGraph(graph)) {
        h ^= c;
        h *= 1099511628211ull;
    }
    kernel.graphHash = fmt::format("{:016x}", h);
}

std::optional<TensorGeometry> tensorGeometry(KernelGraph const& graph, std::string const& name) {
    for (Id d : graph.coordinates.nodes()) {
        auto const& user = graph.coordinates.node(d);
        if (user.kind != DimensionKind::User || user.name != name)
            continue;
        // A loaded tensor splits into its axes; a stored one is the Join of them.
        std::vector<Id> edges = graph.coordinates.outgoing(d);
        for (Id e : graph.coordinates.incoming(d))
            edges.push_back(e);
        for (Id e : edges) {
            auto const kind = graph.coordinates.edge(e).kind;
            bool const split = kind == CoordinateEdgeKind::Split;
            if (!split && kind != CoordinateEdgeKind::Join)
                continue;
            // Axis 0 outermost, as the Split (Join) lists them; the driver wants the innermost
            // first.
            TensorGeometry g;
            auto axes = split ? graph.coordinates.heads(e) : graph.coordinates.tails(e);
            std::reverse(axes.begin(), axes.end());
            for (Id a : axes) {
                auto const& axis = graph.coordinates.node(a);
                if (axis.kind != DimensionKind::SubDimension || !axis.size || !axis.stride)
                    return std::nullopt;
                g.sizes.push_back(simplify(axis.size));
                g.strides.push_back(simplify(axis.stride));
                g.axes.push_back(a);
            }
            if (g.axes.empty() || literalInt(g.strides[0]) != std::int64_t{1})
                return std::nullopt;
            return g;
        }
    }
    return std::nullopt;
}

std::string EmittedKernel::manifestJson() const {
    nlohmann::ordered_json m;
    m["entry"] = entry;
    m["target"] = target;
    m["block"] = {block[0], block[1], block[2]};
    m["grid"] = grid;
    // PERSISTENT=1: the grid above counts the output tiles; the launch is min(tiles,
    // multiprocessors x workgroups_per_multiprocessor) workgroups along x (Occupancy.h).
    if (workgroupsPerMultiprocessor > 0)
        m["persistent"] = {{"workgroups_per_multiprocessor", workgroupsPerMultiprocessor}};
    // CLUSTER_M, CLUSTER_N: the thread-block cluster every launch must give (Clusters.h).
    if (cluster[0] * cluster[1] * cluster[2] > 1)
        m["cluster"] = cluster;
    m["shared_bytes"] = sharedBytes;
    auto& params = m["parameters"] = nlohmann::ordered_json::array();
    for (auto const& p : parameters) {
        nlohmann::ordered_json item{{"name", p.name},
                                    {"type", p.type},
                                    {"kind", p.tensorMap ? "tensor_map"
                                             : p.pointer ? "pointer"
                                                         : "value"},
                                    {"size", p.size},
                                    {"offset", p.offset},
                                    {"meaning", p.meaning}};
        if (p.workspaceBytes)
            item["workspace"] = {{"bytes", *p.workspaceBytes}, {"zeroed", true}};
        if (p.tensorMap)
            item["tensor_map"] = {{"tensor", p.tensorMap->tensor},
                                  {"box", p.tensorMap->box},
                                  {"swizzle", p.tensorMap->swizzle},
                                  {"sizes", p.tensorMap->sizes},
                                  {"strides", p.tensorMap->strides}};
        params.push_back(std::move(item));
    }
    m["schedule"] = schedule;
    if (!assumptions.empty())
        m["assumes"] = assumptions;
    m["graph_hash"] = graphHash;
    return m.dump(2) + "\n";
}

} // namespace kiln::lowering
