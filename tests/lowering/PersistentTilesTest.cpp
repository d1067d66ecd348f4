// PersistentTilesTest.cpp: PERSISTENT=1, workgroups that loop over a GEMM's output tiles
// (KernelWalker::forEachTile, TileOrder.h's tileIndices, PtxPersistent.cpp, Occupancy.h).
//
// The tile indices, evaluated on integers, are a permutation of every grid of tiles (one, two and
// three axes, ragged groups), whatever the workgroups launched; every PTX GEMM path writes the
// loop and assembles with ptxas; the copy engine's pipeline is set up once and carried from tile
// to tile (its mbarriers initialized once, the producer's loop over the same tiles, each tile's
// last slice released); PERSISTENT=0 is the kernel without it; the manifest declares the
// persistent grid and its workgroups per multiprocessor; a bad value is refused by name. The
// AMDGCN kernels are assembled in tests/amdgcn/GraphKernelTest.cpp; the GPU runs them in
// tests/lowering/gpu/PersistentTilesGpuTest.cpp.
#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/GraphText.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/Occupancy.h"
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

constexpr Id kTile = 1;

// The tile's number as the index every expression reads; the grid's extents as arguments.
class TileNumber : public Environment {
public:
    std::int64_t tile = 0;
    std::map<std::string, std::int64_t> extents;
    Value index(Id) const override { return Value::integer(tile); }
    Value argument(expr::Argument const& a) const override {
        return Value::integer(extents.at(a.name));
    }
};

// Every tile of a grid of `extents` (x first) taken by `launched` workgroups, each from its
// number in steps of `launched`, as the loop does: each tile's indices, in the order taken.
std::vector<std::vector<std::int64_t>> taken(std::vector<std::int64_t> const& extents,
                                             std::int64_t group, std::int64_t launched) {
    std::vector<ExprPtr> tiles;
    TileNumber at;
    std::int64_t count = 1;
    for (std::size_t a = 0; a < extents.size(); ++a) {
        std::string const name = std::string(1, "XYZ"[a]);
        tiles.push_back(argument(name, DataType::I64));
        at.extents[name] = extents[a];
        count *= extents[a];
    }
    auto const indices = lowering::tileIndices(index(kTile), tiles, group);
    std::vector<std::vector<std::int64_t>> out;
    for (std::int64_t workgroup = 0; workgroup < launched; ++workgroup)
        for (at.tile = workgroup; at.tile < count; at.tile += launched) {
            std::vector<std::int64_t> tile;
            for (auto const& e : indices)
                tile.push_back(evaluateInt(*e, at));
            out.push_back(std::move(tile));
        }
    return out;
}

TEST(PersistentTiles, EveryTileIsTakenOnceByAnyNumberOfWorkgroups) {
    std::vector<std::vector<std::int64_t>> const grids = {
        {1}, {7}, {1, 1}, {5, 3}, {3, 5}, {11, 9}, {16, 6}, {1, 40}, {40, 1}, {4, 3, 2}, {9, 7, 3}};
    for (auto const& extents : grids)
        for (std::int64_t group : {0, 1, 3, 8})
            for (std::int64_t launched : {1, 2, 7, 132, 1000}) {
                auto const tiles = taken(extents, group, launched);
                std::set<std::vector<std::int64_t>> const distinct(tiles.begin(), tiles.end());
                std::int64_t count = 1;
                for (std::int64_t e : extents)
                    count *= e;
                EXPECT_EQ(static_cast<std::int64_t>(tiles.size()), count);
                EXPECT_EQ(distinct.size(), tiles.size())
                    << "a tile taken twice, " << extents.size() << " axes, GROUP_M=" << group;
                for (auto const& tile : tiles)
                    for (std::size_t a = 0; a < extents.size(); ++a)
                        ASSERT_TRUE(tile[a] >= 0 && tile[a] < extents[a])
                            << "axis " << a << " index " << tile[a] << " of " << extents[a];
            }
}

TEST(PersistentTiles, TilesAreNumberedXFastestOrInGroupsOfRows) {
    // One workgroup takes every tile, in the order of their numbers: x fastest, then y, then z.
    auto const plain = taken({3, 2, 2}, 0, 1);
    for (std::size_t t = 0; t < plain.size(); ++t)
        EXPECT_EQ(plain[t], (std::vector<std::int64_t>{static_cast<std::int64_t>(t % 3),
                                                       static_cast<std::int64_t>(t / 3 % 2),
                                                       static_cast<std::int64_t>(t / 6)}));
    // Grouped: the order of groupedTile within each z (here 5 x 3 in groups of 2 rows).
    auto const grouped = taken({5, 3, 2}, 2, 1);
    lowering::GridTile const tile = lowering::groupedTile(
        index(kTile), argument("X", DataType::I64), argument("Y", DataType::I64), 2);
    TileNumber at;
    at.extents = {{"X", 5}, {"Y", 3}};
    for (std::int64_t t = 0; t < 30; ++t) {
        at.tile = t % 15;
        EXPECT_EQ(grouped[static_cast<std::size_t>(t)],
                  (std::vector<std::int64_t>{evaluateInt(*tile.row, at),
                                             evaluateInt(*tile.column, at), t / 15}));
    }
}

Schedule persistent(Schedule schedule, std::int64_t value = 1) {
    schedule["PERSISTENT"] = value;
    return schedule;
}

Schedule tma(std::int64_t mtM, std::int64_t mtN, std::int64_t stages, bool specialized) {
    return {{"MMA", 1},    {"MT_M", mtM},      {"MT_N", mtN}, {"MT_K", 64},
            {"WT_M", 16},  {"STAGES", stages}, {"TMA", 1},    {"WARP_SPECIALIZE", specialized},
            {"GROUP_M", 8}};
}

struct Path {
    std::string name, command, target;
    Schedule schedule;
};

void PrintTo(Path const& path, std::ostream* os) {
    *os << path.name;
}

// Every GEMM path of PTX code generation.
std::vector<Path> const kPaths = {
    {"simt_f32", "gemm.json", "sm_80", {{"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}}},
    {"mma_sync_f16",
     "gemm-f16.json",
     "sm_80",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}}},
    {"wgmma_bf16",
     "gemm-bf16.json",
     "sm_90a",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}}},
    {"tma_f16_128x128_3_stages", "gemm-f16.json", "sm_90a", tma(128, 128, 3, false)},
    {"tma_f16_64x64_2_stages", "gemm-f16.json", "sm_90a", tma(64, 64, 2, false)},
    {"tma_specialized_f16_128x256_4_stages", "gemm-f16.json", "sm_90a", tma(128, 256, 4, true)},
    {"tma_specialized_f16_64x64_2_stages", "gemm-f16.json", "sm_90a", tma(64, 64, 2, true)},
    {"tma_specialized_bf16_transposed_128x128_3_stages", "gemm-bf16.json", "sm_90a",
     tma(128, 128, 3, true)},
};

lowering::EmittedKernel emit(Path const& path, Schedule const& schedule) {
    return lowering::emitKernel(lowered(path.command, "gemm.pipeline.json", schedule, path.target),
                                {.target = path.target, .schedule = schedule});
}

std::size_t count(std::string const& code, std::string const& what) {
    std::size_t n = 0;
    for (auto at = code.find(what); at != std::string::npos; at = code.find(what, at + 1))
        ++n;
    return n;
}

class PersistentTilesPtx : public ::testing::TestWithParam<Path> {};

TEST_P(PersistentTilesPtx, TheLoopOverTilesIsWrittenAndAssembles) {
    Path const& path = GetParam();
    auto const plain = emit(path, path.schedule);
    // PERSISTENT=0 is the kernel without it.
    EXPECT_EQ(emit(path, persistent(path.schedule, 0)).code, plain.code);
    EXPECT_EQ(plain.workgroupsPerMultiprocessor, 0);
    EXPECT_EQ(plain.manifestJson().find("persistent"), std::string::npos);
    auto const looped = emit(path, persistent(path.schedule));
    // The tiles are still the manifest's grid; the persistent grid is declared beside it.
    EXPECT_EQ(looped.grid, plain.grid);
    EXPECT_GE(looped.workgroupsPerMultiprocessor, 1);
    auto const manifest = runtime::KernelManifest::fromJson(looped.manifestJson(), "manifest");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->workgroupsPerMultiprocessor,
              static_cast<std::uint32_t>(looped.workgroupsPerMultiprocessor));
    // The first tile is the workgroup's linear number; the step, the workgroups launched.
    EXPECT_EQ(count(plain.code, "%nctaid"), 0u);
    EXPECT_GE(count(looped.code, "%nctaid.x"), 2u);
    EXPECT_NE(looped.code.find("$tile_"), std::string::npos);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const result = runtime::assemblePtx(looped.code, path.target);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().spillStores, 0);
    EXPECT_LE(result.value().registers, 255);
}

INSTANTIATE_TEST_SUITE_P(Paths, PersistentTilesPtx, ::testing::ValuesIn(kPaths),
                         [](auto const& p) { return p.param.name; });

TEST(PersistentTiles, AProducerWarpgroupLoopsOverTheSameTilesOnARingSetUpOnce) {
    Path const& path = kPaths[5]; // 128 x 256, 4 stages, a producer warpgroup
    auto const plain = emit(path, path.schedule), looped = emit(path, persistent(path.schedule));
    // The full and empty mbarriers of the 4 copies are initialized once, before any tile.
    EXPECT_EQ(count(looped.code, "mbarrier.init"), count(plain.code, "mbarrier.init"));
    EXPECT_EQ(count(looped.code, "mbarrier.init"), 8u);
    EXPECT_LT(looped.code.find("mbarrier.init"), looped.code.find("$tile_"));
    // Two loops over the tiles: the producer's, then the consumers'; the split before both.
    EXPECT_EQ(count(looped.code, "$tile_"), 4u); // two labels and two branches back
    EXPECT_LT(looped.code.find("setmaxnreg.dec"), looped.code.find("$tile_"));
    EXPECT_LT(looped.code.find("setmaxnreg.inc"), looped.code.rfind("$tile_"));
    EXPECT_GT(looped.code.find("setmaxnreg.inc"), looped.code.find("$tile_"));
    // Each tile's last slice is released after its wgmmas are done: a second arrive on the
    // empty mbarriers, after the K loop's wgmma.wait_group 0.
    EXPECT_EQ(count(plain.code, "mbarrier.arrive.shared::cta.b64"), 1u);
    EXPECT_EQ(count(looped.code, "mbarrier.arrive.shared::cta.b64"), 2u);
    auto const waitAll = looped.code.find("wgmma.wait_group.sync.aligned 0");
    EXPECT_LT(waitAll, looped.code.rfind("mbarrier.arrive.shared::cta.b64"));
    // The waits still trap after 2^24 polls.
    EXPECT_EQ(count(looped.code, "trap;"), count(plain.code, "trap;"));
    // One workgroup a multiprocessor: 192 KB of copies, 384 workitems of the whole register file.
    EXPECT_EQ(looped.workgroupsPerMultiprocessor, 1);
}

TEST(PersistentTiles, WithoutAProducerEachTileStartsWhereTheLastOneLeftTheRing) {
    Path const& path = kPaths[3]; // 128 x 128, 3 stages
    auto const looped = emit(path, persistent(path.schedule));
    // The mbarriers once, before the tiles; a workgroup barrier after each tile's epilogue
    // (the next tile's prologue overwrites copies the last one read).
    EXPECT_EQ(count(looped.code, "mbarrier.init"), 3u);
    EXPECT_LT(looped.code.rfind("mbarrier.init"), looped.code.find("$tile_"));
    auto const back = looped.code.rfind("bra.uni $tile_");
    ASSERT_NE(back, std::string::npos);
    EXPECT_NE(looped.code.rfind("bar.sync 0", back), std::string::npos);
    EXPECT_GT(looped.code.rfind("bar.sync 0", back), looped.code.rfind("st.global", back));
}

TEST(PersistentTiles, WorkgroupsPerMultiprocessorFollowTheAssembledRegisters) {
    Path const& path = kPaths[4]; // 64 x 64, 2 stages: 128 workitems, 33 KB of shared memory
    auto const kernel = emit(path, persistent(path.schedule));
    // Before ptxas: 255 registers a workitem at most, two workgroups' worth of the file.
    EXPECT_EQ(kernel.workgroupsPerMultiprocessor, 2);
    // With 96 registers: five by registers, six by shared memory (228 KB / 33 KB + 1 KB).
    EXPECT_EQ(lowering::withAssembledRegisters(kernel, 96).workgroupsPerMultiprocessor, 5);
    EXPECT_EQ(lowering::withAssembledRegisters(kernel, 40).workgroupsPerMultiprocessor,
              233472 / (static_cast<std::int64_t>(kernel.sharedBytes) + 1024));
    // A kernel that is not persistent stays so.
    EXPECT_EQ(
        lowering::withAssembledRegisters(emit(path, path.schedule), 40).workgroupsPerMultiprocessor,
        0);
    // The launch: min(tiles, multiprocessors x N) along x.
    EXPECT_EQ(runtime::persistentGrid({32, 16, 1}, 1, 132), (runtime::Dim3{132, 1, 1}));
    EXPECT_EQ(runtime::persistentGrid({3, 2, 1}, 1, 132), (runtime::Dim3{6, 1, 1}));
    EXPECT_EQ(runtime::persistentGrid({40, 40, 1}, 2, 132), (runtime::Dim3{264, 1, 1}));
    EXPECT_EQ(runtime::persistentGrid({5, 5, 2}, 1, 0), (runtime::Dim3{50, 1, 1}));
}

TEST(PersistentTiles, TheGraphIsUnchanged) {
    // PERSISTENT is read by code generation only: the lowered graph is the same.
    Path const& path = kPaths[5];
    EXPECT_EQ(toText(lowered(path.command, "gemm.pipeline.json", path.schedule, path.target)),
              toText(lowered(path.command, "gemm.pipeline.json", persistent(path.schedule),
                             path.target)));
}

TEST(PersistentTiles, AValueOtherThanZeroOrOneIsRefusedByName) {
    for (std::int64_t value : {std::int64_t{-1}, std::int64_t{2}}) {
        try {
            (void)emit(kPaths[0], persistent(kPaths[0].schedule, value));
            ADD_FAILURE() << "accepted PERSISTENT=" << value;
        } catch (UserError const& e) {
            EXPECT_NE(std::string(e.what()).find(fmt::format("PERSISTENT={} must be 0", value)),
                      std::string::npos)
                << e.what();
        }
    }
}

} // namespace
} // namespace kiln::test
