// Clusters.cpp: the cluster shape of CLUSTER_M and CLUSTER_N, and its checks (Clusters.h).
#include "kiln/lowering/Clusters.h"

#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"
#include "kiln/lowering/Occupancy.h"

#include <fmt/format.h>

namespace kiln::lowering {

namespace {

std::int64_t parameter(std::map<std::string, std::int64_t> const& schedule, char const* name) {
    auto const it = schedule.find(name);
    return it == schedule.end() ? 1 : it->second;
}

} // namespace

ClusterShape clusterShape(std::map<std::string, std::int64_t> const& schedule) {
    return {parameter(schedule, "CLUSTER_M"), parameter(schedule, "CLUSTER_N")};
}

void checkClusterParameters(std::map<std::string, std::int64_t> const& schedule,
                            std::string const& target) {
    for (char const* name : {"CLUSTER_M", "CLUSTER_N"})
        if (std::int64_t const v = parameter(schedule, name); v != 1 && v != 2)
            throw UserError(fmt::format("{}={} is out of range: 1 (no cluster) or 2 workgroups "
                                        "that share an operand the copy engine multicasts",
                                        name, v));
    ClusterShape const shape = clusterShape(schedule);
    if (!shape.clustered())
        return;
    if (shape.size() > kMaxClusterWorkgroups)
        throw UserError(fmt::format("CLUSTER_M={} and CLUSTER_N={} make clusters of {} "
                                    "workgroups; at most {} (one operand shared, multicast in "
                                    "halves)",
                                    shape.m, shape.n, shape.size(), kMaxClusterWorkgroups));
    auto const tma = schedule.find("TMA");
    if (tma == schedule.end() || tma->second != 1)
        throw UserError(fmt::format("CLUSTER_M={}, CLUSTER_N={}: the shared operand is multicast "
                                    "by the copy engine; clusters need TMA=1",
                                    shape.m, shape.n));
    if (!arch::ArchLibrary::get(target).has(arch::Capability::HasThreadBlockClusters))
        throw UserError(fmt::format("CLUSTER_M={}, CLUSTER_N={}: {} has no thread-block "
                                    "clusters (sm_90a has)",
                                    shape.m, shape.n, target));
}

std::array<std::int64_t, 3> launchCluster(std::map<std::string, std::int64_t> const& schedule) {
    ClusterShape const shape = clusterShape(schedule);
    if (persistentTiles(schedule))
        return {shape.size(), 1, 1};
    return {shape.m, shape.n, 1};
}

} // namespace kiln::lowering
