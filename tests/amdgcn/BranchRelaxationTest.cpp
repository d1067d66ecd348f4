// BranchRelaxationTest.cpp: branches past the 16-bit dword offset of s_branch / s_cbranch_*
// become long branches (s_getpc_b64 / s_add_u32 / s_addc_u32 / s_setpc_b64 through an SGPR pair
// of their own; a conditional one the inverted short branch over that), and every other branch
// stays short. Hand-built loop kernels are assembled for gfx90a, gfx942 and gfx1100 and
// disassembled: each long branch lands on the instruction after its label.
#include "kiln/amdgcn/BranchRelaxation.h"

#include "AmdTestSupport.h"
#include "kiln/amdgcn/AssemblyKernel.h"

#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <tuple>

namespace kiln::amdgcn {
namespace {

/// The pieces of a loop kernel:
///     s_mov_b32 sC, 0; v_mov_b32 vX, 0; v_mov_b32 vY, 1.0
///   top:
///     s_cmp_ge_u32 sC, 4
///     s_cbranch_scc1 done          (forward, over the body)
///     body(...)
///     s_add_u32 sC, sC, 1
///     s_branch top                 (backward)
///   done:
///     s_endpgm
struct LoopKernel {
    std::string assembly;
    int sgprs = 0;
    int sgprsBeforeRelaxation = 0;
};

using Body = std::function<void(Context&, Value const& x, Value const& y)>;

/// `count` times v_add_f32 x, x, y: 4 bytes each (VOP2).
Body adds(int count) {
    return [count](Context& context, Value const& x, Value const& y) {
        for (int k = 0; k < count; ++k)
            context.schedule(Instruction::op("v_add_f32", {x}, {x, y}));
    };
}

LoopKernel loopKernel(std::string const& target, Body const& body) {
    Context context(Target::named(target), "kiln_long_loop");
    KernelSpec spec;
    spec.arguments = layoutArguments({{"Out", DataType::F32, true}});
    AssemblyKernel kernel(context, spec);
    kernel.prologue();
    Value const counter = context.allocateScalar(DataType::I32, 1, "the trip counter");
    Value const x = context.allocateVector(DataType::F32, 1, "a sum");
    Value const y = context.allocateVector(DataType::F32, 1, "one");
    std::string const top = context.newLabel("top"), done = context.newLabel("done");
    context.schedule(Instruction::op("s_mov_b32", {counter}, {Value::literal(0)}));
    context.schedule(Instruction::op("v_mov_b32", {x}, {Value::literal(0)}));
    context.schedule(Instruction::op("v_mov_b32", {y}, {Value::literalF32(1.0f)}));
    context.schedule(Instruction::label(top));
    context.schedule(Instruction::op("s_cmp_ge_u32", {}, {counter, Value::literal(4)}));
    context.schedule(Instruction::op("s_cbranch_scc1", {}, {Value::label(done)}));
    body(context, x, y);
    context.schedule(Instruction::op("s_add_u32", {counter}, {counter, Value::literal(1)}));
    context.schedule(Instruction::op("s_branch", {}, {Value::label(top)}));
    context.schedule(Instruction::label(done));
    LoopKernel k;
    k.sgprsBeforeRelaxation = kernel.sgprCount();
    k.assembly = kernel.assembly();
    k.sgprs = kernel.sgprCount();
    return k;
}

int occurrences(std::string const& text, std::string const& part) {
    int n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

// 40000 v_add_f32 (160 000 bytes): both the forward branch over the body and the backward
// branch to the top are beyond 32767 dwords.
TEST(BranchRelaxation, LoopBodyOver128KiBTakesLongBranches) {
    for (std::string const& target : test::kTargets) {
        SCOPED_TRACE(target);
        LoopKernel const k = loopKernel(target, adds(40000));
        EXPECT_EQ(occurrences(k.assembly, "s_getpc_b64"), 2);
        EXPECT_EQ(occurrences(k.assembly, "s_setpc_b64"), 2);
        // The conditional exit is the inverted short branch over the long one.
        EXPECT_EQ(occurrences(k.assembly, "s_cbranch_scc1"), 0);
        EXPECT_EQ(occurrences(k.assembly, "s_cbranch_scc0"), 1);
        EXPECT_EQ(occurrences(k.assembly, "s_branch"), 0);
        // The backward branch adds the sign-extended high half: -1.
        EXPECT_EQ(occurrences(k.assembly, ", -1\n"), 1) << "one s_addc_u32 ..., -1";
        // The pair is its own, above the kernel's SGPRs, and the descriptor declares it.
        EXPECT_EQ(k.sgprs, (k.sgprsBeforeRelaxation + 1) / 2 * 2 + 2);
        std::string const pair = fmt::format("s[{}:{}]", k.sgprs - 2, k.sgprs - 1);
        EXPECT_EQ(occurrences(k.assembly, "s_getpc_b64 " + pair), 2) << pair;
        EXPECT_NE(k.assembly.find(fmt::format(".amdhsa_next_free_sgpr {}\n", k.sgprs)),
                  std::string::npos);
        std::string why;
        int const followed = test::checkLongBranches(k.assembly, target, why);
        if (followed < 0)
            GTEST_SKIP() << why;
        EXPECT_EQ(followed, 2);
    }
}

// A short loop keeps s_branch / s_cbranch_scc1 and takes no SGPRs for long branches.
TEST(BranchRelaxation, ShortBranchesStayShort) {
    for (std::string const& target : test::kTargets) {
        SCOPED_TRACE(target);
        LoopKernel const k = loopKernel(target, adds(1000));
        EXPECT_EQ(occurrences(k.assembly, "s_getpc_b64"), 0);
        EXPECT_EQ(occurrences(k.assembly, "s_cbranch_scc1 .Lkiln_long_loop_done"), 1);
        EXPECT_EQ(occurrences(k.assembly, "s_branch .Lkiln_long_loop_top"), 1);
        EXPECT_EQ(k.sgprs, k.sgprsBeforeRelaxation);
        std::string why;
        if (test::checkLongBranches(k.assembly, target, why) < 0)
            GTEST_SKIP() << why;
    }
}

// Relaxation on a schedule that needs none leaves its text as it was, byte for byte.
TEST(BranchRelaxation, NothingToRelaxChangesNothing) {
    Context context = test::makeContext("gfx942");
    std::string const top = context.newLabel("top");
    context.schedule(Instruction::label(top));
    for (int k = 0; k < 100; ++k)
        context.schedule(Instruction::op(
            "v_add_f32", {Value::physical(RegisterKind::Vector, 1)},
            {Value::physical(RegisterKind::Vector, 1), Value::physical(RegisterKind::Vector, 2)}));
    context.schedule(Instruction::op("s_cbranch_vccnz", {}, {Value::label(top)}));
    std::string const before = context.text();
    EXPECT_EQ(relaxBranches(context), 0);
    EXPECT_EQ(context.text(), before);
}

/// A kernel of one branch over (forward) or back across (backward) `count` single s_nops
/// (4 bytes each, which is also their upper bound):
///     s_branch done; s_nop 0 x count; done:        or        top: s_nop 0 x count; s_branch top
std::string branchAcrossNops(int count, bool forward) {
    Context context(Target::named("gfx942"), "kiln_nops");
    KernelSpec spec;
    spec.arguments = layoutArguments({{"Out", DataType::F32, true}});
    AssemblyKernel kernel(context, spec);
    kernel.prologue();
    std::string const label = context.newLabel(forward ? "done" : "top");
    if (forward)
        context.schedule(Instruction::op("s_branch", {}, {Value::label(label)}));
    else
        context.schedule(Instruction::label(label));
    for (int k = 0; k < count; ++k)
        context.schedule(Instruction::nop(1));
    if (forward)
        context.schedule(Instruction::label(label));
    else
        context.schedule(Instruction::op("s_branch", {}, {Value::label(label)}));
    return kernel.assembly();
}

// Forward, the bound is exact: the offset counts the dwords between the branch and its target,
// so 32767 nops are the farthest a short branch reaches (and it assembles), 32768 take the long
// one. Backward, the offset also counts the branch itself, which the layout bounds by 8 bytes
// (a literal it never has): 32766 nops stay short, 32767 (which would just fit) go long.
TEST(BranchRelaxation, ShortReachIsTheSigned16BitRange) {
    for (auto const& [count, forward, isLong] :
         {std::tuple{32767, true, false}, std::tuple{32768, true, true},
          std::tuple{32766, false, false}, std::tuple{32767, false, true}}) {
        SCOPED_TRACE(fmt::format("{} nops, {}", count, forward ? "forward" : "backward"));
        std::string const assembly = branchAcrossNops(count, forward);
        EXPECT_EQ(occurrences(assembly, "s_getpc_b64"), isLong ? 1 : 0);
        EXPECT_EQ(occurrences(assembly, "s_branch"), isLong ? 0 : 1);
        std::string why;
        int const followed = test::checkLongBranches(assembly, "gfx942", why);
        if (followed < 0)
            GTEST_SKIP() << why;
        EXPECT_EQ(followed, isLong ? 1 : 0);
    }
}

// The long sequence writes SCC; landing where SCC is read before written is a bug in Kiln.
TEST(BranchRelaxation, RefusesToClobberSccLiveAtTheTarget) {
    Context context = test::makeContext("gfx90a");
    std::string const top = context.newLabel("top");
    Value const s = Value::physical(RegisterKind::Scalar, 4);
    context.schedule(Instruction::label(top));
    context.schedule(Instruction::op("s_cselect_b32", {s}, {s, Value::literal(0)}));
    for (int k = 0; k < 40000; ++k)
        context.schedule(Instruction::op(
            "v_add_f32", {Value::physical(RegisterKind::Vector, 1)},
            {Value::physical(RegisterKind::Vector, 1), Value::physical(RegisterKind::Vector, 2)}));
    context.schedule(Instruction::op("s_cbranch_scc1", {}, {Value::label(top)}));
    EXPECT_THROW(relaxBranches(context), InternalError);
}

// A kernel that uses every SGPR has none left for the long branch's pair: a user error naming
// why, not an allocator assertion.
TEST(BranchRelaxation, NoFreeSgprPairIsOutOfRegisters) {
    Context context = test::makeContext("gfx942");
    int const size = context.sgprs().size();
    Value const all = context.sgprs().reserve(0, size - 1);
    std::string const top = context.newLabel("top");
    context.schedule(Instruction::label(top));
    for (int k = 0; k < 40000; ++k)
        context.schedule(Instruction::nop(1));
    context.schedule(Instruction::op("s_branch", {}, {Value::label(top)}));
    EXPECT_THROW(relaxBranches(context), OutOfRegisters);
}

} // namespace
} // namespace kiln::amdgcn
