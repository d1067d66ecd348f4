// Thread-block clusters on PTX (CLUSTER_M, CLUSTER_N; Clusters.h): the workgroups of a cluster
// share the operand whose tile does not move along the cluster's axis, and each loads one part of
// it, multicast by the copy engine into the same place of every workgroup's shared memory.
//
// Each workgroup loads rows [rank x rows / size, (rank + 1) x rows / size) of every box of the
// shared tile (a box of 64 x rows / size: the tensor map's box), and issues them with
// `.multicast::cluster` to every workgroup of the cluster; each copy completes the bytes it
// writes on the mbarrier at the same offset in each destination, so every workgroup's "full"
// mbarrier still expects the whole stage's bytes: its own tile, its own part of the shared one,
// and the parts of its peers. Splitting the rows of every box, rather than giving each workgroup
// whole boxes, works for every tile: one box (a K-major operand) as well as several (an N-major
// one), and the parts start at multiples of 8 rows (1024 bytes), where the 128-byte swizzle's
// pattern repeats, so the copies land where wgmma reads them. The alternative, one workgroup
// issuing the whole box, leaves the other's copy engine idle and its producer without the same
// work, for no gain in simplicity: both ways every workgroup must wait for its peers before
// overwriting a copy.
//
// A copy is overwritten in every workgroup of the cluster, so every workgroup must be done with
// it first: with a producer warpgroup, each consumer warp arrives on the "empty" mbarrier of its
// own workgroup and on the same mbarrier of each peer (mapa, mbarrier.arrive.shared::cluster),
// which counts the consumer warps of the whole cluster, and the producer waits on it. Without one,
// the pipeline's barrier each iteration is the cluster's (barrier.cluster, its arrive relaxed).
// The mbarriers are initialised before a barrier of the cluster (no peer arrives on or copies
// into a workgroup before its mbarriers exist), and the kernel ends with another (no workgroup
// exits while a peer may still copy into it or arrive on its mbarriers).
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

bool PtxCodegen::clustered() const {
    return clusterShape(options_.schedule).clustered();
}

std::string PtxCodegen::clusterRank() {
    if (clusterRank_.empty()) {
        clusterRank_ = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("mov.u32 {}, %cluster_ctarank", clusterRank_));
    }
    return clusterRank_;
}

void PtxCodegen::mbarriersInitialized() {
    writer_.instruction("fence.mbarrier_init.release.cluster");
    stageBarrier();
    if (clustered())
        clusterRank();
}

// The producers' way out is their own: joined with the consumers' at the kernel's end, one label
// would have both paths meet where the producers' registers are few (setmaxnreg.dec).
void PtxCodegen::leaveCluster() {
    writer_.instruction("barrier.cluster.arrive.release");
    writer_.instruction("barrier.cluster.wait.acquire");
    writer_.instruction("ret");
}

// Within the pipeline the cluster's barrier orders work, not memory: what it waits for (the
// peers' wgmma reads of a copy, done by wgmma.wait_group) and what follows it (the copy engine's
// next writes) are the async proxy's, so its arrive is relaxed; with .release, a fence of the
// cluster's scope on every workitem each K step, the 4096^3 kernel ran 60% slower.
void PtxCodegen::stageBarrier() {
    if (!clustered()) {
        writer_.instruction("bar.sync 0");
        return;
    }
    writer_.instruction("barrier.cluster.arrive.relaxed.aligned");
    writer_.instruction("barrier.cluster.wait.aligned");
}

// The peer's rank is read where it is needed rather than kept: the consumers' loop holds the
// accumulators, and one register more across it spilled the persistent kernels of 128 x 256 tiles.
// The remote arrival has the default semantics (release at the workgroup's scope), as the
// producer's wait has (acquire, likewise), as in CUTLASS's pipelines: the consumers' reads it
// releases are wgmma's, complete by wgmma.wait_group, and what it lets happen is the copy
// engine's write. With .release.cluster and .acquire.cluster, fences of the cluster's scope on
// every arrival and wait, the 4096^3 persistent kernel ran at 323 us against 203 us (the H100,
// bench/results/2026-11-26-h100-clusters-fix.md).
void PtxCodegen::releaseCopy(std::string const& predicate, std::string const& empty) {
    writer_.instruction(
        fmt::format("@{} mbarrier.arrive.shared::cta.b64 _, [{}]", predicate, empty));
    if (!clustered())
        return;
    KILN_ASSERT(clusterShape(options_.schedule).size() == 2, "a cluster of {} workgroups",
                clusterShape(options_.schedule).size());
    std::string const peer = writer_.newRegister(PtxType::B32),
                      remote = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.u32 {}, %cluster_ctarank", peer));
    writer_.instruction(fmt::format("xor.b32 {0}, {0}, 1", peer));
    writer_.instruction(fmt::format("mapa.shared::cluster.u32 {}, {}, {}", remote, empty, peer));
    writer_.instruction(
        fmt::format("@{} mbarrier.arrive.shared::cluster.b64 _, [{}]", predicate, remote));
}

bool PtxCodegen::sharedAcrossCluster(std::array<ExprPtr, 3> const& origin) const {
    ClusterShape const shape = clusterShape(options_.schedule);
    if (!shape.clustered())
        return false;
    auto const& axis = shape_.workgroups[shape.m > 1 ? 0 : 1];
    if (!axis)
        return false;
    // The tile's place does not change from one workgroup of the cluster to the next.
    std::map<Id, ExprPtr> const next{{*axis, index(*axis) + literal(1)}};
    for (std::size_t a = 1; a < origin.size(); ++a)
        if (!equal(simplify(substitute(origin[a], next)), simplify(origin[a])))
            return false;
    return true;
}

} // namespace kiln::lowering::detail
