// BranchRelaxation.h: long branches where a short one cannot reach, as LLVM's
// SIBranchRelaxation does.
//
// s_branch and s_cbranch_* hold a signed 16-bit offset in dwords from the next instruction:
// they reach 128 KiB back and forth. A loop body that an unrolled K loop of a large tile makes
// longer than that does not assemble ("branch size exceeds simm16"). After scheduling, this pass
// lays the kernel out with an upper bound of each instruction's size (Instruction::maxBytes), and
// rewrites every branch whose target may lie out of reach into the long form:
//
//     s_getpc_b64 s[N:N+1]               // the address of the next instruction
//   .Lpost:
//     s_add_u32 sN, sN, (TARGET-.Lpost)&4294967295
//     s_addc_u32 sN+1, sN+1, 0           // -1 for a backward branch (the offset sign-extended)
//     s_setpc_b64 s[N:N+1]
//
// and a conditional one into the inverted short branch over that sequence (s_cbranch_scc1 T
// becomes s_cbranch_scc0 .Lnear; long branch to T; .Lnear:). Layout repeats until no branch
// changes, since a long branch makes the code it sits in longer. Every other branch stays short,
// so a kernel that needs no long branch is unchanged byte for byte.
//
// The pair N:N+1 is reserved for the whole kernel above every SGPR the kernel uses (as LLVM's
// GCNPreRALongBranchReg reserves one before allocation), so it is live nowhere else; it is taken
// only when some branch is long. The sequence clobbers SCC: an internal error says so if SCC is
// read at a long branch's target before anything writes it.
#pragma once

#include "kiln/amdgcn/Context.h"

namespace kiln::amdgcn {

/// The farthest a short branch reaches, in dwords from the instruction after it.
inline constexpr int kShortBranchMaxDwords = 32767;
inline constexpr int kShortBranchMinDwords = -32768;

/// Rewrites the branches of `context`'s scheduled kernel that may not reach their targets into
/// long branches (see above); returns how many it rewrote. Call once, after the last
/// instruction is scheduled and before the register counts are read.
int relaxBranches(Context& context);

} // namespace kiln::amdgcn
