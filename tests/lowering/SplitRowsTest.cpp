// SplitRowsTest.cpp: row reductions whose rows several workgroups share (SPLIT of
// rules/reduction.pipeline.json; docs/codegen.md, "Rows split over workgroups"). Every schedule
// keeps the Command's meaning (the reference interpreter at the Command's sizes, one row, one
// column, rows split into parts that lie past their end); the kernel takes the workspace the
// manifest declares, each workgroup counts itself in once, and the last one reads every part's
// value back, on PTX (assembled by ptxas) and on AMDGCN; a small case's PTX and AMDGCN are golden
// files.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R SplitRowsGolden   (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kiln::test {
namespace {

using Params = std::map<std::string, std::int64_t>;

struct Split {
    std::string name, command;
    Params params; ///< COOP=1 is added
};

std::vector<Split> const kSplits = {
    {"rowmajor_8_parts",
     "row-sum-rowmajor.json",
     {{"ROWS", 1}, {"LANES", 256}, {"VEC", 4}, {"SPLIT", 8}}},
    {"rowmajor_warps_3_parts",
     "row-sum-rowmajor.json",
     {{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"UNROLL", 2}, {"SPLIT", 3}}},
    {"colmajor_16_parts",
     "row-reduction.json",
     {{"ROWS", 32}, {"LANES", 8}, {"VEC", 2}, {"SPLIT", 16}}},
    {"colmajor_one_lane",
     "row-reduction.json",
     {{"ROWS", 128}, {"LANES", 1}, {"VEC", 4}, {"SPLIT", 4}}},
    {"max_f16_colmajor",
     "row-max-colmajor.json",
     {{"ROWS", 32}, {"LANES", 8}, {"VEC", 4}, {"SPLIT", 5}}},
    {"min_bf16_rowmajor",
     "row-min-rowmajor-bf16.json",
     {{"ROWS", 2}, {"LANES", 64}, {"VEC", 8}, {"SPLIT", 2}}},
    {"mean_f16_rowmajor",
     "row-mean-rowmajor.json",
     {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}, {"SPLIT", 4}}},
};

Params cooperative(Params p) {
    p["COOP"] = 1;
    return p;
}

// Whether a row's value is 8 bytes: f16 and bf16 rows (the schedules named so) accumulate in
// f32, the others in f64. A part's slot in the workspace is 8 bytes either way.
bool wideAccumulator(Split const& s) {
    return s.name.find("f16") == std::string::npos;
}

std::vector<std::string> lines(std::string const& text) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t const end = std::min(text.find('\n', at), text.size());
        out.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

class SplitRows : public ::testing::TestWithParam<Split> {};

// The reference interpreter runs the lowered graph at the Command's sizes (300 x 257: with 8
// parts of 1024 columns, seven lie wholly past the row's end), one row, one column, and rows a
// few parts long that end in the middle of a part.
TEST_P(SplitRows, KeepsTheCommandsMeaning) {
    Split const& s = GetParam();
    Command const command = loadCommand(sourcePath("examples/" + s.command));
    KernelGraph const graph = lowered(s.command, "reduction.pipeline.json", cooperative(s.params));
    for (auto const& problem :
         std::vector<std::map<std::string, double>>{command.defaults,
                                                    {{"M", 1}, {"N", 1000}},
                                                    {{"M", 1000}, {"N", 1}},
                                                    {{"M", 37}, {"N", 3001}}}) {
        SemanticCheck const check(command, problem, 7);
        EXPECT_LE(check.measure(graph), check.tolerance())
            << s.name << " at M=" << problem.at("M") << ", N=" << problem.at("N");
    }
}

// The parts are the grid's y; the kernel's last parameter is the workspace, a counter per block
// of rows (16-byte aligned) and an 8-byte slot per row of each part, zeroed before the first
// launch.
TEST_P(SplitRows, TakesTheWorkspaceTheManifestDeclares) {
    Split const& s = GetParam();
    Params const params = cooperative(s.params);
    auto const kernel = lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params),
                                             {.target = "sm_90a", .schedule = params});
    std::int64_t const rows = params.at("ROWS"), parts = params.at("SPLIT");
    EXPECT_EQ(kernel.grid[1], std::to_string(parts));
    lowering::ParameterInfo const& workspace = kernel.parameters.back();
    EXPECT_EQ(workspace.name, lowering::kWorkspaceParameter);
    EXPECT_TRUE(workspace.pointer);
    std::string const blocks = rows == 1 ? "M" : "ceildiv(M, " + std::to_string(rows) + ")";
    EXPECT_EQ(workspace.workspaceBytes.value_or(""),
              fmt::format("ceildiv({}, 4) * 16 + {} * {}", blocks, blocks, parts * rows * 8));
    auto const manifest = nlohmann::json::parse(kernel.manifestJson());
    EXPECT_EQ(manifest["parameters"].back()["workspace"]["zeroed"], true);
}

// PTX: each row's value written and fenced once, one acquire-release count per workgroup, the
// others leave, the last reads each part's value with a relaxed load at the GPU's scope.
TEST_P(SplitRows, CountsEachWorkgroupInOnceOnPtx) {
    Split const& s = GetParam();
    Params const params = cooperative(s.params);
    for (std::string const target : {"sm_80", "sm_90a"}) {
        auto const kernel =
            lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params, target),
                                 {.target = target, .schedule = params});
        EXPECT_EQ(occurrences(kernel.code, "atom.acq_rel.gpu.global.add.u32"), 1u);
        EXPECT_EQ(occurrences(kernel.code, "st.relaxed.gpu.global.u32"), 1u); // the reset
        EXPECT_EQ(occurrences(kernel.code, wideAccumulator(s) ? "ld.relaxed.gpu.global.b64"
                                                              : "ld.relaxed.gpu.global.b32"),
                  static_cast<std::size_t>(params.at("SPLIT")));
        if (!runtime::findPtxas())
            continue;
        auto const result = runtime::assemblePtx(kernel.code, target);
        ASSERT_TRUE(result.ok()) << result.error().message() << "\n" << kernel.code;
        EXPECT_EQ(result.value().spillStores, 0) << target;
    }
}

// AMDGCN: one returning atomic add per workgroup, an early s_endpgm for all but the last, and
// the parts' values read past the caches (CDNA 3: sc0 sc1, after buffer_inv sc1).
TEST_P(SplitRows, CountsEachWorkgroupInOnceOnAmdgcn) {
    Split const& s = GetParam();
    Params const params = cooperative(s.params);
    auto const kernel =
        lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params, "gfx942"),
                             {.target = "gfx942", .schedule = params});
    EXPECT_EQ(occurrences(kernel.code, "global_atomic_add "), 1u);
    EXPECT_EQ(occurrences(kernel.code, "s_endpgm"), 2u);
    EXPECT_EQ(occurrences(kernel.code, "buffer_wbl2 sc1"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "buffer_inv sc1"), 1u);
    std::size_t coherentLoads = 0, coherentStores = 0;
    for (std::string const& line : lines(kernel.code)) {
        bool const coherent = line.find("off sc0 sc1") != std::string::npos;
        coherentLoads +=
            coherent && line.find(wideAccumulator(s) ? "global_load_dwordx2 "
                                                     : "global_load_dword ") != std::string::npos;
        coherentStores += coherent && line.find("global_store_dword") != std::string::npos;
    }
    EXPECT_EQ(coherentLoads, static_cast<std::size_t>(params.at("SPLIT")));
    EXPECT_EQ(coherentStores, 2u); // the row's value, and the counter set back to 0
}

INSTANTIATE_TEST_SUITE_P(Schedules, SplitRows, ::testing::ValuesIn(kSplits),
                         [](auto const& p) { return p.param.name; });

// A small case whole: 2 rows of 64 lanes a workgroup, each row split over 4 workgroups (the
// row's value through the workspace, the block's counter, the last workgroup's reads).
Params const kSmall{{"COOP", 1}, {"ROWS", 2}, {"LANES", 64}, {"VEC", 4}, {"SPLIT", 4}};

TEST(SplitRowsGolden, PtxOnSm90) {
    auto const graph = lowered("row-sum-rowmajor.json", "reduction.pipeline.json", kSmall, "sm_90");
    expectGoldenFile("tests/golden/ptx/row_sum_rowmajor_split.sm_90.ptx",
                     lowering::emitKernel(graph, {.target = "sm_90", .schedule = kSmall}).code);
}

TEST(SplitRowsGolden, AmdgcnOnGfx942) {
    auto const graph =
        lowered("row-sum-rowmajor.json", "reduction.pipeline.json", kSmall, "gfx942");
    expectGoldenFile("tests/golden/amdgcn/row_sum_rowmajor_split.gfx942.s",
                     lowering::emitKernel(graph, {.target = "gfx942", .schedule = kSmall}).code);
}

// SPLIT below 1 is refused at the rule set's parameter, before anything is lowered.
TEST(SplitRowsRefuses, NoWorkgroupsAtAll) {
    EXPECT_THROW(lowered("row-sum-rowmajor.json", "reduction.pipeline.json",
                         {{"COOP", 1}, {"ROWS", 1}, {"LANES", 64}, {"SPLIT", 0}}),
                 UserError);
}

} // namespace
} // namespace kiln::test
