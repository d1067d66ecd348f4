// PingpongTest.cpp: PINGPONG=1, two consumer warpgroups that take a persistent workgroup's tiles
// in turn (lowering/ptx/PtxPingpong.cpp): the launch shape (two consumer warpgroups and the
// producer), the registers setmaxnreg splits, each consumer's first tile and step, its running
// K-slice count (start, step) and the ring set from it, the empty mbarriers' arrivals (one
// warpgroup's warps), the named barriers of the turns (256 workitems) and of each consumer's
// staged epilogue (128), the staging buffers (one set per consumer); plain and fused bias + GELU,
// EPILOGUE 0 and 1, assembled by ptxas without spills; what it refuses, by name; a small kernel
// against golden PTX. The GPU runs them in tests/lowering/gpu/PingpongGpuTest.cpp.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R Pingpong    (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/GraphText.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>
#include <regex>

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

// 64 x 256 tiles on one warpgroup, a producer warpgroup, persistent, ping-pong.
Schedule pingpong(std::int64_t epilogue = 0, std::int64_t mtN = 256, std::int64_t stages = 4) {
    return {{"MMA", 1},        {"MT_M", 64},           {"MT_N", mtN},  {"MT_K", 64},
            {"WT_M", 16},      {"STAGES", stages},     {"TMA", 1},     {"WARP_SPECIALIZE", 1},
            {"PERSISTENT", 1}, {"EPILOGUE", epilogue}, {"PINGPONG", 1}};
}

Schedule with(Schedule schedule, std::string const& name, std::int64_t value) {
    schedule[name] = value;
    return schedule;
}

lowering::EmittedKernel emit(std::string const& command, Schedule const& schedule) {
    return lowering::emitKernel(lowered(command, "gemm.pipeline.json", schedule, "sm_90a"),
                                {.target = "sm_90a", .schedule = schedule});
}

// The first match of `pattern` in `code` from `from` on (its groups), or a failure.
std::smatch find(std::string const& code, std::string const& pattern, std::size_t from = 0) {
    std::smatch m;
    auto const begin = code.begin() + static_cast<std::ptrdiff_t>(from);
    EXPECT_TRUE(std::regex_search(begin, code.end(), m, std::regex(pattern))) << pattern;
    return m;
}

// The matches of `pattern` in `code`.
std::ptrdiff_t matches(std::string const& code, std::string const& pattern) {
    std::regex const re(pattern);
    return std::distance(std::sregex_iterator(code.begin(), code.end(), re),
                         std::sregex_iterator());
}

// Where the consumers' code starts: the label the producers branch around.
std::size_t consumersAt(std::string const& code) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(code, m, std::regex(R"(\$consumers_\d+:)")));
    return static_cast<std::size_t>(m.position(0));
}

std::size_t at(std::string const& code, std::string const& what) {
    auto const p = code.find(what);
    EXPECT_NE(p, std::string::npos) << what;
    return p;
}

TEST(Pingpong, TwoConsumerWarpgroupsAndTheProducerMakeTheWorkgroup) {
    auto const kernel = emit("gemm-f16.json", pingpong());
    // Warps 0-3 consumer 0, 4-7 consumer 1, 8-11 the producer: 384 workitems.
    EXPECT_EQ(kernel.block[0], 4);
    EXPECT_EQ(kernel.block[1], 8);
    EXPECT_EQ(kernel.block[2], 12);
    auto const manifest = runtime::KernelManifest::fromJson(kernel.manifestJson(), "manifest");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    ASSERT_TRUE(manifest->block);
    EXPECT_EQ(manifest->block->z, 12u);
    EXPECT_EQ(kernel.workgroupsPerMultiprocessor, 1);
    // The split: warps 8 and up are the producer, warp 8 issues (its workitem 0, linear 256).
    auto const split =
        find(kernel.code, R"(setp\.ge\.s64 (%p\d+), (%rd\d+), 8;\n\s*@!\1 bra \$consumers)");
    std::string const warp = split[2];
    EXPECT_NE(kernel.code.find(fmt::format("setp.eq.s64 %p2, {}, 8;", warp)), std::string::npos);
    EXPECT_EQ(matches(kernel.code, R"(setp\.eq\.s64 %p\d+, %rd\d+, 256;)"), 1);
    // The producer keeps 40 registers; 256 consumers share the rest of 168 x 384:
    // (168 x 384 - 40 x 128) / 256 = 232.
    EXPECT_EQ(occurrences(kernel.code, "setmaxnreg.dec.sync.aligned.u32 40;"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "setmaxnreg.inc.sync.aligned.u32 232;"), 1u);
    // Each consumer is the graph's warps 0-3: warps 4-7 have 4 taken off their index, after the
    // split, and consumer c is 1 there.
    std::size_t const consumers = consumersAt(kernel.code);
    auto const which = find(kernel.code,
                            R"(setp\.ge\.s64 (%p\d+), )" + warp +
                                R"(, 4;\n\s*selp\.u32 (%b\d+), 1, 0, \1;\n\s*@\1 sub\.s64 )" +
                                warp + ", " + warp + ", 4;",
                            consumers);
    EXPECT_FALSE(which.empty());
}

TEST(Pingpong, EachConsumerTakesEveryOtherTileAndSkipsTheOthersSlices) {
    auto const kernel = emit("gemm-f16.json", pingpong());
    std::size_t const consumers = consumersAt(kernel.code);
    auto const which = find(kernel.code, R"(selp\.u32 (%b\d+), 1, 0, %p\d+;)", consumers);
    std::string const c = which[1];
    // Two loops over the tiles: the producer's (every tile of the workgroup) and the consumers'.
    EXPECT_EQ(occurrences(kernel.code, "$tile_"), 4u);
    // The producer starts at the workgroup's linear number and steps by the workgroups launched.
    auto const producerStep =
        find(kernel.code, R"(\$produced_\d+:\n\s*add\.s64 (%rd\d+), \1, (%rd\d+);)");
    EXPECT_LT(static_cast<std::size_t>(producerStep.position(0)), consumers);
    // Consumer c: tile linear + c x launched, then steps of 2 x launched.
    auto const first = find(kernel.code,
                            R"(cvt\.u64\.u32 (%rd\d+), )" + c +
                                R"(;\n\s*mad\.lo\.s64 (%rd\d+), \1, (%rd\d+), (%rd\d+);)",
                            consumers);
    std::string const tile = first[2], launched = first[3];
    auto const step = find(kernel.code, R"(shl\.b64 (%rd\d+), )" + launched + ", 1;", consumers);
    std::string const twice = step[1];
    EXPECT_NE(
        kernel.code.find(fmt::format("add.s64 {0}, {0}, {1};\n    bra.uni $tile_", tile, twice)),
        std::string::npos);
    // The K slices of a tile: ceil(K / 64) = (K + 63) >> 6; consumer c starts at c of them and
    // steps over two tiles' worth.
    auto const slices = find(
        kernel.code,
        R"(max\.s64 (%rd\d+), %rd\d+, 0;\n\s*cvt\.u32\.u64 (%b\d+), \1;\n\s*mul\.lo\.u32 (%b\d+), )" +
            c + R"(, \2;\n\s*shl\.b32 (%b\d+), \2, 1;)",
        consumers);
    std::string const count = slices[3], slicesTwice = slices[4];
    // Each tile: the ring's copy count % 4 (40960 bytes each, the mbarriers 8 apart), its phase
    // (count / 4) % 2; after the tile, count += 2 x slices.
    std::size_t const tileTop = kernel.code.rfind("$tile_", kernel.code.rfind("bra.uni $tile_"));
    auto const ring = find(
        kernel.code,
        R"(rem\.u32 (%b\d+), )" + count +
            R"(, 4;\n\s*mad\.lo\.u32 %b\d+, \1, 40960, %b0;\n\s*mad\.lo\.u32 (%b\d+), \1, 8, %b\d+;\n\s*mad\.lo\.u32 %b\d+, \1, 8, %b\d+;\n\s*div\.u32 (%b\d+), )" +
            count + R"(, 4;\n\s*and\.b32 \3, \3, 1;)",
        tileTop);
    std::string const full = ring[2], phase = ring[3];
    EXPECT_NE(kernel.code.find(fmt::format("mbarrier.try_wait.parity.shared::cta.b64 %p", full),
                               static_cast<std::size_t>(ring.position(0)) + tileTop),
              std::string::npos);
    EXPECT_NE(kernel.code.find(fmt::format("[{}], {};", full, phase)), std::string::npos);
    EXPECT_EQ(occurrences(kernel.code, fmt::format("add.u32 {0}, {0}, {1};", count, slicesTwice)),
              1u);
}

TEST(Pingpong, AnEmptyCopyWaitsForOneConsumerWarpgroup) {
    auto const kernel = emit("gemm-f16.json", pingpong());
    // Four copies: each full mbarrier expects the producer's one arrival (and the bytes), each
    // empty one the four warps of the consumer that read the slice, not eight.
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.init.shared::cta.b64"), 8u);
    EXPECT_EQ(occurrences(kernel.code, "], 1;\n"), 4u);
    EXPECT_EQ(matches(kernel.code, R"(mbarrier\.init[^\n]*\], 4;)"), 4);
    // A slice is released by its consumer's warps: in the K loop and after each tile's last wgmma.
    EXPECT_EQ(occurrences(kernel.code, "mbarrier.arrive.shared::cta.b64"), 2u);
}

TEST(Pingpong, TheConsumersTakeTurnsOnTheTensorCoresAtNamedBarriers) {
    auto const kernel = emit("gemm-f16.json", pingpong());
    std::size_t const consumers = consumersAt(kernel.code);
    std::string const c = find(kernel.code, R"(selp\.u32 (%b\d+), 1, 0, %p\d+;)", consumers)[1];
    // Consumer c waits at barrier 3 + c (all but the workgroup's first tile: tile >= launched)
    // before its K loop, and arrives on 4 - c after it (where the other has a next tile), before
    // its wgmmas are waited for and its epilogue: 256 workitems, the two consumers.
    auto const turn =
        find(kernel.code, R"(add\.u32 (%b\d+), )" + c + R"(, 3;\n\s*@(%p\d+) bar\.sync \1, 256;)",
             consumers);
    auto const handOff =
        find(kernel.code,
             R"(sub\.u32 (%b\d+), 4, )" + c +
                 R"(;\n\s*@(%p\d+) bar\.arrive \1, 256;\n\s*wgmma\.wait_group\.sync\.aligned 0;)",
             consumers);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync %b"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "bar.arrive"), 1u);
    std::size_t const sync = at(kernel.code, "bar.sync %b"), arrive = at(kernel.code, "bar.arrive");
    std::size_t const firstWait = kernel.code.find("mbarrier.try_wait", consumers);
    EXPECT_LT(sync, firstWait);
    EXPECT_GT(arrive, kernel.code.rfind("wgmma.commit_group"));
    // The turn is taken where tile >= launched, handed on where tile + launched < tiles.
    EXPECT_TRUE(std::regex_search(
        kernel.code,
        std::regex(R"(setp\.ge\.s64 %p\d+, %rd\d+, %rd\d+;\n\s*add\.u32 %b\d+, %b\d+, 3;)")));
    EXPECT_TRUE(std::regex_search(
        kernel.code,
        std::regex(R"(setp\.lt\.s64 %p\d+, %rd\d+, %rd\d+;\n\s*sub\.u32 %b\d+, 4, %b\d+;)")));
    // No barrier of the whole workgroup after the mbarriers' set-up.
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0;"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 1,"), 0u);
}

TEST(Pingpong, EachConsumerStagesItsResultInItsOwnBuffersBehindItsOwnBarrier) {
    auto const kernel = emit("gemm-bias-gelu-f16.json", pingpong(1));
    std::size_t const consumers = consumersAt(kernel.code);
    std::string const c = find(kernel.code, R"(selp\.u32 (%b\d+), 1, 0, %p\d+;)", consumers)[1];
    // Four blocks of 64 columns, two barriers each, of the consumer's 128 workitems, at barrier
    // 1 + c; no barrier of both consumers (bar.sync 1, 256 without ping-pong).
    EXPECT_EQ(matches(kernel.code, R"(bar\.sync %b\d+, 128;)"), 8);
    EXPECT_EQ(matches(kernel.code, R"(add\.u32 (%b\d+), )" + c + R"(, 1;\n\s*bar\.sync \1, 128;)"),
              8);
    EXPECT_EQ(matches(kernel.code, R"(bar\.(sync|arrive) %b\d+, 256;)"), 2); // the turns
    // Four TMA stores, each issued by the consumer's own workitem 0.
    EXPECT_EQ(occurrences(kernel.code, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"),
              4u);
    EXPECT_EQ(occurrences(kernel.code, "cp.async.bulk.wait_group.read 0;"), 1u);
    // Two sets of two 64 x 64 buffers (8 KB each) after the copies and mbarriers: consumer c's at
    // kiln_shared + c x 16 KB.
    EXPECT_EQ(kernel.sharedBytes, 4u * (64 * 64 + 64 * 256) * 2 + 1024 + 2 * 2 * 64 * 128);
    EXPECT_GT(occurrences(kernel.code, fmt::format("mad.lo.u32 %b", c)), 0u);
    EXPECT_TRUE(std::regex_search(kernel.code,
                                  std::regex(R"(mad\.lo\.u32 %b\d+, )" + c + R"(, 16384, %b0;)")));
}

TEST(Pingpong, PingpongZeroIsTheKernelWithout) {
    Schedule off = pingpong(1);
    off.erase("PINGPONG");
    EXPECT_EQ(emit("gemm-f16.json", with(off, "PINGPONG", 0)).code,
              emit("gemm-f16.json", off).code);
    // A code generation parameter: the lowered graph is the same.
    EXPECT_EQ(toText(lowered("gemm-f16.json", "gemm.pipeline.json", off)),
              toText(lowered("gemm-f16.json", "gemm.pipeline.json", pingpong(1))));
}

class PingpongAssembles
    : public ::testing::TestWithParam<std::tuple<char const*, char const*, Schedule>> {};

TEST_P(PingpongAssembles, WithoutSpills) {
    auto const& [name, command, schedule] = GetParam();
    auto const kernel = emit(command, schedule);
    EXPECT_EQ(kernel.block[2], 12);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().spillStores, 0) << name;
    EXPECT_LE(result.value().registers, 168) << name; // 384 workitems of 65536
}

INSTANTIATE_TEST_SUITE_P(
    Variants, PingpongAssembles,
    ::testing::Values(std::tuple{"f16", "gemm-f16.json", pingpong(0)},
                      std::tuple{"f16_staged", "gemm-f16.json", pingpong(1)},
                      std::tuple{"bias_gelu", "gemm-bias-gelu-f16.json", pingpong(0)},
                      std::tuple{"bias_gelu_staged", "gemm-bias-gelu-f16.json", pingpong(1)},
                      std::tuple{"bias_gelu_staged_group_m_8", "gemm-bias-gelu-f16.json",
                                 with(pingpong(1), "GROUP_M", 8)},
                      std::tuple{"f16_128_columns_3_stages", "gemm-f16.json", pingpong(1, 128, 3)},
                      std::tuple{"bf16_transposed_beta_c", "gemm-bf16.json", pingpong(0, 128)}),
    [](auto const& p) { return std::get<0>(p.param); });

void expectRefused(Schedule const& schedule, std::string const& message) {
    try {
        (void)emit("gemm-f16.json", schedule);
        ADD_FAILURE() << "accepted " << lowering::scheduleText(schedule);
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(Pingpong, WhatItIsNotWrittenForIsRefusedByName) {
    expectRefused(with(pingpong(), "PINGPONG", 2), "PINGPONG=2 must be 0");
    expectRefused(with(pingpong(), "PERSISTENT", 0), "it needs TMA=1, WARP_SPECIALIZE=1 and "
                                                     "PERSISTENT=1");
    expectRefused(with(pingpong(), "WARP_SPECIALIZE", 0), "PINGPONG=1");
    expectRefused(with(pingpong(), "CLUSTER_M", 2), "use CLUSTER_M=1 and CLUSTER_N=1");
    // Two warpgroups' rows: the consumers would each need two.
    expectRefused(with(pingpong(), "MT_M", 128), "not one warpgroup (4): use MT_M=64");
}

// 64 x 64 tiles, two stages, staged: the whole protocol in a kernel small enough to read.
TEST(Pingpong, MatchesTheGoldenFile) {
    auto const kernel = emit("gemm-f16.json", pingpong(1, 64, 2));
    expectGoldenFile("tests/golden/ptx/gemm_f16_pingpong.sm_90a.ptx", kernel.code);
}

} // namespace
} // namespace kiln::test
