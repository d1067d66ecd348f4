// GraphKernelTest.cpp: AMDGCN kernels generated from lowered KernelGraphs (element-wise chains,
// row reductions, SIMT GEMMs staged through LDS, and f16/bf16 GEMMs on the matrix cores, v_mfma
// on gfx90a and gfx942) for gfx90a, gfx942 and gfx1100: each
// assembles into a code object that
// disassembles back to the same instructions, whose metadata note matches the manifest and
// whose register counts fit the target; one small kernel against a golden file.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R AmdgcnGraphGolden   (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "AmdTestSupport.h"
#include "LoweringTestSupport.h"
#include "kiln/amdgcn/Target.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/KernelManifest.h"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace kiln {
namespace {

using test::occurrences;

struct Case {
    std::string name, command, pipeline;
    std::map<std::string, std::int64_t> params;
    std::vector<std::string> expected; ///< instructions the kernel must contain (GFX9 spelling)
    /// Instructions it must contain on targets with MFMA (gfx90a, gfx942); on the others the
    /// same layout runs on v_fma_f32.
    std::vector<std::string> onMatrixCores = {};
};

bool hasMatrixCores(std::string const& target) {
    return target == "gfx90a" || target == "gfx942";
}

std::vector<Case> const kCases = {
    {"axpy", "axpy.json", "elementwise.pipeline.json", {}, {"global_load_dwordx4", "v_mul_f32"}},
    {"axpy_vec1", "axpy.json", "elementwise.pipeline.json", {{"VEC", 1}}, {"global_load_dword"}},
    // The GELU's 1 + tanh as 2 / (1 + exp(-2u)) with v_rcp_f32 (an f16 result, Precision.h).
    {"fused",
     "fused-elementwise.json",
     "elementwise.pipeline.json",
     {},
     {"v_exp_f32", "v_rcp_f32"}},
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
    // The K loop unrolled twice (gemm-k-unroll): the body written twice inside one loop.
    {"gemm_unroll2",
     "gemm.json",
     "gemm.pipeline.json",
     {{"UNROLL", 2}},
     {"v_fma_f32", "s_barrier", "s_cbranch_scc1"}},
    // f16 inputs widened to f32 between LDS and the fmas.
    {"gemm_f16", "gemm-f16.json", "gemm.pipeline.json", {}, {"v_cvt_f32_f16", "v_fma_f32"}},
    // Not staged: each workitem reads its operands from global memory, masked at the edges.
    {"gemm_unstaged", "gemm.json", "gemm.pipeline.json", {{"STAGES", 0}}, {"v_fma_f32"}},
    // MMA=1: wave64 tiles laid out as v_mfma_f32_16x16x16's fragments (gemm-wave-tiles). f16,
    // two waves of 32 x 64: A staged K-contiguous (ds_read_b64 per fragment), B N-contiguous
    // (four ds_read_u16 packed with v_lshl_or_b32).
    {"gemm_f16_mfma",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"WT_M", 32}},
     {"s_barrier", "s_cbranch_scc1"},
     {"v_mfma_f32_16x16x16", "ds_read_b64", "ds_read_u16", "v_lshl_or_b32"}},
    // bf16 with both operands stored transposed, alpha and beta: a 2 x 2 grid of 32 x 32 waves,
    // two K steps of 16 per slice.
    {"gemm_bf16_mfma_grid",
     "gemm-bf16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"WT_N", 32}},
     {"s_barrier"},
     {"v_mfma_f32_16x16x16", "ds_read_b64", "ds_read_u16"}},
    // 128 x 128 macro tiles, four waves of 64 x 64: 64 accumulators per lane.
    {"gemm_f16_mfma_128",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 64}, {"WT_N", 64}},
     {"s_barrier"},
     {"v_mfma_f32_16x16x16"}},
    // GROUP_M (issue 18): the workgroups take their tiles 8 rows of tiles at a time, the tile
    // computed on the vector unit (its quotients) and read back into SGPRs; SIMT register tiles
    // and a 2 x 2 grid of waves.
    {"gemm_grouped_tiles",
     "gemm.json",
     "gemm.pipeline.json",
     {{"GROUP_M", 8}},
     {"v_readfirstlane_b32", "v_min_i32"}},
    {"gemm_grouped_tiles_mfma_grid",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1},
      {"MT_M", 64},
      {"MT_N", 64},
      {"MT_K", 32},
      {"WT_M", 32},
      {"WT_N", 32},
      {"GROUP_M", 16}},
     {"v_readfirstlane_b32", "v_min_i32"},
     {"v_mfma_f32_16x16x16"}},
    // PERSISTENT=1 (issue 18): each workgroup loops over the tiles (the loop's counter and
    // the workgroups launched on the scalar unit, those read from the dispatch packet), in
    // GROUP_M's order; SIMT register tiles and a 2 x 2 grid of waves.
    {"gemm_persistent_tiles",
     "gemm.json",
     "gemm.pipeline.json",
     {{"PERSISTENT", 1}, {"GROUP_M", 8}},
     {"s_load_dwordx4", "s_lshr_b32", "s_addc_u32", "v_readfirstlane_b32", "s_barrier"}},
    {"gemm_persistent_tiles_mfma_grid",
     "gemm-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1},
      {"MT_M", 64},
      {"MT_N", 64},
      {"MT_K", 32},
      {"WT_M", 32},
      {"WT_N", 32},
      {"PERSISTENT", 1}},
     {"s_load_dwordx4", "s_lshr_b32", "s_addc_u32", "s_barrier"},
     {"v_mfma_f32_16x16x16"}},
    // Fused epilogues (issue 19): bias + tanh-GELU on a 2 x 2 grid of waves (the bias broadcast
    // over the rows, loaded at the accumulators' columns), and a scaled product + residual +
    // ReLU on SIMT register tiles; each workitem's chain in chunks, cast to f16 at the store.
    {"gemm_bias_gelu_mfma_grid",
     "gemm-bias-gelu-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"WT_N", 32}},
     {"v_exp_f32", "s_barrier"},
     {"v_mfma_f32_16x16x16"}},
    {"gemm_residual_relu",
     "gemm-residual-relu-epilogue-f16.json",
     "gemm.pipeline.json",
     {},
     {"v_max_f32", "v_fma_f32", "v_cvt_f16_f32"}},
    // tanh and a quotient for an f16 result (approximate: v_rcp_f32 alone) and an f32 one
    // (exact: the series near 0, v_div_scale / v_div_fmas / v_div_fixup).
    {"precision",
     "../tests/lowering/commands/tanh-f16-and-f32.json",
     "elementwise.pipeline.json",
     {},
     {"v_rcp_f32", "v_bfi_b32", "v_div_scale_f32", "v_div_fmas_f32", "v_div_fixup_f32"}},
};

void PrintTo(Case const& c, std::ostream* os) {
    *os << c.name;
}

lowering::EmittedKernel emit(Case const& c, std::string const& target) {
    KernelGraph const graph = test::lowered(c.command, c.pipeline, c.params, target);
    return lowering::emitKernel(graph, {.target = target, .schedule = c.params});
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
    if (!c.onMatrixCores.empty()) {
        bool const mfma = hasMatrixCores(target);
        for (std::string const& mnemonic : mfma ? c.onMatrixCores : std::vector<std::string>{})
            EXPECT_NE(kernel.code.find(mnemonic), std::string::npos) << mnemonic << " missing in\n"
                                                                     << kernel.code;
        EXPECT_EQ(kernel.code.find("v_mfma") != std::string::npos, mfma);
        EXPECT_EQ(kernel.code.find(t.mnemonic("v_fma_f32")) != std::string::npos, !mfma);
    }

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
    kiln::test::expectGoldenFile("tests/golden/amdgcn/axpy_vec1.gfx942.s",
                                 emit(kCases[1], "gfx942").code);
}

TEST(AmdgcnGraphGolden, PrecisionOnGfx942) {
    auto const precision = std::find_if(kCases.begin(), kCases.end(),
                                        [](Case const& c) { return c.name == "precision"; });
    kiln::test::expectGoldenFile("tests/golden/amdgcn/tanh_f16_and_f32.gfx942.s",
                                 emit(*precision, "gfx942").code);
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

Case const& caseNamed(std::string const& name) {
    for (Case const& c : kCases)
        if (c.name == name)
            return c;
    throw std::out_of_range(name);
}

TEST(AmdgcnGraphKernel, UnrolledKLoopWritesItsBodyOncePerCopy) {
    lowering::EmittedKernel const kernel = emit(caseNamed("gemm_unroll2"), "gfx942");
    // Two copies of the body: 2 x MT_K x TT_M x TT_N fmas and three barriers per copy.
    EXPECT_EQ(occurrences(kernel.code, "v_fma_f32"), 2u * 16 * 4 * 4);
    EXPECT_EQ(occurrences(kernel.code, "s_barrier"), 2u * 3);
    // The loop's test, and each copy's guard (ko * 2 + u < K tiles).
    EXPECT_EQ(occurrences(kernel.code, "s_cbranch_scc1"), 1u + 2);
}

TEST(AmdgcnGraphKernel, GemmOnTheMatrixCores) {
    for (std::string target : {"gfx90a", "gfx942"}) {
        lowering::EmittedKernel const kernel = emit(caseNamed("gemm_f16_mfma"), target);
        // Two waves of 64 lanes: x (16) a lane's column, y (4) its group of four rows.
        EXPECT_EQ(kernel.block[0], 16);
        EXPECT_EQ(kernel.block[1], 4);
        EXPECT_EQ(kernel.block[2], 2);
        // A wave's 32 x 64 tile is 2 x 4 fragments of 16 x 16; one K step of 16 per slice.
        std::string const mnemonic =
            target == "gfx942" ? "v_mfma_f32_16x16x16_f16 " : "v_mfma_f32_16x16x16f16 ";
        EXPECT_EQ(occurrences(kernel.code, mnemonic), 8u) << target;
        // Each fragment accumulates into itself: v[n:n+3] as destination and SrcC.
        std::regex const accumulate("v_mfma\\w+ (v\\[\\d+:\\d+\\]), v\\[\\d+:\\d+\\], "
                                    "v\\[\\d+:\\d+\\], (v\\[\\d+:\\d+\\])");
        std::size_t same = 0;
        for (std::sregex_iterator it(kernel.code.begin(), kernel.code.end(), accumulate), end;
             it != end; ++it)
            same += (*it)[1] == (*it)[2];
        EXPECT_EQ(same, 8u) << target;
        // A (row-major, K-contiguous): one 8-byte read per row slab; B (N-contiguous): four
        // 2-byte reads per column slab, packed in pairs.
        EXPECT_EQ(occurrences(kernel.code, "ds_read_b64"), 2u) << target;
        EXPECT_EQ(occurrences(kernel.code, "ds_read_u16"), 4u * 4) << target;
        EXPECT_EQ(occurrences(kernel.code, "v_lshl_or_b32"), 2u * 4) << target;
        EXPECT_EQ(occurrences(kernel.code, "v_fma_f32"), 0u) << target;
        // The back edge waits out the longest MFMA hazard (19 wait states: s_nop 15, s_nop 2).
        EXPECT_NE(kernel.code.find("s_nop 15\n  s_nop 2 // no hazard across the loop's edges"),
                  std::string::npos)
            << target;
    }
    // gfx1100 has no MFMA: the warp layout (mma.sync's) runs on v_fma_f32.
    lowering::EmittedKernel const rdna = emit(caseNamed("gemm_f16_mfma"), "gfx1100");
    EXPECT_EQ(rdna.code.find("v_mfma"), std::string::npos);
    EXPECT_NE(rdna.code.find("v_fma_f32"), std::string::npos);
}

// A small MFMA kernel's whole text: 32 x 16 macro tiles, two waves of 16 x 16, one fragment each.
TEST(AmdgcnGraphGolden, MfmaGemmOnGfx942) {
    Case const c{"gemm_f16_mfma_small",
                 "gemm-f16.json",
                 "gemm.pipeline.json",
                 {{"MMA", 1}, {"MT_M", 32}, {"MT_N", 16}, {"MT_K", 16}, {"WT_M", 16}},
                 {}};
    std::string const text = emit(c, "gfx942").code;
    EXPECT_EQ(occurrences(text, "v_mfma_f32_16x16x16_f16 "), 1u);
    amdgcn::test::expectGolden("gemm_f16_mfma.gfx942.s", text);
}

TEST(AmdgcnGraphKernel, RefusesWhatItCannotWrite) {
    // TT_M = 3 does not divide MT_M, so gemm-thread-tiles leaves the macro tiles whole: each
    // workgroup would be one workitem holding 64 x 64 accumulators.
    KernelGraph const graph = test::lowered("gemm.json", "gemm.pipeline.json", {{"TT_M", 3}});
    try {
        (void)lowering::emitKernel(graph, {.target = "gfx942"});
        FAIL() << "a GEMM graph without register tiles was emitted";
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find("would need 4096 registers per workitem; tile it "
                                             "further"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(lowering::targetVendor("gfx1100"), arch::Vendor::Amd);
    EXPECT_EQ(lowering::targetVendor("sm_90a"), arch::Vendor::Nvidia);
}

// emitKernel chooses the code generator by the target's vendor in arch-db: the AMDGCN one for
// every AMD target; an unknown target is bad input.
TEST(AmdgcnGraphKernel, EmitKernelChoosesByVendor) {
    KernelGraph const graph = test::lowered("axpy.json", "elementwise.pipeline.json");
    for (char const* target : {"gfx90a", "gfx942", "gfx1100"})
        EXPECT_NE(lowering::emitKernel(graph, {.target = target}).code.find(".amdhsa_kernel"),
                  std::string::npos)
            << target;
    EXPECT_NE(lowering::emitKernel(graph, {.target = "sm_80"}).code.find(".target sm_80"),
              std::string::npos);
    EXPECT_THROW((void)lowering::emitKernel(graph, {.target = "gfx0"}), UserError);
}

} // namespace
} // namespace kiln
