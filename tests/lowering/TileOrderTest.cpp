// TileOrderTest.cpp: GROUP_M, the grouped order of a GEMM's output tiles (TileOrder.h,
// KernelWalker::orderTilesInGroups). The order's expressions, evaluated on integers, are a
// permutation of every grid of tiles, ragged ones included (rows of tiles not a multiple of
// GROUP_M), that walks GROUP_M rows together; every GEMM path writes the order on both targets
// (PTX assembled by ptxas; the AMDGCN kernels are assembled in tests/amdgcn/GraphKernelTest.cpp)
// and computes what it computed before (the graph is unchanged; the GPU test runs the kernels,
// tests/lowering/gpu/TileOrderGpuTest.cpp); GROUP_M out of range is refused by name.
#include "kiln/lowering/TileOrder.h"

#include "LoweringTestSupport.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <array>
#include <gtest/gtest.h>
#include <set>
#include <utility>

namespace kiln::test {
namespace {

using Schedule = std::map<std::string, std::int64_t>;

constexpr Id kLinear = 1;

// The linear id, the grid's rows and columns as arguments: what code generation has at a
// workgroup's start.
class Grid : public Environment {
public:
    Grid(std::int64_t rows, std::int64_t columns)
        : rows_(rows)
        , columns_(columns) {}
    std::int64_t linear = 0;
    Value index(Id) const override { return Value::integer(linear); }
    Value argument(expr::Argument const& a) const override {
        return Value::integer(a.name == "rows" ? rows_ : columns_);
    }

private:
    std::int64_t rows_, columns_;
};

std::vector<std::pair<std::int64_t, std::int64_t>> order(std::int64_t rows, std::int64_t columns,
                                                         std::int64_t group) {
    lowering::GridTile const tile = lowering::groupedTile(
        index(kLinear), argument("rows", DataType::I64), argument("columns", DataType::I64), group);
    Grid grid(rows, columns);
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (grid.linear = 0; grid.linear < rows * columns; ++grid.linear)
        out.emplace_back(evaluateInt(*tile.row, grid), evaluateInt(*tile.column, grid));
    return out;
}

TEST(TileOrder, AGroupOfRowsIsWalkedColumnByColumn) {
    // 5 x 3 tiles in groups of 2 rows: rows 0-1, then 2-3, then the ragged last group of row 4.
    std::vector<std::pair<std::int64_t, std::int64_t>> const expected = {
        {0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, //
        {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2}, //
        {4, 0}, {4, 1}, {4, 2}};
    EXPECT_EQ(order(5, 3, 2), expected);
}

TEST(TileOrder, EveryGridIsAPermutationInGroupsOfRows) {
    for (std::int64_t rows : {1, 2, 3, 7, 8, 9, 17, 32, 33})
        for (std::int64_t columns : {1, 2, 5, 16, 19})
            for (std::int64_t group : {1, 2, 3, 8, 16, 64}) {
                SCOPED_TRACE(testing::Message()
                             << rows << " x " << columns << " tiles, GROUP_M=" << group);
                auto const tiles = order(rows, columns, group);
                std::set<std::pair<std::int64_t, std::int64_t>> seen;
                for (std::size_t p = 0; p < tiles.size(); ++p) {
                    auto const [row, column] = tiles[p];
                    ASSERT_TRUE(row >= 0 && row < rows && column >= 0 && column < columns)
                        << "linear id " << p << " -> (" << row << ", " << column << ")";
                    ASSERT_TRUE(seen.insert(tiles[p]).second)
                        << "(" << row << ", " << column << ") taken twice";
                    // The group of GROUP_M rows that linear id p falls in holds its row.
                    std::int64_t const g = static_cast<std::int64_t>(p) / (group * columns);
                    ASSERT_EQ(row / group, g) << "linear id " << p;
                    // Inside a group the rows go fastest, then the columns.
                    if (p > 0 && tiles[p - 1].first / group == g) {
                        auto const [lastRow, lastColumn] = tiles[p - 1];
                        EXPECT_TRUE((column == lastColumn && row == lastRow + 1) ||
                                    (column == lastColumn + 1 && row == g * group))
                            << "linear id " << p;
                    }
                }
            }
}

TEST(TileOrder, OneRowAGroupIsRowMajorAndAllRowsTheHardwaresOrder) {
    auto const byRows = order(3, 4, 1), byColumns = order(3, 4, 3), beyond = order(3, 4, 16);
    for (std::int64_t p = 0; p < 12; ++p) {
        EXPECT_EQ(byRows[p], std::pair(p / 4, p % 4));
        EXPECT_EQ(byColumns[p], std::pair(p % 3, p / 3)); // x fastest, as the hardware
        EXPECT_EQ(beyond[p], byColumns[p]);
    }
}

Schedule withGroup(Schedule schedule, std::int64_t group) {
    schedule["GROUP_M"] = group;
    return schedule;
}

struct Path {
    std::string name, command, target;
    Schedule schedule;
};

// Every GEMM path of PTX code generation: SIMT, mma.sync, wgmma, wgmma with the copy engine's
// loads, and those issued by a producer warpgroup.
std::vector<Path> const kPtxPaths = {
    {"simt_f32", "gemm.json", "sm_80", {{"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}}},
    {"mma_sync_f16",
     "gemm-f16.json",
     "sm_80",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}}},
    {"wgmma_bf16",
     "gemm-bf16.json",
     "sm_90a",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}}},
    {"tma_warp_specialized_f16",
     "gemm-f16.json",
     "sm_90a",
     {{"MMA", 1},
      {"MT_M", 128},
      {"MT_N", 256},
      {"MT_K", 64},
      {"WT_M", 16},
      {"STAGES", 4},
      {"TMA", 1},
      {"WARP_SPECIALIZE", 1}}},
};

void PrintTo(Path const& path, std::ostream* os) {
    *os << path.name;
}

lowering::EmittedKernel emit(Path const& path, Schedule const& schedule) {
    return lowering::emitKernel(lowered(path.command, "gemm.pipeline.json", schedule, path.target),
                                {.target = path.target, .schedule = schedule});
}

class TileOrderPtx : public ::testing::TestWithParam<Path> {};

TEST_P(TileOrderPtx, TheGroupedOrderIsWrittenOnceAndAssembles) {
    Path const& path = GetParam();
    auto const hardware = emit(path, path.schedule);
    // GROUP_M=0 is the hardware's order: the kernel of a schedule without it.
    EXPECT_EQ(emit(path, withGroup(path.schedule, 0)).code, hardware.code);
    auto const grouped = emit(path, withGroup(path.schedule, 8));
    // The group's height, min(rows - first, 8), once per workgroup in i32; the launch is the
    // same.
    EXPECT_EQ(hardware.code.find("min.s32"), std::string::npos);
    EXPECT_NE(grouped.code.find("min.s32"), std::string::npos);
    EXPECT_EQ(grouped.grid, hardware.grid);
    EXPECT_EQ(std::to_array(grouped.block), std::to_array(hardware.block));
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const result = runtime::assemblePtx(grouped.code, path.target);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().spillStores, 0);
    EXPECT_LE(result.value().registers, 255);
}

INSTANTIATE_TEST_SUITE_P(Paths, TileOrderPtx, ::testing::ValuesIn(kPtxPaths),
                         [](auto const& p) { return p.param.name; });

TEST(TileOrder, TheGraphAndWhatItComputesAreUnchanged) {
    // GROUP_M is read by code generation only: the lowered graph is the same, and so is what
    // the interpreter computes at ragged sizes (11 x 3 tiles: a last group of 3 rows).
    Schedule const schedule = kPtxPaths[1].schedule;
    KernelGraph const plain = lowered("gemm-f16.json", "gemm.pipeline.json", schedule, "sm_80");
    KernelGraph const grouped =
        lowered("gemm-f16.json", "gemm.pipeline.json", withGroup(schedule, 8), "sm_80");
    EXPECT_EQ(toText(plain), toText(grouped));
    Command const command = loadCommand(sourcePath("examples/gemm-f16.json"));
    auto problem = command.defaults;
    problem["M"] = 700;
    problem["N"] = 130;
    problem["K"] = 40;
    SemanticCheck const check(command, problem, 18);
    EXPECT_NO_THROW(check.check(grouped, "the GEMM lowered with GROUP_M=8"));
    EXPECT_LE(check.lastError(), check.tolerance());
}

TEST(TileOrder, AGroupOutOfRangeIsRefusedByName) {
    for (std::int64_t group : {std::int64_t{-1}, lowering::kMaxGroupM + 1}) {
        try {
            (void)emit(kPtxPaths[0], withGroup(kPtxPaths[0].schedule, group));
            ADD_FAILURE() << "accepted GROUP_M=" << group;
        } catch (UserError const& e) {
            EXPECT_NE(std::string(e.what()).find(fmt::format("GROUP_M={} is out of range", group)),
                      std::string::npos)
                << e.what();
        }
    }
}

} // namespace
} // namespace kiln::test
