// ClusterGemmGpuTest.cpp: the wgmma GEMM in thread-block clusters of two workgroups (CLUSTER_M,
// CLUSTER_N; Clusters.h) on an sm_90a GPU, through the launcher sweeps and `kiln run` use
// (scheduler::runOnDevice: the manifest's cluster passed to cuLaunchKernelEx), against the
// reference (the CPU, or cuBLAS past 1e8 FLOPs): the shared operand multicast by the copy engine
// in halves, with and without a producer warpgroup, along M (B shared) and along N (A shared),
// f16 and bf16 stored transposed, sizes that are and are not multiples of the tiles, K loops
// shorter and longer than the ring of copies, GROUP_M's order of blocks of tiles, and persistent
// kernels (PERSISTENT=1) whose loop steps by clusters. Where the tiles along the cluster's axis
// are an odd number, the last cluster's second workgroup is a guarded peer past the edge: it
// loads its half of the shared operand for its peer and stores nothing (TileOrder.h). A launch
// of a grid that is not a whole number of clusters is refused by name (LaunchLimits; the
// manifest's grid always is one). Skipped on other GPUs.
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

Schedule with(Schedule schedule, Schedule const& more) {
    for (auto const& [name, value] : more)
        schedule[name] = value;
    return schedule;
}

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

struct ClusterCase {
    std::string name, command;
    Schedule params;
    std::map<std::string, double> problem;
};

class ClusterGpuTest : public runtime::test::GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (!IsSkipped() && device()->description().target != "sm_90a")
            GTEST_SKIP() << "clusters with TMA multicast need sm_90a, not "
                         << device()->description().target;
    }

    runtime::Expected<scheduler::DeviceRunResult> run(ClusterCase const& c) {
        KernelGraph const graph = lowered(c.command, "gemm.pipeline.json", c.params, "sm_90a");
        auto const kernel = lowering::emitKernel(graph, {.target = "sm_90a", .schedule = c.params});
        EXPECT_NE(kernel.code.find(".multicast::cluster"), std::string::npos);
        Command const command = loadCommand(sourcePath("examples/" + c.command));
        auto problem = command.defaults;
        for (auto const& [name, value] : c.problem)
            problem[name] = value;
        return scheduler::runOnDevice(device(), command, problem, graph, kernel);
    }
};

class ClusterGemmGpuTest : public ClusterGpuTest,
                           public ::testing::WithParamInterface<ClusterCase> {};

TEST_P(ClusterGemmGpuTest, MatchesTheReference) {
    ClusterCase const& c = GetParam();
    auto const result = run(c);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
        << "in " << result.value().worstTensor;
    std::printf("[ gpu      ] %s: max relative error %.3g against %s, %d registers\n",
                c.name.c_str(), result.value().maxRelativeError, result.value().reference.c_str(),
                result.value().registers);
}

// Sizes whose tiles along the cluster's axis are an even number (4 x 128 rows: M in (384, 512];
// 2 x 256 columns: N in (256, 512]), then odd numbers (a guarded peer), grouped and persistent.
INSTANTIATE_TEST_SUITE_P(
    Shapes, ClusterGemmGpuTest,
    ::testing::Values(
        ClusterCase{"f16_cluster_m_specialized_round",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1),
                    {{"M", 512}, {"N", 512}, {"K", 512}}},
        ClusterCase{"f16_cluster_m_specialized_ragged",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1),
                    {{"M", 500}, {"N", 520}, {"K", 200}}},
        ClusterCase{"f16_cluster_m_specialized_one_k_slice",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1),
                    {{"M", 200}, {"N", 8}, {"K", 8}}},
        ClusterCase{"f16_cluster_m_specialized_long_k",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1),
                    {{"M", 4000}, {"N", 264}, {"K", 2056}}},
        ClusterCase{"f16_cluster_n_specialized_ragged",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 1, 2),
                    {{"M", 300}, {"N", 504}, {"K", 1000}}},
        ClusterCase{"f16_cluster_m_ragged",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1, 0),
                    {{"M", 500}, {"N", 520}, {"K", 200}}},
        ClusterCase{"f16_cluster_n_3_stages",
                    "gemm-f16.json",
                    clustered(128, 128, 3, 1, 2, 0),
                    {{"M", 384}, {"N", 256}, {"K", 1024}}},
        ClusterCase{"f16_64x64_cluster_m_specialized_2_stages",
                    "gemm-f16.json",
                    clustered(64, 64, 2, 2, 1),
                    {{"M", 250}, {"N", 72}, {"K", 1000}}},
        ClusterCase{"bf16_transposed_cluster_m_specialized",
                    "gemm-bf16.json",
                    clustered(128, 128, 3, 2, 1),
                    {{"M", 200}, {"N", 137}, {"K", 520}}},
        ClusterCase{"bf16_transposed_cluster_n_specialized",
                    "gemm-bf16.json",
                    clustered(128, 128, 3, 1, 2),
                    {{"M", 200}, {"N", 137}, {"K", 520}}},
        ClusterCase{"bf16_transposed_cluster_n_specialized_round",
                    "gemm-bf16.json",
                    clustered(128, 256, 4, 1, 2),
                    {{"M", 1024}, {"N", 1024}, {"K", 1024}}},
        // An odd number of tiles along the cluster's axis (3 rows of 128, 3 columns of 256, a
        // single tile): the last cluster's second workgroup is past the edge.
        ClusterCase{"f16_cluster_m_specialized_odd_tiles",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1),
                    {{"M", 300}, {"N", 520}, {"K", 200}}},
        ClusterCase{"f16_cluster_m_odd_tiles",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1, 0),
                    {{"M", 300}, {"N", 264}, {"K", 1000}}},
        ClusterCase{"f16_cluster_n_specialized_odd_tiles",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 1, 2),
                    {{"M", 130}, {"N", 520}, {"K", 1000}}},
        ClusterCase{"f16_cluster_m_specialized_one_tile",
                    "gemm-f16.json",
                    clustered(128, 256, 4, 2, 1),
                    {{"M", 8}, {"N", 8}, {"K", 8}}},
        ClusterCase{"bf16_transposed_cluster_m_specialized_odd_tiles",
                    "gemm-bf16.json",
                    clustered(128, 128, 3, 2, 1),
                    // A is stored K x M: M x 2 bytes a row must be a multiple of 16 (TMA).
                    {{"M", 296}, {"N", 137}, {"K", 520}}},
        // GROUP_M's order of the clusters' blocks of tiles.
        ClusterCase{"f16_cluster_m_specialized_grouped",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 2, 1), {{"GROUP_M", 8}}),
                    {{"M", 2500}, {"N", 1304}, {"K", 520}}},
        ClusterCase{"f16_cluster_n_grouped_odd_tiles",
                    "gemm-f16.json",
                    with(clustered(128, 128, 4, 1, 2), {{"GROUP_M", 8}}),
                    {{"M", 1100}, {"N", 648}, {"K", 296}}},
        // Persistent: the loop over tiles steps by clusters, the ring carried from tile to tile.
        ClusterCase{"f16_cluster_m_specialized_persistent",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 2, 1), {{"PERSISTENT", 1}, {"GROUP_M", 8}}),
                    {{"M", 4096}, {"N", 4096}, {"K", 1024}}},
        ClusterCase{"f16_cluster_m_specialized_persistent_odd_tiles",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 2, 1), {{"PERSISTENT", 1}, {"GROUP_M", 8}}),
                    {{"M", 2000}, {"N", 3000}, {"K", 520}}},
        ClusterCase{"f16_cluster_n_specialized_persistent",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 1, 2), {{"PERSISTENT", 1}}),
                    {{"M", 1000}, {"N", 1304}, {"K", 1000}}},
        ClusterCase{"f16_cluster_m_persistent",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 2, 1, 0), {{"PERSISTENT", 1}, {"GROUP_M", 8}}),
                    {{"M", 1500}, {"N", 1000}, {"K", 696}}},
        ClusterCase{"f16_cluster_m_specialized_persistent_few_tiles",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 2, 1), {{"PERSISTENT", 1}}),
                    {{"M", 300}, {"N", 296}, {"K", 296}}},
        // The result staged in shared memory and stored by the copy engine (EPILOGUE=1), whose
        // stores past the edge (the guarded peer's) write nothing.
        ClusterCase{"f16_cluster_m_specialized_persistent_staged_epilogue_odd_tiles",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 2, 1),
                         {{"PERSISTENT", 1}, {"GROUP_M", 8}, {"EPILOGUE", 1}}),
                    {{"M", 1700}, {"N", 1000}, {"K", 520}}},
        ClusterCase{"f16_cluster_n_specialized_staged_epilogue",
                    "gemm-f16.json",
                    with(clustered(128, 256, 4, 1, 2), {{"EPILOGUE", 1}}),
                    {{"M", 300}, {"N", 704}, {"K", 296}}},
        ClusterCase{"bf16_transposed_cluster_n_specialized_persistent",
                    "gemm-bf16.json",
                    with(clustered(128, 128, 3, 1, 2), {{"PERSISTENT", 1}, {"GROUP_M", 8}}),
                    {{"M", 696}, {"N", 650}, {"K", 520}}}),
    [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
