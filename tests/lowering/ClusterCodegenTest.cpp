// ClusterCodegenTest.cpp: CLUSTER_M and CLUSTER_N, the wgmma GEMM in thread-block clusters of two
// workgroups whose shared operand the copy engine multicasts (Clusters.h, ptx/PtxClusters.cpp):
// what the kernel issues (each workgroup's part of the shared tile, multicast to both; its own
// tile alone), how the cluster's workgroups wait for each other (empty mbarriers that count the
// consumers of both, remote arrivals, cluster barriers at the start and the end), the cluster the
// manifest declares, the schedules refused by name, and every variant assembled by ptxas without
// spills; the blocks of tiles clusters take (TileOrder.h), each tile once, the workgroups of a
// cluster on neighbouring tiles, with and without PERSISTENT and GROUP_M. The GPU runs them in
// tests/lowering/gpu/ClusterGemmGpuTest.cpp.
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/TileOrder.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/PersistentGrid.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>

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

Schedule withParameters(Schedule schedule, Schedule const& more) {
    for (auto const& [name, value] : more)
        schedule[name] = value;
    return schedule;
}

lowering::EmittedKernel emit(std::string const& command, Schedule const& schedule,
                             std::string const& target = "sm_90a") {
    return lowering::emitKernel(lowered(command, "gemm.pipeline.json", schedule, target),
                                {.target = target, .schedule = schedule});
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
    // and on its peer's (mapa), and the producer waits on its own. Neither the arrival nor the
    // wait is ordered at the cluster's scope: such fences on each cost the H100 60%.
    EXPECT_EQ(occurrences(kernel.code, "], 16;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.shared::cta.b64 _, ["), 1u);
    EXPECT_EQ(occurrences(kernel.code, "mapa.shared::cluster.u32"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.shared::cluster.b64 _, ["), 1u);
    EXPECT_EQ(occurrences(kernel.code, "release.cluster.shared::cluster"), 0u);
    EXPECT_EQ(occurrences(kernel.code, ".acquire.cluster"), 0u);
    // A barrier of the cluster after the mbarriers' initialization (aligned: every workitem is
    // there) and one before each way out of the kernel, the producers' and the consumers' (not
    // aligned: each comes from a branch); none of the workgroup's alone.
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.relaxed.aligned;\n    "
                                       "barrier.cluster.wait.aligned;"),
              1u);
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.release;\n    "
                                       "barrier.cluster.wait.acquire;\n    ret;"),
              2u);
    EXPECT_EQ(occurrences(kernel.code, "ret;"), 2u);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), 0u);

    auto const manifest = manifestOf(kernel);
    ASSERT_TRUE(manifest.cluster);
    EXPECT_EQ(*manifest.cluster, (runtime::Dim3{2, 1, 1}));
    EXPECT_EQ(boxOf(manifest, "A").toString(), "f16 box [64, 128] swizzle 128B");
    EXPECT_EQ(boxOf(manifest, "B").toString(), "f16 box [64, 32] swizzle 128B");
    // The stages and their mbarriers are the unclustered kernel's.
    EXPECT_EQ(kernel.sharedBytes, 4u * (128 * 64 + 64 * 256) * 2 + 2 * 4 * 8);
}

TEST(ClusterCodegen, EveryMatrixDescriptorKeepsItsAddressInTheFourteenBitField) {
    // In a cluster a workgroup's shared addresses carry its rank above the 18 bits of its own
    // shared memory. The descriptor's start address is 14 bits (the address >> 4); a bit past
    // them spilled into the leading byte offset, and wgmma read the second 64-column block of
    // an N-major B from the wrong place in the cluster's second workgroup (found on an H100:
    // only rank 1's columns 64-127 of every 128 wrong, with or without multicast).
    auto const kernel = emit("gemm-f16.json", clustered(128, 128, 3, 2, 1, 0));
    std::size_t const descriptors = occurrences(kernel.code, ", 4;\n    and.b64 ");
    EXPECT_EQ(descriptors, 2u); // A's and B's
    EXPECT_EQ(occurrences(kernel.code, ", 16383;\n    or.b64 "), descriptors);
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
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.relaxed.aligned;"), 2u);
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
}

// The workgroup's number as an index, the grid's tiles as arguments X and Y.
class WorkgroupNumber : public Environment {
public:
    std::int64_t number = 0, rows = 0, columns = 0;
    Value index(Id) const override { return Value::integer(number); }
    Value argument(expr::Argument const& a) const override {
        return Value::integer(a.name == "X" ? rows : columns);
    }
};

// Every workgroup of a grid of `rows` x `columns` tiles in clusters of clusterM x clusterN: the
// tile clusteredTileIndices gives each, in the order of their numbers.
std::vector<std::pair<std::int64_t, std::int64_t>>
clusterTiles(std::int64_t rows, std::int64_t columns, std::int64_t group, std::int64_t clusterM,
             std::int64_t clusterN) {
    auto const indices = lowering::clusteredTileIndices(
        index(1), {argument("X", DataType::I64), argument("Y", DataType::I64)}, group, clusterM,
        clusterN);
    WorkgroupNumber at;
    at.rows = rows;
    at.columns = columns;
    std::int64_t const count = (rows + clusterM - 1) / clusterM * clusterM *
                               ((columns + clusterN - 1) / clusterN * clusterN);
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (at.number = 0; at.number < count; ++at.number)
        out.emplace_back(evaluateInt(*indices[0], at), evaluateInt(*indices[1], at));
    return out;
}

TEST(ClusterCodegen, ClustersTakeBlocksOfNeighbouringTilesEachTileOnce) {
    for (auto const& [clusterM, clusterN] : {std::pair{2, 1}, std::pair{1, 2}})
        for (auto const& [rows, columns] :
             {std::pair{4, 3}, std::pair{5, 3}, std::pair{3, 5}, std::pair{1, 7}, std::pair{7, 1},
              std::pair{9, 8}, std::pair{32, 16}})
            for (std::int64_t group : {0, 1, 2, 8}) {
                if ((clusterM > 1 && rows < 2) || (clusterN > 1 && columns < 2))
                    continue; // refused by code generation: no neighbour to share with
                auto const tiles = clusterTiles(rows, columns, group, clusterM, clusterN);
                std::set<std::pair<std::int64_t, std::int64_t>> inside;
                for (std::size_t w = 0; w < tiles.size(); ++w) {
                    auto const [x, y] = tiles[w];
                    // The two workgroups of a cluster (numbers 2c and 2c + 1) share the column
                    // (CLUSTER_M) or the row (CLUSTER_N) of tiles and are neighbours.
                    if (w % 2 == 1) {
                        auto const [px, py] = tiles[w - 1];
                        EXPECT_EQ(clusterM > 1 ? y : x, clusterM > 1 ? py : px);
                        EXPECT_EQ(clusterM > 1 ? x : y, (clusterM > 1 ? px : py) + 1);
                        EXPECT_EQ((clusterM > 1 ? px : py) % 2, 0);
                    }
                    bool const past = x >= rows || y >= columns;
                    // Past the edge only along the cluster's axis, by one tile at most.
                    EXPECT_LT(x, clusterM > 1 ? rows + 1 : rows);
                    EXPECT_LT(y, clusterN > 1 ? columns + 1 : columns);
                    if (!past) {
                        EXPECT_TRUE(inside.insert({x, y}).second)
                            << "tile " << x << ", " << y << " taken twice";
                    }
                }
                EXPECT_EQ(static_cast<std::int64_t>(inside.size()), rows * columns)
                    << rows << " x " << columns << " in clusters of " << clusterM << " x "
                    << clusterN << ", GROUP_M=" << group;
            }
}

TEST(ClusterCodegen, GroupMCountsRowsOfTilesAsRowsOfBlocks) {
    // 8 x 3 tiles in clusters of 2 along M, GROUP_M=4: two rows of blocks walked column by
    // column, as a grid of 4 x 3 blocks in groups of 2 rows would be.
    auto const tiles = clusterTiles(8, 3, 4, 2, 1);
    std::vector<std::pair<std::int64_t, std::int64_t>> const expected = {
        {0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 1},
        {0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 0}, {5, 0}, {6, 0}, {7, 0},
        {4, 1}, {5, 1}, {6, 1}, {7, 1}, {4, 2}, {5, 2}, {6, 2}, {7, 2}};
    EXPECT_EQ(tiles, expected);
}

TEST(ClusterCodegen, TheGridIsAWholeNumberOfClusters) {
    // Without PERSISTENT the manifest's grid is the tiles' rounded up along the cluster's axis.
    auto const json =
        nlohmann::json::parse(emit("gemm-f16.json", clustered(128, 256, 4, 2, 1)).manifestJson());
    EXPECT_EQ(json["grid"],
              nlohmann::json({"ceildiv(ceildiv(M, 128), 2) * 2", "ceildiv(N, 256)", "1"}));
    // A persistent grid is whole clusters: the tiles rounded up, what the device holds rounded
    // down (132 multiprocessors, one workgroup each), at least one cluster.
    EXPECT_EQ(runtime::persistentGrid({33, 16, 1}, 1, 132, 2), (runtime::Dim3{132, 1, 1}));
    EXPECT_EQ(runtime::persistentGrid({3, 1, 1}, 1, 132, 2), (runtime::Dim3{4, 1, 1}));
    EXPECT_EQ(runtime::persistentGrid({40, 40, 1}, 1, 131, 2), (runtime::Dim3{130, 1, 1}));
    EXPECT_EQ(runtime::persistentGrid({40, 40, 1}, 1, 1, 2), (runtime::Dim3{2, 1, 1}));
}

TEST(ClusterCodegen, PersistentClustersStepByClusters) {
    // One-dimensional persistent grid in clusters of two along x; the loop over tiles runs to
    // the tiles rounded up to whole blocks, so that both workgroups of a cluster loop as many
    // times; the mbarriers are set up once, before it.
    Schedule schedule = clustered(128, 256, 4, 2, 1);
    schedule["PERSISTENT"] = 1;
    schedule["GROUP_M"] = 8;
    auto const kernel = emit("gemm-f16.json", schedule);
    EXPECT_NE(kernel.code.find(".reqnctapercluster 2, 1, 1\n"), std::string::npos);
    EXPECT_EQ(*manifestOf(kernel).cluster, (runtime::Dim3{2, 1, 1}));
    EXPECT_GT(manifestOf(kernel).workgroupsPerMultiprocessor, 0u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.init.shared::cta.b64"), 8u);
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.relaxed.aligned;"), 1u);
    // The producer's loop and the consumers' loop over tiles, each leaving through the cluster's
    // barrier on its own path.
    EXPECT_EQ(occurrences(kernel.code, "barrier.cluster.arrive.release;\n    "
                                       "barrier.cluster.wait.acquire;\n    ret;"),
              2u);
    EXPECT_EQ(occurrences(kernel.code, kMulticast), 4u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.shared::cluster.b64"),
              2u); // each slice's, and each tile's last
    // Without a producer, the barrier between tiles is the cluster's too: the next tile's first
    // copies multicast into what the peer read last.
    schedule["WARP_SPECIALIZE"] = 0;
    auto const plain = emit("gemm-f16.json", schedule);
    EXPECT_EQ(occurrences(plain.code, "bar.sync"), 0u);
    EXPECT_EQ(occurrences(plain.code, "barrier.cluster.arrive.relaxed.aligned;"), 3u);
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

// Known: the persistent 128 x 256 kernel with a producer warpgroup, GROUP_M=8 and CLUSTER_M=2
// (the tuner's point at 4096^3 with a cluster) is at the edge of the 168 registers 384 workitems
// enter with, and ptxas spills one register (4 bytes) where small changes move it (the same
// kernel without GROUP_M, or along N with it, does not). This test fails when it grows.
TEST(ClusterCodegen, ThePersistentGroupedClusterKernelSpillsAtMostOneRegister) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const kernel = emit("gemm-f16.json", withParameters(clustered(128, 256, 4, 2, 1),
                                                             {{"PERSISTENT", 1}, {"GROUP_M", 8}}));
    auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_LE(result.value().spillStores, 4);
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
                   clustered(128, 256, 4, 1, 2)},
        std::tuple{"f16_128x256_cluster_m_grouped", "gemm-f16.json",
                   withParameters(clustered(128, 256, 4, 2, 1), {{"GROUP_M", 8}})},
        std::tuple{"f16_128x256_cluster_m_persistent", "gemm-f16.json",
                   withParameters(clustered(128, 256, 4, 2, 1), {{"PERSISTENT", 1}})},
        std::tuple{
            "f16_128x256_cluster_n_persistent_grouped", "gemm-f16.json",
            withParameters(clustered(128, 256, 4, 1, 2), {{"PERSISTENT", 1}, {"GROUP_M", 8}})},
        std::tuple{
            "f16_128x256_cluster_m_persistent_without_producer", "gemm-f16.json",
            withParameters(clustered(128, 256, 4, 2, 1, 0), {{"PERSISTENT", 1}, {"GROUP_M", 8}})},
        std::tuple{
            "f16_128x128_cluster_m_persistent_grouped", "gemm-f16.json",
            withParameters(clustered(128, 128, 4, 2, 1), {{"PERSISTENT", 1}, {"GROUP_M", 8}})},
        std::tuple{"f16_128x256_cluster_m_persistent_staged_epilogue", "gemm-f16.json",
                   withParameters(clustered(128, 256, 4, 2, 1),
                                  {{"PERSISTENT", 1}, {"GROUP_M", 8}, {"EPILOGUE", 1}})},
        std::tuple{"f16_128x256_cluster_n_staged_epilogue", "gemm-f16.json",
                   withParameters(clustered(128, 256, 4, 1, 2), {{"EPILOGUE", 1}})},
        std::tuple{
            "bf16_transposed_128x128_cluster_n_persistent", "gemm-bf16.json",
            withParameters(clustered(128, 128, 3, 1, 2), {{"PERSISTENT", 1}, {"GROUP_M", 8}})}),
    [](auto const& p) { return std::get<0>(p.param); });

} // namespace
} // namespace kiln::test
