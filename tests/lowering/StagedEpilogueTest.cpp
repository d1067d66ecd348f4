// StagedEpilogueTest.cpp: EPILOGUE=1, the wgmma GEMM's result staged in shared memory and written
// by the copy engine (StagedEpilogue.h, StagedTile.h, lowering/ptx/PtxEpilogue.cpp): what the
// kernel issues per block of the tile, with and without a producer warpgroup and persistent
// tiles; D's tensor map in the manifest beside the loads'; the staging buffers counted in the
// shared memory; the fused epilogues (bias + GELU, alpha * AB + beta * C) staged after they are
// computed, a kernel for known sizes loading its bias before the K loop; the schedules and
// outputs it refuses, by name; every variant assembled by ptxas without spills; a small
// persistent kernel against golden PTX. The GPU runs them in
// tests/lowering/gpu/StagedEpilogueGpuTest.cpp.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R StagedEpilogue    (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

Schedule staged(std::int64_t mtM, std::int64_t mtN, std::int64_t stages) {
    return {{"MMA", 1},   {"MT_M", mtM},      {"MT_N", mtN}, {"MT_K", 64},
            {"WT_M", 16}, {"STAGES", stages}, {"TMA", 1},    {"EPILOGUE", 1}};
}

Schedule with(Schedule schedule, std::string const& name, std::int64_t value) {
    schedule[name] = value;
    return schedule;
}

// The f16 winner at 4096^3 on an H100, its result staged.
Schedule winner() {
    return with(with(with(staged(128, 256, 4), "WARP_SPECIALIZE", 1), "PERSISTENT", 1), "GROUP_M",
                8);
}

lowering::EmittedKernel emit(std::string const& command, Schedule const& schedule,
                             std::string const& target = "sm_90a") {
    return lowering::emitKernel(lowered(command, "gemm.pipeline.json", schedule, target),
                                {.target = target, .schedule = schedule});
}

constexpr char kStore[] = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group";

TEST(StagedEpilogue, TheConsumersStageEachBlockAndOneWorkitemStoresIt) {
    auto const kernel = emit("gemm-f16.json", winner());
    // 256 columns of D: four blocks of 64, each one TMA store of a box of 64 x 128, issued by
    // one workitem after the consumers' barrier, in a group of its own.
    EXPECT_EQ(occurrences(kernel.code, kStore), 4u);
    EXPECT_EQ(occurrences(kernel.code, "cp.async.bulk.commit_group"), 4u);
    // Before each block the issuer waits until the store that used its buffer last has read it
    // (two buffers: one may still be read), and once after the tiles for all of them.
    EXPECT_EQ(occurrences(kernel.code, "cp.async.bulk.wait_group.read 1;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "cp.async.bulk.wait_group.read 0;"), 1u);
    // The writes made visible to the copy engine, and two barriers of the 256 consumers a block
    // (the producer warpgroup is loading the next tile meanwhile, and takes no part).
    EXPECT_EQ(occurrences(kernel.code, "fence.proxy.async.shared::cta;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 1, 256;"), 8u);
    // No store from registers: each of a workitem's 128 accumulators goes to shared memory, two
    // columns at a time.
    EXPECT_EQ(occurrences(kernel.code, "st.global"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "st.shared.b32"), 64u);
    EXPECT_EQ(occurrences(kernel.code, "st.shared.b16"), 0u);
    // The pipeline's four copies and eight mbarriers, then two 1024-byte aligned buffers of
    // 128 rows of 128 bytes.
    EXPECT_EQ(kernel.sharedBytes, 4u * (128 * 64 + 64 * 256) * 2 + 1024 + 2 * 128 * 128);
    EXPECT_LE(kernel.sharedBytes, 232448u); // what an H100 gives a workgroup
}

TEST(StagedEpilogue, TheManifestDeclaresDsTensorMapAsTheLoadsAre) {
    auto const kernel = emit("gemm-f16.json", staged(128, 128, 3));
    auto const manifest = runtime::KernelManifest::fromJson(kernel.manifestJson(), "manifest");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    std::vector<runtime::KernelParameter> maps;
    for (auto const& p : manifest.value().parameters)
        if (p.kind == runtime::ParameterKind::TensorMap)
            maps.push_back(p);
    ASSERT_EQ(maps.size(), 3u);
    EXPECT_EQ(maps[2].name, "D_tma");
    EXPECT_EQ(maps[2].tensor, "D");
    // A block is 64 columns of the tile's 128 rows.
    EXPECT_EQ(maps[2].tensorMap->toString(), "f16 box [64, 128] swizzle 128B");
    EXPECT_EQ(maps[2].offset % 64, 0u);
    auto const json = nlohmann::json::parse(kernel.manifestJson());
    nlohmann::json const* d = nullptr;
    for (auto const& p : json["parameters"])
        if (p["name"] == "D_tma")
            d = &p["tensor_map"];
    ASSERT_TRUE(d);
    EXPECT_EQ((*d)["sizes"], nlohmann::json({"N", "M"}));
    EXPECT_EQ((*d)["strides"], nlohmann::json({"N"}));
    // EPILOGUE=0 takes no map of D.
    for (auto const& p : emit("gemm-f16.json", with(staged(128, 128, 3), "EPILOGUE", 0)).parameters)
        EXPECT_NE(p.name, "D_tma");
}

TEST(StagedEpilogue, AFusedEpilogueIsComputedAndThenStaged) {
    // GELU(AB + bias): the bias read from memory, the chain computed in f32 and converted to f16
    // in registers, block by block, then written to the buffer.
    auto const gelu = emit("gemm-bias-gelu-f16.json", winner());
    EXPECT_EQ(occurrences(gelu.code, kStore), 4u);
    EXPECT_EQ(occurrences(gelu.code, "st.global"), 0u);
    EXPECT_GT(occurrences(gelu.code, "ld.global"), 0u);
    EXPECT_EQ(occurrences(gelu.code, "st.shared.b32"), 64u);
    // alpha * AB + beta * C: C is read in place with ld.global (another tensor than D, and each
    // element read before the tile is stored), the result staged.
    auto const beta = emit("gemm-bf16.json", with(staged(128, 128, 3), "PERSISTENT", 1));
    EXPECT_EQ(occurrences(beta.code, kStore), 2u);
    EXPECT_EQ(occurrences(beta.code, "st.global"), 0u);
    EXPECT_GT(occurrences(beta.code, "ld.global"), 0u);
}

TEST(StagedEpilogue, AKernelForKnownSizesLoadsItsBiasBeforeTheKLoop) {
    // At 4096^3 every bias load is inside the tensor and aligned: the consumers issue all of them
    // (32 words a workitem, one per column pair of its fragments) before their K loop's first
    // wgmma, and the epilogue converts what they loaded (PtxPreload.cpp).
    Schedule const schedule = winner();
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = schedule};
    options.sizes = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
    auto const known = lowering::emitKernel(
        lowered("gemm-bias-gelu-f16.json", "gemm.pipeline.json", schedule, "sm_90a"), options);
    std::size_t const first = known.code.find("wgmma.mma_async");
    ASSERT_NE(first, std::string::npos);
    std::string const before = known.code.substr(0, first), after = known.code.substr(first);
    EXPECT_EQ(occurrences(before, "// Bias loaded before the loop"), 1u);
    EXPECT_EQ(occurrences(before, "ld.global.b32"), 32u);
    EXPECT_EQ(occurrences(after, "ld.global"), 0u);
    auto const assembled = runtime::assemblePtx(known.code, "sm_90a");
    ASSERT_TRUE(assembled.ok()) << assembled.error().message();
    EXPECT_EQ(assembled.value().spillStores, 0);
    // For every size the bias may end inside a pair or a tile: loaded where it is used, masked.
    auto const any = emit("gemm-bias-gelu-f16.json", schedule);
    EXPECT_EQ(occurrences(any.code, "loaded before the loop"), 0u);
    EXPECT_GT(occurrences(any.code.substr(any.code.find("wgmma.mma_async")), "ld.global"), 0u);
}

TEST(StagedEpilogue, WithoutAProducerTheWholeWorkgroupMeets) {
    auto const kernel = emit("gemm-f16.json", staged(128, 256, 3));
    EXPECT_EQ(occurrences(kernel.code, kStore), 4u);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 1,"), 0u);
    // One 64 x 64 tile: a single block and buffer, whose last store must have read it before
    // the next tile writes it.
    auto const small = emit("gemm-f16.json", with(staged(64, 64, 2), "PERSISTENT", 1));
    EXPECT_EQ(occurrences(small.code, kStore), 1u);
    EXPECT_EQ(occurrences(small.code, "cp.async.bulk.wait_group.read 0;"), 2u);
    EXPECT_EQ(occurrences(small.code, "cp.async.bulk.wait_group.read 1;"), 0u);
}

// Each message names what EPILOGUE=1 needs.
void expectRefused(std::string const& command, Schedule const& schedule, std::string const& target,
                   std::string const& message) {
    try {
        emit(command, schedule, target);
        ADD_FAILURE() << "accepted " << lowering::scheduleText(schedule) << " on " << target;
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(StagedEpilogue, SchedulesAndOutputsItCannotServeAreRefusedByName) {
    expectRefused("gemm-f16.json", with(staged(128, 128, 3), "TMA", 0), "sm_90a",
                  "EPILOGUE=1 stores the result with the copy engine");
    expectRefused("gemm-f16.json", with(staged(128, 128, 3), "EPILOGUE", 2), "sm_90a",
                  "EPILOGUE=2 must be 0");
    expectRefused("gemm-f16.json", with(staged(128, 128, 3), "EPILOGUE", -1), "sm_90a",
                  "EPILOGUE=-1 must be 0");
    // Without the copy engine there is no tensor store (TMA=1 is refused first, by name).
    expectRefused("gemm-f16.json", staged(64, 64, 2), "sm_80", "sm_80 does not have");
    // An f32 result is not the 16-bit swizzle the launchers' tensor maps describe.
    expectRefused("../tests/lowering/commands/gemm-f16-f32-result.json", staged(64, 64, 2),
                  "sm_90a", "D is f32: use EPILOGUE=0");
}

class StagedPtxas
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, Schedule>> {};

TEST_P(StagedPtxas, EveryVariantAssemblesWithoutSpills) {
    auto const& [name, command, schedule] = GetParam();
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const kernel = emit(command, schedule);
    auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().spillStores, 0) << name;
    EXPECT_LE(result.value().registers, 255) << name;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, StagedPtxas,
    ::testing::Values(
        std::tuple{"f16_winner", "gemm-f16.json", winner()},
        std::tuple{"f16_128x256_4_stages", "gemm-f16.json", staged(128, 256, 3)},
        std::tuple{"f16_128x256_persistent", "gemm-f16.json",
                   with(staged(128, 256, 3), "PERSISTENT", 1)},
        std::tuple{"f16_128x256_specialized", "gemm-f16.json",
                   with(staged(128, 256, 4), "WARP_SPECIALIZE", 1)},
        std::tuple{"f16_64x64_2_stages", "gemm-f16.json", staged(64, 64, 2)},
        std::tuple{"f16_256x128_specialized_persistent", "gemm-f16.json",
                   with(with(staged(256, 128, 2), "WARP_SPECIALIZE", 1), "PERSISTENT", 1)},
        std::tuple{"bf16_transposed_beta_c", "gemm-bf16.json", staged(128, 128, 3)},
        std::tuple{"bf16_transposed_beta_c_winner", "gemm-bf16.json", winner()},
        std::tuple{"bias_gelu_winner", "gemm-bias-gelu-f16.json", winner()},
        std::tuple{"residual_relu_winner", "gemm-residual-relu-epilogue-f16.json", winner()},
        // Clusters of two (Clusters.h): each workgroup stages and stores its own tile.
        std::tuple{"f16_128x256_cluster_m_2", "gemm-f16.json",
                   with(staged(128, 256, 4), "CLUSTER_M", 2)},
        std::tuple{"f16_128x256_specialized_cluster_n_2", "gemm-f16.json",
                   with(with(staged(128, 256, 4), "WARP_SPECIALIZE", 1), "CLUSTER_N", 2)}),
    [](auto const& p) { return std::get<0>(p.param); });

// 64 x 64 tiles, persistent, one block a tile: the whole sequence in a kernel small enough to
// read.
TEST(StagedEpilogue, MatchesTheGoldenFile) {
    auto const kernel = emit("gemm-f16.json", with(staged(64, 64, 2), "PERSISTENT", 1));
    expectGoldenFile("tests/golden/ptx/gemm_f16_staged_epilogue.sm_90a.ptx", kernel.code);
}

} // namespace
} // namespace kiln::test
