// BranchRelaxation.cpp: lays the scheduled kernel out with upper bounds of instruction sizes and
// rewrites the branches that may not reach their targets into long branches.
#include "kiln/amdgcn/BranchRelaxation.h"

#include "kiln/graph/Error.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace kiln::amdgcn {

namespace {

// Bytes of the long form (s_getpc_b64 4, s_add_u32 and s_addc_u32 with a literal 8 each,
// s_setpc_b64 4) and of the inverted short branch in front of a conditional one.
constexpr int kLongBranchBytes = 24;
constexpr int kInvertedBranchBytes = 4;

bool conditional(Instruction const& branch) {
    return branch.mnemonic().starts_with("s_cbranch_");
}

// The condition that skips the long branch: the opposite of the branch's own.
std::string inverted(std::string const& mnemonic) {
    static std::map<std::string, std::string, std::less<>> const opposite = {
        {"s_cbranch_scc0", "s_cbranch_scc1"},    {"s_cbranch_scc1", "s_cbranch_scc0"},
        {"s_cbranch_vccz", "s_cbranch_vccnz"},   {"s_cbranch_vccnz", "s_cbranch_vccz"},
        {"s_cbranch_execz", "s_cbranch_execnz"}, {"s_cbranch_execnz", "s_cbranch_execz"},
    };
    auto const it = opposite.find(mnemonic);
    KILN_ASSERT(it != opposite.end(), "no inverse of {} for a long branch", mnemonic);
    return it->second;
}

// The label a branch names, or "" for an instruction that is not a branch to a label.
std::string targetOf(Instruction const& i) {
    if (i.form() != Instruction::Form::Operation ||
        i.instructionClass() != InstructionClass::Branch || i.srcs().size() != 1 ||
        i.srcs()[0].kind() != RegisterKind::Label)
        return {};
    return i.srcs()[0].str();
}

bool readsScc(std::string_view m) {
    return m.starts_with("s_cbranch_scc") || m.starts_with("s_cselect_") ||
           m.starts_with("s_addc_") || m.starts_with("s_subb_") || m.starts_with("s_cmov");
}

// Scalar instructions that certainly write SCC (others are taken as leaving it).
bool writesScc(std::string_view m) {
    for (std::string_view p :
         {"s_cmp_",   "s_cmpk_", "s_bitcmp", "s_add_", "s_sub_",  "s_and_", "s_or_",  "s_xor_",
          "s_andn2_", "s_orn2_", "s_nand_",  "s_nor_", "s_xnor_", "s_not_", "s_lshl", "s_lshr_",
          "s_ashr_",  "s_bfe_",  "s_min_",   "s_max_", "s_abs",   "s_bcnt", "s_addk_"})
        if (m.starts_with(p))
            return true;
    return false;
}

// The long sequence clobbers SCC, so SCC must be dead where it lands: the straight-line code from
// the target reads SCC only after writing it (followed up to the first unconditional transfer).
void checkSccDeadAt(std::vector<Instruction> const& code, std::size_t target,
                    std::string const& label) {
    for (std::size_t k = target; k < code.size(); ++k) {
        Instruction const& i = code[k];
        if (i.form() != Instruction::Form::Operation)
            continue;
        std::string const& m = i.mnemonic();
        KILN_ASSERT(!readsScc(m), "a long branch to {} clobbers SCC, which {} reads there", label,
                    m);
        if (writesScc(m) || m == "s_branch" || m == "s_endpgm" || m == "s_setpc_b64")
            return;
    }
}

// Where each instruction starts and ends, in bytes, with the branches marked long laid out long.
struct Layout {
    std::vector<std::int64_t> start, end;
};

Layout layOut(std::vector<Instruction> const& code, std::vector<char> const& isLong) {
    Layout l;
    l.start.resize(code.size());
    l.end.resize(code.size());
    std::int64_t at = 0;
    for (std::size_t k = 0; k < code.size(); ++k) {
        l.start[k] = at;
        at += code[k].maxBytes();
        // maxBytes counts a short branch as 8 bytes after its attached waits and nops.
        if (isLong[k])
            at += kLongBranchBytes - 8 + (conditional(code[k]) ? kInvertedBranchBytes : 0);
        l.end[k] = at;
    }
    return l;
}

} // namespace

int relaxBranches(Context& context) {
    std::vector<Instruction> const& code = context.scheduled();
    std::map<std::string, std::size_t, std::less<>> labels;
    for (std::size_t k = 0; k < code.size(); ++k)
        if (code[k].form() == Instruction::Form::Label)
            labels[code[k].mnemonic()] = k;

    // Mark branches long until the layout holds still: each one made long only moves code
    // further apart, so this ends after at most one round per branch.
    std::vector<char> isLong(code.size(), 0);
    for (bool changed = true; changed;) {
        changed = false;
        Layout const layout = layOut(code, isLong);
        for (std::size_t k = 0; k < code.size(); ++k) {
            std::string const target = targetOf(code[k]);
            if (target.empty() || isLong[k])
                continue;
            auto const it = labels.find(target);
            KILN_ASSERT(it != labels.end(), "branch to {}, which the kernel does not define",
                        target);
            // Upper bounds of the sizes make the distance an upper bound of its magnitude.
            std::int64_t const bytes = layout.start[it->second] - layout.end[k];
            std::int64_t const dwords = bytes >= 0 ? (bytes + 3) / 4 : -((-bytes + 3) / 4);
            if (dwords > kShortBranchMaxDwords || dwords < kShortBranchMinDwords) {
                isLong[k] = 1;
                changed = true;
            }
        }
    }
    int const count = static_cast<int>(std::count(isLong.begin(), isLong.end(), 1));
    if (count == 0)
        return 0;

    // One pair for every long branch, above every SGPR the kernel uses: live nowhere else.
    Allocator& sgprs = context.sgprs();
    int const first = (sgprs.highWater() + 1) / 2 * 2;
    if (first + 2 > sgprs.size())
        throw OutOfRegisters(fmt::format(
            "kernel {} needs an SGPR pair for its long branches (a loop body over 128 KiB), but "
            "it uses {} of {}'s {} SGPRs",
            context.kernelName(), sgprs.highWater(), context.target().name(), sgprs.size()));
    Value const pc = sgprs.reserve(first, 2, DataType::I64);

    std::vector<Instruction> out;
    out.reserve(code.size() + static_cast<std::size_t>(6 * count));
    for (std::size_t k = 0; k < code.size(); ++k) {
        Instruction const& branch = code[k];
        if (!isLong[k]) {
            out.push_back(branch);
            continue;
        }
        std::string const target = targetOf(branch);
        std::size_t const to = labels.at(target);
        checkSccDeadAt(code, to, target);
        // The branch's attached waits and nops go in front of the first instruction written.
        auto withWaits = [&](Instruction i) {
            i.addWait(branch.waitBefore());
            i.addNops(branch.nopsBefore());
            return i;
        };
        std::string near;
        if (conditional(branch)) {
            near = context.newLabel("near");
            out.push_back(
                withWaits(Instruction::op(inverted(branch.mnemonic()), {}, {Value::label(near)}, {},
                                          "the long branch below when it holds")));
        }
        std::string const post = context.newLabel("post_getpc");
        Instruction getpc =
            Instruction::op("s_getpc_b64", {pc}, {}, {}, fmt::format("long branch to {}", target));
        out.push_back(near.empty() ? withWaits(getpc) : getpc);
        out.push_back(Instruction::label(post));
        out.push_back(Instruction::op(
            "s_add_u32", {pc.sub(0)},
            {pc.sub(0), Value::label(fmt::format("({}-{})&4294967295", target, post))}));
        // The high half of the offset sign-extended: the target is within 2 GiB.
        out.push_back(Instruction::op("s_addc_u32", {pc.sub(1)},
                                      {pc.sub(1), Value::literal(to < k ? -1 : 0)}));
        out.push_back(Instruction::op("s_setpc_b64", {}, {pc}));
        if (!near.empty())
            out.push_back(Instruction::label(near));
    }
    context.replaceScheduled(std::move(out));
    return count;
}

} // namespace kiln::amdgcn
