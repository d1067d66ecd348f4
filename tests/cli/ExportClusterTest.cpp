// ExportClusterTest.cpp: the launchers kiln export writes for a kernel launched in thread-block
// clusters (CLUSTER_M, CLUSTER_N; the manifest's "cluster"): the C++ header gives every launch the
// cluster (kCluster in its LaunchConfig) and sizes a persistent grid in whole clusters; the C ABI
// launches with cuLaunchKernelEx and the cluster attribute, and its persistent grid is whole
// clusters; the C source compiles with -Werror where a C compiler is found. A kernel without
// clusters is exported as before (the golden files of ExportHeaderTest and ExportCapiTest).
#include "ExportCapi.h"
#include "ExportHeader.h"
#include "ExportedGemm.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kiln;
using namespace kiln::cli;

namespace {

// The TMA GEMM in clusters of two along M, persistent.
lowering::EmittedKernel clusteredGemm() {
    lowering::EmittedKernel k = kiln::test::exportedTmaGemm();
    k.schedule["CLUSTER_M"] = 2;
    k.schedule["PERSISTENT"] = 1;
    k.cluster = {2, 1, 1};
    k.workgroupsPerMultiprocessor = 1;
    return k;
}

bool contains(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

TEST(ExportCluster, TheHeaderGivesEveryLaunchTheCluster) {
    std::string const header = generateHeader(clusteredGemm(), {.name = "gemm"});
    EXPECT_TRUE(contains(header, "inline constexpr kiln::runtime::Dim3 kCluster{2u, 1u, 1u};"))
        << header;
    EXPECT_TRUE(contains(header, "kBlock, kSharedBytes, kCluster}, arguments);")) << header;
    EXPECT_TRUE(contains(header, "static_cast<std::uint32_t>(kCluster.count()))")) << header;
    // Without clusters: no cluster, as before.
    std::string const plain = generateHeader(kiln::test::exportedTmaGemm(), {.name = "gemm"});
    EXPECT_FALSE(contains(plain, "kCluster"));
    EXPECT_TRUE(contains(plain, "kSharedBytes, kiln::runtime::Dim3{}}, arguments);"));
}

TEST(ExportCluster, TheCLauncherLaunchesInClusters) {
    CapiOptions const options{.name = "gemm", .origin = "a test", .checked = "not"};
    std::string const source = generateCapiSource(clusteredGemm(), options);
    EXPECT_TRUE(contains(source, "static const unsigned kiln_cluster[3] = {2u, 1u, 1u};"));
    EXPECT_TRUE(contains(source, "{\"cuLaunchKernelEx\", offsetof(struct kiln_driver, "
                                 "cuLaunchKernelEx), 0},"));
    EXPECT_TRUE(contains(source, "cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;"));
    EXPECT_TRUE(contains(source, "(code = kiln_launch_in_clusters(function, grid, "
                                 "(CUstream)stream, arguments))"));
    EXPECT_FALSE(contains(source, "kiln_cuda.cuLaunchKernel("));
    // The persistent grid: whole clusters, at least one, no more than the tiles rounded up.
    EXPECT_TRUE(contains(source, "grid[0] = (int64_t)multiprocessors * per_multiprocessor / "
                                 "cluster * cluster;"));
    std::string const plain = generateCapiSource(kiln::test::exportedTmaGemm(), options);
    EXPECT_FALSE(contains(plain, "kiln_cluster"));
    EXPECT_FALSE(contains(plain, "cuLaunchKernelEx"));

    // It compiles as the golden source does (export-capi.sh), where a C compiler is found.
    if (std::system("cc --version > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "no C compiler (cc) on this machine";
    auto const folder = std::filesystem::temp_directory_path() /
                        ("kiln-export-cluster-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "gemm_capi.h") << generateCapiHeader(clusteredGemm(), options);
    std::ofstream(folder / "gemm_capi.c") << source;
    std::string const command = "cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I" +
                                folder.string() + " " + (folder / "gemm_capi.c").string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::filesystem::remove_all(folder);
}

} // namespace
