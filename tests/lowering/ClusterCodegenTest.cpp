// ClusterCodegenTest.cpp: CLUSTER_M and CLUSTER_N, the wgmma GEMM in thread-block clusters of two
// workgroups whose shared operand the copy engine multicasts (Clusters.h, ptx/PtxClusters.cpp):
// what the kernel issues (each workgroup's part of the shared tile, multicast to both; its own
// tile alone), how the cluster's workgroups wait for each other (empty mbarriers that count the
// consumers of both, remote arrivals, cluster barriers at the start and the end), the cluster the
// manifest declares, the schedules refused by name, and every variant assembled by ptxas without
// spills. The GPU runs them in tests/lowering/gpu/ClusterGemmGpuTest.cpp.
#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

Schedule clustered(std::int64_t mtM, std::int64_t mtN, std::int64_t stages, std::int64_t clusterM,
                   std::int64_t clusterN, std::int64_t warpSpecialize = 1) {
    return {{"MMA", 1},
            {"MT_M", mtM},
            {"MT_N", mtN},
            {"MT_K", 64},
            {"WT_M", 16},
            {"STAGES", stages},
            {"TMA", 1},
            {"WARP_SPECIALIZE", warpSpecialize},
            {"CLUSTER_M", clusterM},
            {"CLUSTER_N", clusterN}};
}

lowering::EmittedKernel emit(std::string const& command, Schedule const& schedule,
                             std::string const& target = "sm_90a") {
    return lowering::emitKernel(lowered(command, "gemm.pipeline.json", schedule, target),
                                {.target = target, .schedule = schedule});
}

std::size_t occurrences(std::string const& text, std::string const& what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at)
        ++n;
    return n;
}

constexpr char kCopy[] =
    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [";
constexpr char kMulticast[] = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                              "complete_tx::bytes.multicast::cluster [";

runtime::KernelManifest manifestOf(lowering::EmittedKernel const& kernel) {
    auto manifest = runtime::KernelManifest::fromJson(kernel.manifestJson(), "manifest");
    EXPECT_TRUE(manifest.ok()) << manifest.error().message();
    return manifest.value();
}

runtime::TensorMapShape boxOf(runtime::KernelManifest const& manifest, std::string const& tensor) {
    for (auto const& p : manifest.parameters)
        if (p.kind == runtime::ParameterKind::TensorMap && p.tensor == tensor)
            return *p.tensorMap;
    ADD_FAILURE() << "no tensor map of " << tensor;
    return {};
}

TEST(ClusterCodegen, TwoWorkgroupsAlongMShareBAndEachMulticastsHalfOfIt) {
    // f16, 128 x 256 tiles: A (M x K) is each workgroup's own, one box of 64 x 128; B (K x N,
    // N-major) is the same for both (same columns of tiles), four boxes of 64 x 64, of which
    // each workgroup loads 32 rows (its rank's half) and multicasts them to both (mask 0b11).
    auto const kernel = emit("gemm-f16.json", clustered(128, 256, 4, 2, 1));
    EXPECT_NE(kernel.code.find(".maxntid 4, 8, 12\n.reqnctapercluster 2, 1, 1\n"),
              std::string::npos);
    EXPECT_EQ(occurrences(kernel.code, kCopy), 1u);
    EXPECT_EQ(occurrences(kernel.code, kMulticast), 4u);
    EXPECT_EQ(occurrences(kernel.code, "], [%b18], %h"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "mov.b16 %h0, 3;"), 1u);
    // Each half starts 32 rows further in the tensor and 32 x 128 bytes further in the copy.
    EXPECT_EQ(occurrences(kernel.code, ", 32, %b"), 4u);
    EXPECT_EQ(occurrences(kernel.code, ", 4096, %b"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "mov.u32 %b14, %cluster_ctarank;"), 1u);
    // The full mbarrier expects the whole stage: its A, its half of B and its peer's half.
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%b18], "
                                       "49152;"),
              1u);
    // The empty mbarriers count the consumer warps of both workgroups: each arrives on its own
    // and on its peer's (mapa), and the producer waits with cluster scope.
    EXPECT_EQ(occurrences(kernel.code, "], 16;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.shared::cta.b64 _, ["), 1u);
    EXPECT_EQ(occurrences(kernel.code, "mapa.shared::cluster.u32"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, ["),
              1u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"),
              1u);
    // A barrier of the cluster after the mbarriers' initialization (aligned: every workitem is
    // there) and one before the kernel ends (not aligned: the producers come from a branch);
    // none of the workgroup's alone.
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.release.aligned;\n    "
                                       "barrier.cluster.wait.acquire.aligned;"),
              1u);
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.release;\n    "
                                       "barrier.cluster.wait.acquire;\n    ret;"),
              1u);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), 0u);

    auto const manifest = manifestOf(kernel);
    ASSERT_TRUE(manifest.cluster);
    EXPECT_EQ(*manifest.cluster, (runtime::Dim3{2, 1, 1}));
    EXPECT_EQ(boxOf(manifest, "A").toString(), "f16 box [64, 128] swizzle 128B");
    EXPECT_EQ(boxOf(manifest, "B").toString(), "f16 box [64, 32] swizzle 128B");
    // The stages and their mbarriers are the unclustered kernel's.
    EXPECT_EQ(kernel.sharedBytes, 4u * (128 * 64 + 64 * 256) * 2 + 2 * 4 * 8);
}

TEST(ClusterCodegen, TwoWorkgroupsAlongNShareA) {
    // 128 x 128 tiles, neighbours along N: A's box of 64 x 128 is split into two of 64 rows, B
    // (two boxes of 64 x 64) is each workgroup's own.
    auto const kernel = emit("gemm-f16.json", clustered(128, 128, 4, 1, 2));
    EXPECT_NE(kernel.code.find(".reqnctapercluster 1, 2, 1\n"), std::string::npos);
    EXPECT_EQ(occurrences(kernel.code, kMulticast), 1u);
    EXPECT_EQ(occurrences(kernel.code, kCopy), 2u);
    auto const manifest = manifestOf(kernel);
    EXPECT_EQ(*manifest.cluster, (runtime::Dim3{1, 2, 1}));
    EXPECT_EQ(boxOf(manifest, "A").toString(), "f16 box [64, 64] swizzle 128B");
    EXPECT_EQ(boxOf(manifest, "B").toString(), "f16 box [64, 64] swizzle 128B");
    // bf16 stored transposed (A is K x M: two boxes of 64 x 64 along M; B is N x K, one box
    // of 64 x 128): along N the workgroups share A, each loading 32 of the 64 K rows of both
    // of its boxes.
    auto const transposed = emit("gemm-bf16.json", clustered(128, 128, 3, 1, 2));
    EXPECT_EQ(occurrences(transposed.code, kMulticast), 2u);
    EXPECT_EQ(occurrences(transposed.code, kCopy), 1u);
    EXPECT_EQ(boxOf(manifestOf(transposed), "A").toString(), "bf16 box [64, 32] swizzle 128B");
}

TEST(ClusterCodegen, WithoutAProducerEachIterationWaitsForTheCluster) {
    // The one workitem that issues overwrites a copy in both workgroups: the barrier each
    // iteration is the cluster's, and so is the one after the mbarriers' initialization.
    auto const kernel = emit("gemm-f16.json", clustered(128, 256, 4, 2, 1, 0));
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.release.aligned;"), 2u);
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.release;"), 1u);
    // Two stages ahead (one wgmma group in flight) and one in the loop, 4 halves of B each.
    EXPECT_EQ(occurrences(kernel.code, kMulticast), 3u * 4);
    EXPECT_EQ(occurrences(kernel.code, "mapa"), 0u);
}

TEST(ClusterCodegen, AKernelWithoutClustersDeclaresNone) {
    auto const kernel = emit("gemm-f16.json", clustered(128, 256, 4, 1, 1));
    EXPECT_EQ(occurrences(kernel.code, "cluster_ctarank"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "reqnctapercluster"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster"), 0u);
    EXPECT_FALSE(manifestOf(kernel).cluster);
    EXPECT_EQ(kernel.manifestJson().find("\"cluster\""), std::string::npos);
}

void expectRefused(Schedule const& schedule, std::string const& message,
                   std::string const& target = "sm_90a") {
    try {
        emit("gemm-f16.json", schedule, target);
        ADD_FAILURE() << "accepted " << lowering::scheduleText(schedule);
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(ClusterCodegen, ClustersTheMulticastCannotServeAreRefusedByName) {
    expectRefused(clustered(128, 128, 4, 3, 1), "CLUSTER_M=3 is out of range: 1 (no cluster) or 2");
    expectRefused(clustered(128, 128, 4, 1, 0), "CLUSTER_N=0 is out of range");
    expectRefused(clustered(128, 128, 4, 2, 2),
                  "CLUSTER_M=2 and CLUSTER_N=2 make clusters of 4 workgroups; at most 2");
    auto withoutTma = clustered(128, 128, 4, 2, 1, 0);
    withoutTma["TMA"] = 0;
    expectRefused(withoutTma, "clusters need TMA=1");
    auto grouped = clustered(128, 128, 4, 2, 1);
    grouped["GROUP_M"] = 8;
    expectRefused(grouped, "with GROUP_M=8");
}

class ClusterPtxas
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, Schedule>> {};

TEST_P(ClusterPtxas, EveryVariantAssemblesWithoutSpills) {
    auto const& [name, command, schedule] = GetParam();
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const kernel = emit(command, schedule);
    auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(result.ok()) << result.error().message() << "\n" << kernel.code;
    EXPECT_EQ(result.value().spillStores, 0) << name;
    EXPECT_LE(result.value().registers, 255) << name;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, ClusterPtxas,
    ::testing::Values(
        std::tuple{"f16_128x256_cluster_m_specialized", "gemm-f16.json",
                   clustered(128, 256, 4, 2, 1)},
        std::tuple{"f16_128x256_cluster_n_specialized", "gemm-f16.json",
                   clustered(128, 256, 4, 1, 2)},
        std::tuple{"f16_128x256_cluster_m", "gemm-f16.json", clustered(128, 256, 4, 2, 1, 0)},
        std::tuple{"f16_128x128_cluster_n", "gemm-f16.json", clustered(128, 128, 3, 1, 2, 0)},
        std::tuple{"f16_64x64_cluster_m_specialized", "gemm-f16.json", clustered(64, 64, 2, 2, 1)},
        std::tuple{"bf16_transposed_128x128_cluster_m_specialized", "gemm-bf16.json",
                   clustered(128, 128, 3, 2, 1)},
        std::tuple{"bf16_transposed_128x256_cluster_n_specialized", "gemm-bf16.json",
                   clustered(128, 256, 4, 1, 2)}),
    [](auto const& p) { return std::get<0>(p.param); });

} // namespace
} // namespace kiln::test
