// Clusters.h: thread-block clusters of the Hopper GEMM (schedule parameters CLUSTER_M and
// CLUSTER_N, sm_90a with TMA=1), where the workgroups of a cluster take neighbouring output tiles
// and the operand they share is loaded once and multicast by the copy engine into each one's
// shared memory (cp.async.bulk.tensor ... .multicast::cluster), halving its L2 traffic.
//
// CLUSTER_M workgroups along the Workgroup dimension of axis 0 (rows of tiles: they share the
// columns of B), CLUSTER_N along axis 1 (columns of tiles: they share the rows of A). Without
// PERSISTENT the launch's cluster is (CLUSTER_M, CLUSTER_N, 1) over the grid of tiles rounded up
// to a whole number of clusters (the manifest's grid; a launch of another grid is refused,
// LaunchLimits); with PERSISTENT=1 the persistent grid is one-dimensional, launched in clusters
// of CLUSTER_M x CLUSTER_N along x, and the loop over tiles steps by clusters. Where the tiles
// along the cluster's axis are not a whole number of clusters, the last cluster's workgroup past
// the edge is a guarded peer: it loads its part of the shared operand for its peer and a tile
// outside the tensors (zeros), and stores nothing, every element of its tile being outside the
// result (TileOrder.h). Code generation reads the shape here; the manifest declares it
// ("cluster") and every launcher passes it to the driver.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace kiln::lowering {

/// The workgroups of one cluster along the two axes of the tile grid.
struct ClusterShape {
    std::int64_t m = 1, n = 1;

    std::int64_t size() const { return m * n; }
    /// Whether the kernel runs in clusters of more than one workgroup.
    bool clustered() const { return size() > 1; }
};

/// CLUSTER_M, CLUSTER_N of `schedule` (1 where absent).
ClusterShape clusterShape(std::map<std::string, std::int64_t> const& schedule);

/// The most workgroups a cluster of CLUSTER_M x CLUSTER_N holds (each 1 or 2): two, one of
/// which multicasts half of the shared operand's tile to both.
inline constexpr std::int64_t kMaxClusterWorkgroups = 2;

/// Refuses CLUSTER_M and CLUSTER_N the target or the schedule cannot honour, naming the
/// parameter: each 1 or 2, at most kMaxClusterWorkgroups together, only with TMA=1 on a target
/// with thread-block clusters. checkCodegenParameters calls it.
void checkClusterParameters(std::map<std::string, std::int64_t> const& schedule,
                            std::string const& target);

/// The launch's cluster (x, y, z): (CLUSTER_M, CLUSTER_N, 1) over the grid of tiles, or
/// (CLUSTER_M x CLUSTER_N, 1, 1) over a persistent grid; (1, 1, 1) without clusters.
std::array<std::int64_t, 3> launchCluster(std::map<std::string, std::int64_t> const& schedule);

} // namespace kiln::lowering
