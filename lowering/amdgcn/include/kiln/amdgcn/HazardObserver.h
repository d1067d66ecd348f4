// HazardObserver.h: the s_nop wait states gfx90a and gfx942 need between dependent instructions.
//
// On GFX9-based targets the hardware does not interlock every dependency: some need software
// wait states ("Manually Inserted Wait States (NOPs)" in the CDNA 2 and CDNA 3 ISA reference
// guides, §4.5, and the MFMA dependency tables of §7). Each rule here is one row of those tables
// for an instruction pair Kiln emits: a first instruction that writes some registers, a second
// that reads them, and the wait states that must pass in between. The observer remembers the
// last instructions with the wait states each took and asks for nops when a rule is short.
// RDNA 3 (gfx1100) interlocks these cases in hardware; it has no rules here.
#pragma once

#include "kiln/amdgcn/Observer.h"
#include "kiln/amdgcn/Target.h"

#include <deque>
#include <functional>

namespace kiln::amdgcn {

/// One row of a required-wait-states table.
struct HazardRule {
    std::string name;     ///< short name, e.g. "valu-sgpr-vmem"
    std::string citation; ///< the ISA document row it implements
    int waitStates = 0;   ///< wait states needed between the two instructions
    /// Whether the first instruction is one this rule is about; returns the registers it
    /// writes that matter (empty: not a hazard source).
    std::function<std::vector<PhysicalRegister>(Instruction const&)> source;
    /// The registers the second instruction reads that the rule is about (empty: not affected).
    std::function<std::vector<PhysicalRegister>(Instruction const&)> sink;
    /// Where the wait states depend on the first instruction (an MFMA's passes): those it
    /// needs, at most `waitStates`. Unset: always `waitStates`.
    std::function<int(Instruction const& first)> waitStatesAfter;
    /// Where a pair the rule matches needs no wait states after all (an MFMA reading as SrcC
    /// exactly the registers the previous one wrote). Unset: never.
    std::function<bool(Instruction const& first, Instruction const& second)> exempt;
};

/// The passes (4 cycles each) of MFMA `instruction` on `target`, from arch-db's issue cycles;
/// 0 for other instructions.
int mfmaPasses(Target const& target, Instruction const& instruction);

/// The rules for a target (empty for gfx1100).
std::vector<HazardRule> hazardRules(Target const& target);

class HazardObserver final : public Observer {
public:
    explicit HazardObserver(Target const& target);

    void peek(Instruction const& instruction, PeekResult& result) const override;
    void modify(Instruction& instruction) const override;
    void observe(Instruction const& instruction) override;
    std::string_view name() const override { return "hazard"; }

    /// The most wait states any rule asks for: what must pass where the observer cannot see
    /// the instructions before (the back edge of a loop).
    int horizon() const { return horizon_; }

    /// Wait states `instruction` needs in front of it, and the rules that ask for them.
    int needed(Instruction const& instruction, std::vector<std::string>* rules = nullptr) const;

private:
    struct Record {
        Instruction instruction;
        int waitStates = 0; ///< its own (1, or N for s_nop) plus the wait and nops in front
    };

    std::vector<HazardRule> rules_;
    std::deque<Record> history_;
    int horizon_ = 0; ///< the largest wait states any rule needs: older history is irrelevant
};

} // namespace kiln::amdgcn
