// TmaCodegenTest.cpp: TMA=1, the wgmma GEMM's K slices loaded by the copy engine
// (lowering/ptx/PtxPipeline.cpp): what the kernel issues and waits for, with and without a
// producer warpgroup (WARP_SPECIALIZE=1), its tensor-map parameters in the manifest, the
// schedules it refuses, every variant assembled by ptxas, and a small kernel against golden PTX.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R TmaCodegen    (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/TensorMaps.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

Schedule tma(std::int64_t mtM, std::int64_t mtN, std::int64_t stages) {
    return {{"MMA", 1},   {"MT_M", mtM},      {"MT_N", mtN}, {"MT_K", 64},
            {"WT_M", 16}, {"STAGES", stages}, {"TMA", 1}};
}

Schedule specialized(Schedule schedule) {
    schedule["WARP_SPECIALIZE"] = 1;
    return schedule;
}

lowering::EmittedKernel emit(std::string const& command, Schedule const& schedule,
                             std::string const& target = "sm_90a") {
    return lowering::emitKernel(lowered(command, "gemm.pipeline.json", schedule, target),
                                {.target = target, .schedule = schedule});
}

constexpr char kCopy[] =
    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes";

TEST(TmaCodegen, TheCopyEngineFillsEachStageAndTheMultiplyWaitsOnItsMbarrier) {
    // f16: A (M x K) K-major, one box of 64 x 128 a stage; B (K x N) N-major, four boxes of
    // 64 x 64 (its 256-column rows are four 64-element columns of the swizzle).
    auto const kernel = emit("gemm-f16.json", tma(128, 256, 4));
    // Issued by one workitem: STAGES - 2 stages ahead (one wgmma group stays in flight), so two
    // in the prologue and one in the loop, each of 1 + 4 boxes and 128 x 64 + 64 x 256 halves.
    EXPECT_EQ(occurrences(kernel.code, kCopy), 3u * 5);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%b"), 3u);
    EXPECT_EQ(occurrences(kernel.code, "], 49152;"), 3u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.init.shared::cta.b64"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "fence.mbarrier_init.release.cluster;"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.try_wait.parity.shared::cta.b64"), 1u);
    // No copies by every workitem, no unaligned version, nothing the async proxy must be told.
    EXPECT_EQ(occurrences(kernel.code, "cp.async.ca"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "cp.async.cg"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "cp.async.wait"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "$unaligned"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "fence.proxy.async"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "trap;"), 0u);
    EXPECT_EQ(occurrences(kernel.code, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"), 4u);
    // The four stages, then their mbarriers.
    EXPECT_EQ(kernel.sharedBytes, 4u * (128 * 64 + 64 * 256) * 2 + 4 * 8);
    EXPECT_NE(kernel.code.find(".param .align 64 .b8 param_A_tma[128]"), std::string::npos);
    EXPECT_NE(kernel.code.find(".param .align 64 .b8 param_B_tma[128]"), std::string::npos);
    // One iteration's barrier stays: the issuing workitem overwrites only what every warp is
    // done with.
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), 2u);

    // bf16 stored transposed: A (K x M) M-major, two boxes of 64 x 64; B (N x K) K-major, one
    // box of 64 x 128. Two stages: one ahead, no group in flight.
    auto const transposed = emit("gemm-bf16.json", tma(128, 128, 2));
    EXPECT_EQ(occurrences(transposed.code, kCopy), 2u * 3);
    EXPECT_EQ(occurrences(transposed.code, "], 32768;"), 2u);
    EXPECT_EQ(occurrences(transposed.code, "wgmma.wait_group.sync.aligned 0"), 1u);
    EXPECT_EQ(occurrences(transposed.code, "wgmma.wait_group.sync.aligned 1"), 0u);
}

TEST(TmaCodegen, TheManifestDeclaresEachTensorMapWithItsTensorsGeometry) {
    auto const kernel = emit("gemm-bf16.json", tma(128, 64, 3));
    auto const manifest = runtime::KernelManifest::fromJson(kernel.manifestJson(), "manifest");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    std::vector<runtime::KernelParameter> maps;
    for (auto const& p : manifest.value().parameters)
        if (p.kind == runtime::ParameterKind::TensorMap)
            maps.push_back(p);
    ASSERT_EQ(maps.size(), 2u);
    // After every argument of the graph (pointers and values launchers already pass), 64-byte
    // aligned.
    // (A, B, C, D, alpha, beta, M, K, N).
    EXPECT_EQ(manifest.value().parameters.size(), 9u + 2);
    EXPECT_EQ(maps[0].name, "A_tma");
    EXPECT_EQ(maps[0].tensor, "A");
    EXPECT_EQ(maps[0].type, runtime::ScalarType::BF16);
    EXPECT_EQ(maps[0].tensorMap->toString(), "bf16 box [64, 64] swizzle 128B");
    EXPECT_EQ(maps[1].tensor, "B");
    EXPECT_EQ(maps[1].tensorMap->toString(), "bf16 box [64, 64] swizzle 128B");
    for (auto const& p : maps)
        EXPECT_EQ(p.offset % 64, 0u) << p.name;
    EXPECT_EQ(maps[1].offset, maps[0].offset + 128);
    // The extents and strides a launcher without the graph encodes them from: A is K x M, B is
    // N x K (innermost first).
    auto const json = nlohmann::json::parse(kernel.manifestJson());
    auto const& a = json["parameters"][9]["tensor_map"];
    EXPECT_EQ(a["sizes"], nlohmann::json({"M", "K"}));
    EXPECT_EQ(a["strides"], nlohmann::json({"M"}));
    auto const& b = json["parameters"][10]["tensor_map"];
    EXPECT_EQ(b["sizes"], nlohmann::json({"K", "N"}));
    EXPECT_EQ(b["strides"], nlohmann::json({"K"}));
    // A kernel without TMA takes no tensor map.
    auto schedule = tma(128, 64, 3);
    schedule["TMA"] = 0;
    for (auto const& p : emit("gemm-bf16.json", schedule).parameters)
        EXPECT_FALSE(p.tensorMap) << p.name;
}

TEST(TmaCodegen, TensorGeometryIsInnermostFirst) {
    auto const graph = lowered("gemm-f16.json", "gemm.pipeline.json", tma(64, 64, 2));
    auto const b = lowering::tensorGeometry(graph, "B");
    ASSERT_TRUE(b);
    ASSERT_EQ(b->sizes.size(), 2u);
    EXPECT_EQ(toString(b->sizes[0]), "N");
    EXPECT_EQ(toString(b->sizes[1]), "K");
    EXPECT_EQ(toString(b->strides[0]), "1");
    EXPECT_EQ(toString(b->strides[1]), "N");
    EXPECT_FALSE(lowering::tensorGeometry(graph, "no such tensor"));
}

// Each message names what TMA=1 needs.
void expectRefused(std::string const& command, Schedule const& schedule, std::string const& target,
                   std::string const& message) {
    try {
        emit(command, schedule, target);
        ADD_FAILURE() << "accepted " << lowering::scheduleText(schedule) << " on " << target;
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(TmaCodegen, SchedulesTheCopyEngineCannotServeAreRefused) {
    expectRefused("gemm-f16.json", tma(64, 64, 2), "sm_80", "sm_80 does not have");
    expectRefused("gemm-f16.json", tma(64, 64, 2), "sm_90", "sm_90 does not have");
    expectRefused("gemm-f16.json", tma(64, 64, 1), "sm_90a", "it needs STAGES >= 2");
    auto twice = tma(64, 64, 2);
    twice["TMA"] = 2;
    expectRefused("gemm-f16.json", twice, "sm_90a", "TMA=2 must be 0");
    // Tiles wgmma does not read (mma.sync's padded ones, SIMT) are not the swizzled layout.
    auto mmaSync = tma(64, 64, 2);
    mmaSync["WT_M"] = 32;
    mmaSync["MT_K"] = 32;
    expectRefused("gemm-f16.json", mmaSync, "sm_90a", "wgmma does not read it");
    auto withoutTma = specialized(tma(64, 64, 2));
    withoutTma["TMA"] = 0;
    expectRefused("gemm-f16.json", withoutTma, "sm_90a", "it needs TMA=1");
    // An unrolled loop is not pipelined: nothing for the copy engine to fill.
    auto unrolled = tma(64, 64, 2);
    unrolled["UNROLL"] = 2;
    expectRefused("gemm-f16.json", unrolled, "sm_90a", "this kernel has none");
}

TEST(TmaCodegen, AProducerWarpgroupIssuesTheCopiesWhenWarpSpecialized) {
    auto const kernel = emit("gemm-f16.json", specialized(tma(128, 256, 4)));
    // A third warpgroup after the graph's two; a register limit at entry, which the producers
    // lower to 40 and the consumers raise to what that frees (384 workitems enter with 168
    // registers: 168 x 384 - 128 x 40 over 256 consumers, a multiple of 8).
    EXPECT_EQ(kernel.block[2], 8 + 4);
    EXPECT_NE(kernel.code.find(".maxntid 4, 8, 12\n.minnctapersm 1\n"), std::string::npos);
    EXPECT_EQ(occurrences(kernel.code, "setmaxnreg.dec.sync.aligned.u32 40;"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "setmaxnreg.inc.sync.aligned.u32 232;"), 1u);
    // Full mbarriers (one arrival: the issuer's expect_tx) and empty ones (one per consumer
    // warp), one of each per copy; the copies issued once, in the producers' loop.
    EXPECT_EQ(occurrences(kernel.code, "], 1;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, "], 8;"), 4u);
    EXPECT_EQ(occurrences(kernel.code, kCopy), 5u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.try_wait.parity"), 2u);
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.shared::cta.b64 _, ["), 1u);
    // Each wait traps after 2^24 polls rather than hang the GPU (it has not run on one yet).
    EXPECT_EQ(occurrences(kernel.code, "setp.lt.u32"), 2u);
    EXPECT_EQ(occurrences(kernel.code, "trap;"), 2u);
    // The one barrier of the whole workgroup is the one after the mbarriers' initialization.
    EXPECT_EQ(occurrences(kernel.code, "bar.sync"), 1u);
    EXPECT_EQ(kernel.sharedBytes, 4u * (128 * 64 + 64 * 256) * 2 + 2 * 4 * 8);
    // One consumer warpgroup may take 256 registers.
    EXPECT_EQ(occurrences(emit("gemm-f16.json", specialized(tma(64, 64, 2))).code,
                          "setmaxnreg.inc.sync.aligned.u32 256;"),
              1u);
}

// setmaxnreg.inc waits until the workgroup's pool holds what it asks: the consumers may take
// no more than the producers give up from what ptxas gave every workitem at entry, or the
// kernel waits forever. Warpgroups of 64, 128 and 256 rows of the tile (2, 3 and 5 warpgroups),
// and two workgroups a multiprocessor (MIN_BLOCKS=2: each enters with half the registers).
TEST(TmaCodegen, TheConsumersAskNoMoreRegistersThanTheProducersFree) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    for (auto const& [mtM, mtN, minBlocks] : {std::tuple{64, 256, 1},
                                              {128, 256, 1},
                                              {128, 64, 1},
                                              {256, 64, 1},
                                              {256, 128, 1},
                                              {64, 128, 2}}) {
        auto schedule = specialized(tma(mtM, mtN, minBlocks == 1 ? 4 : 3));
        schedule["MIN_BLOCKS"] = minBlocks;
        auto const kernel = emit("gemm-f16.json", schedule);
        auto const assembled = runtime::assemblePtx(kernel.code, "sm_90a");
        ASSERT_TRUE(assembled.ok()) << assembled.error().message();
        std::int64_t const entry = assembled.value().registers;
        std::string const inc = "setmaxnreg.inc.sync.aligned.u32 ";
        auto const at = kernel.code.find(inc);
        ASSERT_NE(at, std::string::npos);
        std::int64_t const asked = std::stoll(kernel.code.substr(at + inc.size()));
        std::int64_t const consumers = mtM / 16 * 32, producers = 128;
        EXPECT_LE(consumers * (asked - entry), producers * (entry - 40))
            << mtM << "x" << mtN << ": " << consumers << " consumers ask " << asked
            << " registers, entered with " << entry;
        EXPECT_GT(asked, entry) << mtM << "x" << mtN << ": the consumers gain nothing";
    }
}

class TmaPtxas : public ::testing::TestWithParam<std::tuple<std::string, std::string, Schedule>> {};

TEST_P(TmaPtxas, EveryVariantAssembles) {
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
    Variants, TmaPtxas,
    ::testing::Values(
        std::tuple{"f16_128x256_4_stages", "gemm-f16.json", tma(128, 256, 4)},
        std::tuple{"f16_128x128_3_stages", "gemm-f16.json", tma(128, 128, 3)},
        std::tuple{"f16_64x64_2_stages", "gemm-f16.json", tma(64, 64, 2)},
        std::tuple{"bf16_transposed_128x128_3_stages", "gemm-bf16.json", tma(128, 128, 3)},
        std::tuple{"bf16_transposed_64x256_2_stages", "gemm-bf16.json", tma(64, 256, 2)},
        std::tuple{"f16_128x256_4_stages_warp_specialized", "gemm-f16.json",
                   specialized(tma(128, 256, 4))},
        std::tuple{"f16_64x64_2_stages_warp_specialized", "gemm-f16.json",
                   specialized(tma(64, 64, 2))},
        std::tuple{"bf16_transposed_128x128_3_stages_warp_specialized", "gemm-bf16.json",
                   specialized(tma(128, 128, 3))}),
    [](auto const& p) { return std::get<0>(p.param); });

TEST(TmaCodegen, MatchesTheGoldenFile) {
    auto const kernel = emit("gemm-f16.json", tma(64, 64, 2));
    expectGoldenFile("tests/golden/ptx/gemm_f16_tma.sm_90a.ptx", kernel.code);
}

} // namespace
} // namespace kiln::test
