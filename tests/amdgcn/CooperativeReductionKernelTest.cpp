// CooperativeReductionKernelTest.cpp: Reduces whose rows several workitems share (COOP=1 of
// rules/reduction.pipeline.json) emitted for every AMD target, in both layouts and with sum,
// max, min and mean, rows split over workgroups (SPLIT), consecutive rows a workitem (ROW_VEC),
// and softmax, layer norm and RMS norm (a
// row's value used back along it; the online softmax and the one-pass layer norm, ONLINE=1, and
// their statistics merged in one exchange, ONLINE=2); each
// kernel assembles, and its code object disassembles back to the same instructions
// (ds_swizzle_b32's bit-mask offset included); made for its sizes, a kernel traps at others.
// Skips, saying why, where this build has no assembler
// or llvm-objdump-16.
#include "../Occurrences.h"
#include "AmdTestSupport.h"
#include "LoweringTestSupport.h"
#include "kiln/amdgcn/Target.h"
#include "kiln/lowering/Codegen.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

struct Schedule {
    std::string name, command;
    std::map<std::string, std::int64_t> params;
    std::vector<std::string> expected; ///< mnemonics (GFX9 names) the kernel must use
};

std::vector<Schedule> const kSchedules = {
    {"sum_rowmajor_256_lanes",
     "row-sum-rowmajor.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 256}, {"VEC", 4}},
     {"global_load_dwordx4", "ds_swizzle_b32", "ds_write_b64", "ds_read_b64", "s_barrier"}},
    {"sum_colmajor_8_lanes",
     "row-reduction.json",
     {{"COOP", 1}, {"ROWS", 64}, {"LANES", 8}, {"VEC", 2}},
     {"v_add_f64", "ds_write_b64", "ds_read_b64", "s_barrier"}},
    {"max_f16_colmajor_shuffled",
     "row-max-colmajor.json",
     {{"COOP", 1}, {"ROWS", 4}, {"LANES", 16}, {"VEC", 4}},
     {"v_max_f32", "v_cndmask_b32", "ds_swizzle_b32"}},
    {"min_bf16_rowmajor_warp",
     "row-min-rowmajor-bf16.json",
     {{"COOP", 1}, {"ROWS", 8}, {"LANES", 32}, {"VEC", 8}},
     {"v_min_f32", "ds_swizzle_b32", "global_load_dwordx4"}},
    {"sum_rowmajor_4_reads",
     "row-sum-rowmajor.json",
     {{"COOP", 1}, {"ROWS", 2}, {"LANES", 64}, {"VEC", 4}, {"UNROLL", 4}},
     {"global_load_dwordx4", "ds_swizzle_b32", "ds_read_b64"}},
    {"mean_f16_rowmajor",
     "row-mean-rowmajor.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 128}, {"VEC", 8}},
     {"v_add_f32", "ds_swizzle_b32", "v_div_scale_f32", "v_div_fixup_f32"}},
    // Rows split over workgroups (SPLIT): the parts' values meet in the workspace, counted in
    // with a returning atomic add; all but the last workgroup end early.
    {"sum_rowmajor_split",
     "row-sum-rowmajor.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 256}, {"VEC", 4}, {"SPLIT", 8}},
     {"global_atomic_add", "s_endpgm", "global_store_dwordx2", "global_load_dwordx4",
      "ds_swizzle_b32"}},
    {"max_f16_colmajor_split",
     "row-max-colmajor.json",
     {{"COOP", 1}, {"ROWS", 32}, {"LANES", 8}, {"VEC", 4}, {"SPLIT", 5}},
     {"global_atomic_add", "s_endpgm", "v_max_f32", "v_readfirstlane_b32"}},
    // ROW_VEC consecutive rows a workitem: a column's rows read with one vector load.
    {"sum_colmajor_4_rows",
     "row-reduction.json",
     {{"COOP", 1}, {"ROWS", 32}, {"LANES", 16}, {"VEC", 8}, {"ROW_VEC", 4}},
     {"global_load_dwordx4", "global_store_dwordx4", "v_add_f64", "ds_write_b64"}},
    // A row's reduced value used back along the row: the rows read again in each pass.
    {"softmax_f16",
     "softmax-f16.json",
     {{"COOP", 1}, {"ROWS", 2}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}},
     {"v_max_f32", "v_add_f64", "v_exp_f32", "ds_swizzle_b32", "global_store_dwordx4"}},
    // The online softmax (ONLINE=1): the max and the rescaled sums exchanged one after the
    // other, the rows read twice.
    {"softmax_f16_online",
     "softmax-f16.json",
     {{"COOP", 1}, {"ROWS", 2}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}, {"ONLINE", 1}},
     {"v_max_f32", "v_exp_f32", "v_max_f64", "v_add_f64", "ds_swizzle_b32", "s_barrier",
      "global_store_dwordx4"}},
    {"softmax_f16_online_warp",
     "softmax-f16.json",
     {{"COOP", 1}, {"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"ONLINE", 1}},
     {"v_max_f32", "v_exp_f32", "ds_swizzle_b32", "global_load_dwordx2"}},
    {"layernorm_f16",
     "layernorm-f16.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 256}, {"VEC", 4}},
     {"v_add_f64", "v_sqrt_f32", "ds_swizzle_b32", "s_barrier", "global_store_dwordx2"}},
    // The layer norm's mean and variance in one pass (ONLINE=1, Welford): a division a chunk
    // for its mean and one for Chan's weight, the rows' sums and M2s exchanged in f64.
    {"layernorm_f16_welford",
     "layernorm-f16.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 256}, {"VEC", 8}, {"UNROLL", 2}, {"ONLINE", 1}},
     {"v_div_scale_f32", "v_div_fixup_f32", "v_add_f64", "v_sqrt_f32", "ds_swizzle_b32",
      "s_barrier", "global_store_dwordx4"}},
    {"layernorm_f16_welford_warp",
     "layernorm-f16.json",
     {{"COOP", 1}, {"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"ONLINE", 1}},
     {"v_div_scale_f32", "v_add_f64", "ds_swizzle_b32", "global_load_dwordx2"}},
    // ONLINE=2: each pair of statistics merged in one exchange of f32 values (no f64 left):
    // through LDS for 256 lanes a row, over a warp's lanes alone for 32.
    {"layernorm_f16_one_exchange",
     "layernorm-f16.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 256}, {"VEC", 8}, {"UNROLL", 2}, {"ONLINE", 2}},
     {"v_div_scale_f32", "v_mul_f32", "v_sqrt_f32", "ds_swizzle_b32", "s_barrier",
      "global_store_dwordx4"}},
    {"softmax_f16_one_exchange_warp",
     "softmax-f16.json",
     {{"COOP", 1}, {"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"ONLINE", 2}},
     {"v_max_f32", "v_exp_f32", "ds_swizzle_b32", "global_load_dwordx2"}},
    {"rmsnorm_f16",
     "rmsnorm-f16.json",
     {{"COOP", 1}, {"ROWS", 4}, {"LANES", 32}, {"VEC", 8}},
     {"v_add_f64", "v_sqrt_f32", "ds_swizzle_b32", "global_store_dwordx4"}},
};

/// Branch targets as "<target>": the source names labels, the disassembly prints offsets.
std::vector<std::string> withoutBranchTargets(std::vector<std::string> lines) {
    for (std::string& l : lines)
        if (l.starts_with("s_branch ") || l.starts_with("s_cbranch_"))
            l = l.substr(0, l.find(' ')) + " <target>";
    return lines;
}

/// `source` assembles for `target`, and its code object disassembles back to the same
/// instructions; skips, saying why, where this build cannot assemble or disassemble.
void expectAssemblesBack(std::string const& source, std::string const& target) {
    std::string why;
    std::string const code = amdgcn::test::assemble(source, target, why);
    if (code.empty())
        GTEST_SKIP() << why;
    std::vector<std::string> const back = amdgcn::test::disassemble(code, target, why);
    if (back.empty())
        GTEST_SKIP() << why;
    amdgcn::test::expectSameInstructions(
        withoutBranchTargets(back), withoutBranchTargets(amdgcn::test::instructionsOf(source)));
}

using Param = std::tuple<Schedule, std::string>;

class CooperativeReductionKernel : public ::testing::TestWithParam<Param> {};

TEST_P(CooperativeReductionKernel, AssemblesAndDisassemblesToTheSameInstructions) {
    auto const& [s, target] = GetParam();
    KernelGraph const graph = lowered(s.command, "reduction.pipeline.json", s.params, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = s.params});
    amdgcn::Target const t = amdgcn::Target::named(target);
    for (std::string const& mnemonic : s.expected)
        EXPECT_NE(kernel.code.find(t.mnemonic(mnemonic)), std::string::npos)
            << mnemonic << " missing in\n"
            << kernel.code;
    expectAssemblesBack(kernel.code, target);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CooperativeReductionKernel,
                         ::testing::Combine(::testing::ValuesIn(kSchedules),
                                            ::testing::ValuesIn(amdgcn::test::kTargets)),
                         [](auto const& p) {
                             return std::get<0>(p.param).name + "_" + std::get<1>(p.param);
                         });

// Made for its sizes (as `kiln tune --specialize` makes a candidate), the layer norm writes out
// its two chunks a row and divides by a constant row length, which hold at those sizes only: it
// compares each size with its constant first and traps at any other, as the PTX kernel does, and
// the manifest lists what it assumes; past the trap its rows lose their masks. Made for any size,
// it has no trap.
TEST(CooperativeReductionKernelSizes, AKernelMadeForItsSizesTrapsAtOthers) {
    std::map<std::string, std::int64_t> const params{{"COOP", 1}, {"ROWS", 1},   {"LANES", 256},
                                                     {"VEC", 8},  {"UNROLL", 2}, {"ONLINE", 1}};
    for (std::string const& target : amdgcn::test::kTargets) {
        KernelGraph const graph =
            lowered("layernorm-f16.json", "reduction.pipeline.json", params, target);
        lowering::CodegenOptions options{.target = target, .schedule = params};
        auto const anySize = lowering::emitKernel(graph, options);
        EXPECT_EQ(occurrences(anySize.code, "s_trap"), 0u);
        EXPECT_GT(occurrences(anySize.code, "saveexec"), 0u); // masked row ends
        options.sizes = {{"M", 8192}, {"N", 8192}};
        auto const kernel = lowering::emitKernel(graph, options);
        EXPECT_EQ(occurrences(kernel.code, "s_trap 2"), 1u) << target;
        // Past the trap the rows are whole steps: no element is masked, and Welford's counts
        // are constants (no division).
        EXPECT_EQ(occurrences(kernel.code, "saveexec"), 0u) << target;
        EXPECT_EQ(occurrences(kernel.code, "v_cndmask"), 0u) << target;
        EXPECT_EQ(occurrences(kernel.code, "v_div_scale"), 0u) << target;
        EXPECT_EQ(occurrences(kernel.code, "s_cmp_lg_u64"), 2u) << target;
        EXPECT_EQ(kernel.assumptions, (std::vector<std::string>{"M == 8192", "N == 8192"}));
        expectAssemblesBack(kernel.code, target);
    }
}

// HOLD=0: the same kernel made for its sizes reads each of its two chunks of X again in the
// store's pass instead of holding it: two chunks of two 16-byte loads more, on every target.
TEST(CooperativeReductionKernelSizes, HoldZeroReadsTheRowsAgain) {
    std::map<std::string, std::int64_t> params{{"COOP", 1}, {"ROWS", 1},   {"LANES", 256},
                                               {"VEC", 8},  {"UNROLL", 2}, {"ONLINE", 1}};
    for (std::string const& target : amdgcn::test::kTargets) {
        KernelGraph const graph =
            lowered("layernorm-f16.json", "reduction.pipeline.json", params, target);
        lowering::CodegenOptions options{.target = target, .schedule = params};
        options.sizes = {{"M", 8192}, {"N", 8192}};
        auto const held = lowering::emitKernel(graph, options);
        options.schedule["HOLD"] = 0;
        auto const again = lowering::emitKernel(graph, options);
        auto const loads = [](std::string const& code) { // gfx1100 names them b128
            return occurrences(code, "global_load_dwordx4") + occurrences(code, "global_load_b128");
        };
        EXPECT_EQ(loads(again.code) - loads(held.code), 4u) << target;
        EXPECT_EQ(occurrences(again.code, "s_trap 2"), 1u) << target;
        expectAssemblesBack(again.code, target);
    }
}

} // namespace
} // namespace kiln::test
