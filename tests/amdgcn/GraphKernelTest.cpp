// GraphKernelTest.cpp: AMDGCN kernels generated from lowered KernelGraphs (element-wise chains,
// row reductions and SIMT GEMMs staged through LDS) for gfx90a, gfx942 and gfx1100: each
// assembles into a code object that
// disassembles back to the same instructions, whose metadata note matches the manifest and
// whose register counts fit the target; one small kernel against a golden file.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R AmdgcnGraphGolden   (then review the diff)
#include "AmdTestSupport.h"
#include "LoweringTestSupport.h"
#include "kiln/amdgcn/Target.h"
#include "kiln/lowering/AmdgcnCodegen.h"
#include "kiln/runtime/KernelManifest.h"

#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace kiln {
namespace {

struct Case {
    std::string name, command, pipeline;
    std::map<std::string, std::int64_t> params;
    std::vector<std::string> expected; ///< instructions the kernel must contain (GFX9 spelling)
};

std::vector<Case> const kCases = {
    {"axpy", "axpy.json", "elementwise.pipeline.json", {}, {"global_load_dwordx4", "v_mul_f32"}},
    {"axpy_vec1", "axpy.json", "elementwise.pipeline.json", {{"VEC", 1}}, {"global_load_dword"}},
    {"fused", "fused-elementwise.json", "elementwise.pipeline.json", {}, {"v_exp_f32"}},
    {"fused_vec8",
     "fused-elementwise.json",
     "elementwise.pipeline.json",
     {{"VEC", 8}},
     {"global_load_dwordx4", "v_pack_b32_f16"}},
    {"row_sum",
     "row-reduction.json",
     "reduction.pipeline.json",
     {},
     {"v_add_f64", "s_cbranch_scc1"}},
    // f32 GEMM (B transposed, alpha and beta): 64 x 64 macro tiles, K in steps of 16, 4 x 4
    // register tiles; the K slices of A and B staged through LDS.
    {"gemm",
     "gemm.json",
     "gemm.pipeline.json",
     {},
     {"global_load_dwordx4", "ds_write_b32", "ds_read_b128", "v_fma_f32", "s_barrier",
      "s_cbranch_scc1"}},
    {"gemm_128x128_tt8",
     "gemm.json",
     "gemm.pipeline.json",
     {{"MT_M", 128}, {"MT_N", 128}, {"MT_K", 8}, {"TT_M", 8}, {"TT_N", 8}},
     {"ds_read_b128", "v_fma_f32"}},
    // f16 inputs widened to f32 between LDS and the fmas.
    {"gemm_f16", "gemm-f16.json", "gemm.pipeline.json", {}, {"v_cvt_f32_f16", "v_fma_f32"}},
    // Not staged: each workitem reads its operands from global memory, masked at the edges.
    {"gemm_unstaged", "gemm.json", "gemm.pipeline.json", {{"STAGES", 0}}, {"v_fma_f32"}},
};

void PrintTo(Case const& c, std::ostream* os) {
    *os << c.name;
}

lowering::EmittedKernel emit(Case const& c, std::string const& target) {
    KernelGraph const graph = test::lowered(c.command, c.pipeline, c.params, target);
    return lowering::emitAmdgcnKernel(graph, {.target = target, .schedule = c.params});
}

/// "name offset size kind" for each argument of the metadata note, in order.
std::vector<std::string> noteArguments(std::string const& note) {
    std::vector<std::string> out;
    std::regex const arg("- (?:\\.address_space:\\s+\\w+\\s+)?\\.name:\\s+(?:!str "
                         ")?(\\w+)\\s+\\.offset:\\s+(\\d+)\\s+"
                         "\\.size:\\s+(\\d+)\\s+\\.value_kind:\\s+(\\w+)");
    for (std::sregex_iterator it(note.begin(), note.end(), arg), end; it != end; ++it)
        out.push_back((*it)[1].str() + " " + (*it)[2].str() + " " + (*it)[3].str() + " " +
                      (*it)[4].str());
    return out;
}

/// The number after `key` in `text` (-1 when it is missing).
int numberAfter(std::string const& text, std::string const& key) {
    std::smatch m;
    if (!std::regex_search(text, m, std::regex(key + "\\s*(\\d+)")))
        return -1;
    return std::stoi(m[1].str());
}

/// Branch targets as "<target>": the source names labels, the disassembly prints offsets.
std::vector<std::string> withoutBranchTargets(std::vector<std::string> lines) {
    for (std::string& l : lines)
        if (l.starts_with("s_branch ") || l.starts_with("s_cbranch_"))
            l = l.substr(0, l.find(' ')) + " <target>";
    return lines;
}

using Param = std::tuple<Case, std::string>;

class AmdgcnGraphKernel : public ::testing::TestWithParam<Param> {};

TEST_P(AmdgcnGraphKernel, AssemblesDisassemblesAndMatchesItsManifest) {
    auto const& [c, target] = GetParam();
    lowering::EmittedKernel const kernel = emit(c, target);
    amdgcn::Target const t = amdgcn::Target::named(target);

    auto manifest = runtime::KernelManifest::fromJson(kernel.manifestJson(), "manifest");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->entry, kernel.entry);
    EXPECT_EQ(manifest->target, target);
    for (std::string const& mnemonic : c.expected)
        EXPECT_NE(kernel.code.find(t.mnemonic(mnemonic)), std::string::npos)
            << mnemonic << " missing in\n"
            << kernel.code;

    // Register counts within the target's files.
    int const vgprs = numberAfter(kernel.code, "\\.amdhsa_next_free_vgpr");
    int const sgprs = numberAfter(kernel.code, "\\.amdhsa_next_free_sgpr");
    EXPECT_GT(vgprs, 0);
    EXPECT_LE(vgprs, t.vgprs() + t.agprs());
    EXPECT_GT(sgprs, 0);
    EXPECT_LE(sgprs, t.sgprs());

    std::string why;
    std::string const code = amdgcn::test::assemble(kernel.code, target, why);
    if (code.empty())
        GTEST_SKIP() << why;
    EXPECT_EQ(code.substr(0, 4), "\x7f"
                                 "ELF");
    std::vector<std::string> const back = amdgcn::test::disassemble(code, target, why);
    if (back.empty())
        GTEST_SKIP() << why;
    amdgcn::test::expectSameInstructions(
        withoutBranchTargets(back),
        withoutBranchTargets(amdgcn::test::instructionsOf(kernel.code)));

    std::string const note = amdgcn::test::metadataNote(code, why);
    std::vector<std::string> expected;
    std::size_t kernarg = 0;
    for (auto const& p : manifest->parameters) {
        expected.push_back(
            p.name + " " + std::to_string(p.offset) + " " + std::to_string(p.size) + " " +
            (p.kind == runtime::ParameterKind::Pointer ? "global_buffer" : "by_value"));
        kernarg = std::max(kernarg, p.offset + p.size);
    }
    EXPECT_EQ(noteArguments(note), expected) << note;
    EXPECT_EQ(numberAfter(note, "\\.kernarg_segment_size:"), static_cast<int>(kernarg)) << note;
    EXPECT_EQ(numberAfter(note, "\\.wavefront_size:"), t.waveSize()) << note;
    EXPECT_EQ(numberAfter(note, "\\.max_flat_workgroup_size:"),
              static_cast<int>(kernel.block[0] * kernel.block[1] * kernel.block[2]))
        << note;
    EXPECT_EQ(numberAfter(note, "\\.vgpr_count:"), vgprs) << note;
    EXPECT_EQ(numberAfter(note, "\\.sgpr_count:"), sgprs) << note;
}

std::string caseName(::testing::TestParamInfo<Param> const& info) {
    return std::get<0>(info.param).name + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Kernels, AmdgcnGraphKernel,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::ValuesIn(amdgcn::test::kTargets)),
                         caseName);

TEST(AmdgcnGraphGolden, AxpyOnGfx942) {
    std::string const text = emit(kCases[1], "gfx942").code;
    std::string const path = test::sourcePath("tests/golden/amdgcn/axpy_vec1.gfx942.s");
    if (char const* update = std::getenv("KILN_UPDATE_GOLDEN"); update && *update == '1') {
        std::ofstream(path) << text;
        return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "no golden file " << path << "; KILN_UPDATE_GOLDEN=1 writes it";
    std::stringstream golden;
    golden << in.rdbuf();
    EXPECT_EQ(text, golden.str()) << "golden file " << path << " differs";
}

TEST(AmdgcnGraphKernel, ManifestIsThePtxBackendsFormat) {
    lowering::EmittedKernel const kernel = emit(kCases[0], "gfx90a");
    EXPECT_EQ(kernel.entry, "kiln_axpy");
    EXPECT_EQ(kernel.block[0], 256);
    EXPECT_EQ(kernel.grid[0], "ceildiv(N, 1024)");
    ASSERT_EQ(kernel.parameters.size(), 4u);
    EXPECT_EQ(kernel.parameters[0].name, "X");
    EXPECT_TRUE(kernel.parameters[0].pointer);
    EXPECT_FALSE(kernel.graphHash.empty());
    // The same interface as the PTX kernel of the same graph.
    KernelGraph const graph = test::lowered("axpy.json", "elementwise.pipeline.json");
    lowering::EmittedKernel const ptx = lowering::emitKernel(graph, {.target = "sm_90a"});
    ASSERT_EQ(ptx.parameters.size(), kernel.parameters.size());
    for (std::size_t k = 0; k < ptx.parameters.size(); ++k) {
        EXPECT_EQ(ptx.parameters[k].name, kernel.parameters[k].name);
        EXPECT_EQ(ptx.parameters[k].offset, kernel.parameters[k].offset);
    }
    EXPECT_EQ(ptx.grid, kernel.grid);
    EXPECT_EQ(ptx.graphHash, kernel.graphHash);
}

std::size_t occurrences(std::string const& text, std::string const& what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at)
        ++n;
    return n;
}

TEST(AmdgcnGraphKernel, GemmStagesThroughLdsAndAccumulatesInRegisters) {
    lowering::EmittedKernel const kernel = emit(kCases[5], "gfx942");
    EXPECT_EQ(kernel.block[0], 16);
    EXPECT_EQ(kernel.block[1], 16);
    EXPECT_EQ(kernel.sharedBytes, 2u * 64 * 16 * 4); // one K slice of A and one of B
    EXPECT_NE(kernel.code.find(".amdhsa_group_segment_fixed_size 8192"), std::string::npos);
    // Every product goes straight into its accumulator: MT_K x TT_M x TT_N fmas.
    EXPECT_EQ(occurrences(kernel.code, "v_fma_f32"), 16u * 4 * 4);
    // Four rows (or columns) at one K are one 16-byte read of the K-major LDS tile.
    EXPECT_EQ(occurrences(kernel.code, "ds_read_b128"), 16u * 2);
    // A and B: four elements consecutive in the tensor per workitem, one 16-byte load each
    // (where they are aligned, which the row length decides at launch), written K-major: four
    // LDS writes each. C, after the loop: one 16-byte load per row of the register tile.
    EXPECT_EQ(occurrences(kernel.code, "global_load_dwordx4"), 2u + 4);
    EXPECT_EQ(occurrences(kernel.code, "ds_write_b32"), 2u * 4);
    // A and B are each staged and met at a barrier; one more ends the iteration before the next
    // one overwrites the tiles.
    EXPECT_EQ(occurrences(kernel.code, "s_barrier"), 3u);
    // One loop, entered and left with nothing outstanding.
    EXPECT_EQ(occurrences(kernel.code, "s_cbranch_scc1"), 1u);
    EXPECT_EQ(occurrences(kernel.code, "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)") >= 2, true);
}

TEST(AmdgcnGraphKernel, RefusesWhatItCannotWrite) {
    // TT_M = 3 does not divide MT_M, so gemm-thread-tiles leaves the macro tiles whole: each
    // workgroup would be one workitem holding 64 x 64 accumulators.
    KernelGraph const graph = test::lowered("gemm.json", "gemm.pipeline.json", {{"TT_M", 3}});
    try {
        (void)lowering::emitAmdgcnKernel(graph, {.target = "gfx942"});
        FAIL() << "a GEMM graph without register tiles was emitted";
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find("would need 4096 registers per workitem; tile it "
                                             "further"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW((void)lowering::emitAmdgcnKernel(graph, {.target = "sm_90a"}), UserError);
    EXPECT_TRUE(lowering::isAmdgcnTarget("gfx1100"));
    EXPECT_FALSE(lowering::isAmdgcnTarget("sm_90a"));
}

} // namespace
} // namespace kiln
