// HazardObserver.cpp: the wait-state tables of the CDNA 2 and CDNA 3 ISA reference guides.
#include "kiln/amdgcn/HazardObserver.h"

#include <algorithm>

namespace kiln::amdgcn {

namespace {

using Regs = std::vector<PhysicalRegister>;

bool isSgprLike(PhysicalRegister const& r) {
    // SGPRs and vcc; exec and m0 have rules of their own.
    return r.kind == RegisterKind::Scalar ||
           (r.kind == RegisterKind::Special && (r.index == static_cast<int>(Special::VccLo) ||
                                                r.index == static_cast<int>(Special::Vcc)));
}

Regs filter(Regs const& in, bool (*keep)(PhysicalRegister const&)) {
    Regs out;
    for (PhysicalRegister const& r : in)
        if (keep(r))
            out.push_back(r);
    return out;
}

Regs valuSgprWrites(Instruction const& i) {
    if (!isVector(i.instructionClass()))
        return {};
    return filter(i.writes(), isSgprLike);
}

Regs sgprReads(Instruction const& i) {
    return filter(i.reads(), isSgprLike);
}

bool isVgpr(PhysicalRegister const& r) {
    return r.kind == RegisterKind::Vector;
}

Regs vgprWrites(Instruction const& i) {
    return filter(i.writes(), isVgpr);
}

Regs vgprReads(Instruction const& i) {
    return filter(i.reads(), isVgpr);
}

bool overlaps(Regs const& a, Regs const& b) {
    for (PhysicalRegister const& x : a)
        if (std::find(b.begin(), b.end(), x) != b.end())
            return true;
    return false;
}

bool isVmem(InstructionClass c) {
    return c == InstructionClass::VmemLoad || c == InstructionClass::VmemStore ||
           c == InstructionClass::LdsDma;
}

// The data operand of a VMEM store is the second source of global_store (vaddr, vdata, saddr)
// and the first of buffer_store (vdata, vaddr, srsrc, soffset).
Regs storeData(Instruction const& i) {
    if (i.instructionClass() != InstructionClass::VmemStore || i.srcs().size() < 2)
        return {};
    bool const buffer = i.mnemonic().starts_with("buffer_");
    Value const& data = buffer ? i.srcs()[0] : i.srcs()[1];
    if (data.count() <= 2)
        return {};
    if (buffer && i.srcs().size() >= 4 && i.srcs()[3].isScalar())
        return {}; // MUBUF with an SGPR soffset does not have the hazard
    return data.registers();
}

} // namespace

std::vector<HazardRule> hazardRules(Target const& target) {
    if (target.isGfx11())
        return {};
    std::string const isa = target.isGfx942() ? "CDNA 3 ISA" : "CDNA 2 ISA";
    std::string const table = isa + " §4.5 Manually Inserted Wait States: ";
    std::vector<HazardRule> rules;

    rules.push_back({"valu-sgpr-vmem", table + "\"VALU writes SGPR -> VMEM reads that SGPR: 5\"", 5,
                     valuSgprWrites, [](Instruction const& i) {
                         return isVmem(i.instructionClass()) ? sgprReads(i) : Regs{};
                     }});
    rules.push_back({"valu-vcc-div-fmas", table + "\"VALU writes VCC -> V_DIV_FMAS: 4\"", 4,
                     [](Instruction const& i) {
                         Regs out;
                         if (!isVector(i.instructionClass()))
                             return out;
                         for (PhysicalRegister const& r : i.writes())
                             if (r.kind == RegisterKind::Special &&
                                 r.index == static_cast<int>(Special::VccLo))
                                 out.push_back(r);
                         return out;
                     },
                     [](Instruction const& i) {
                         if (!i.mnemonic().starts_with("v_div_fmas"))
                             return Regs{};
                         return Regs{{RegisterKind::Special, static_cast<int>(Special::VccLo)}};
                     }});
    rules.push_back({"salu-m0-lds-dma",
                     table + "\"S_MOV to M0 -> LDS add-TID, buffer_store_LDS_dword, scratch or "
                             "global with LDS=1: 1\"",
                     1,
                     [](Instruction const& i) {
                         Regs out;
                         if (i.instructionClass() != InstructionClass::Salu)
                             return out;
                         for (PhysicalRegister const& r : i.writes())
                             if (r.kind == RegisterKind::Special &&
                                 r.index == static_cast<int>(Special::M0))
                                 out.push_back(r);
                         return out;
                     },
                     [](Instruction const& i) {
                         if (i.instructionClass() != InstructionClass::LdsDma)
                             return Regs{};
                         return Regs{{RegisterKind::Special, static_cast<int>(Special::M0)}};
                     }});
    rules.push_back({"valu-sgpr-lane-select",
                     table + "\"VALU writes SGPR/VCC (readlane, cmp, add/sub, div_scale) -> "
                             "V_{READ,WRITE}LANE using that SGPR/VCC as the lane select: 4\"",
                     4, valuSgprWrites, [](Instruction const& i) {
                         std::string const& m = i.mnemonic();
                         if ((m != "v_readlane_b32" && m != "v_writelane_b32") ||
                             i.srcs().size() < 2)
                             return Regs{};
                         return filter(i.srcs()[1].registers(), isSgprLike);
                     }});
    int const storeStates = target.isGfx942() ? 2 : 1;
    rules.push_back({"vmem-store-data-valu",
                     table +
                         "\"VMEM store of more than 8 bytes (FLAT/global; MUBUF without an "
                         "SGPR soffset) -> VALU write of the VGPRs holding its data: " +
                         std::to_string(storeStates) + "\"",
                     storeStates, storeData, [](Instruction const& i) {
                         return isVector(i.instructionClass()) ? vgprWrites(i) : Regs{};
                     }});
    rules.push_back({"valu-vgpr-mfma",
                     isa + " §7.6 Dependency Resolution: \"VALU write VGPR -> V_MFMA* read of "
                           "that VGPR (SrcA/B/C): 2\"",
                     2,
                     [](Instruction const& i) {
                         return i.instructionClass() == InstructionClass::Valu ||
                                        i.instructionClass() == InstructionClass::Trans
                                    ? vgprWrites(i)
                                    : Regs{};
                     },
                     [](Instruction const& i) {
                         return i.instructionClass() == InstructionClass::Mfma ? vgprReads(i)
                                                                               : Regs{};
                     }});
    if (target.isGfx942()) {
        rules.push_back({"valu-sgpr-valu",
                         table + "\"VALU writes SGPR -> VALU reads that SGPR: 2\" (gfx940+; LLVM "
                                 "GCNHazardRecognizer VALUWriteSGPRVALUReadWaitstates)",
                         2, valuSgprWrites, [](Instruction const& i) {
                             return isVector(i.instructionClass()) ? sgprReads(i) : Regs{};
                         }});
        rules.push_back(
            {"trans-vgpr-valu",
             table + "\"VALU Trans op writes VGPR -> non-Trans VALU reads it: 1\" "
                     "(gfx940+; LLVM GCNHazardRecognizer TransDefWaitstates)",
             1,
             [](Instruction const& i) {
                 return i.instructionClass() == InstructionClass::Trans ? vgprWrites(i) : Regs{};
             },
             [](Instruction const& i) {
                 return i.instructionClass() == InstructionClass::Valu ? vgprReads(i) : Regs{};
             }});
    }
    return rules;
}

HazardObserver::HazardObserver(Target const& target)
    : rules_(hazardRules(target)) {
    for (HazardRule const& rule : rules_)
        horizon_ = std::max(horizon_, rule.waitStates);
}

int HazardObserver::needed(Instruction const& instruction, std::vector<std::string>* names) const {
    if (instruction.form() != Instruction::Form::Operation)
        return 0;
    int need = 0;
    for (HazardRule const& rule : rules_) {
        Regs const sink = rule.sink(instruction);
        if (sink.empty())
            continue;
        // Wait states since the latest source of this rule that wrote a register the sink reads;
        // a wait attached to this instruction counts too (it issues as an instruction first).
        int elapsed = instruction.waitBefore().empty() ? 0 : 1;
        for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
            if (elapsed >= rule.waitStates)
                break;
            Regs const source = rule.source(it->instruction);
            if (!source.empty() && overlaps(source, sink)) {
                int const missing = rule.waitStates - elapsed;
                if (missing > need)
                    need = missing;
                if (names && missing > 0)
                    names->push_back(rule.name);
                break;
            }
            elapsed += it->waitStates;
        }
    }
    return need;
}

void HazardObserver::peek(Instruction const& instruction, PeekResult& result) const {
    int const n = needed(instruction, &result.rules);
    result.nops = std::max(result.nops, n);
    result.stallCycles += n;
}

void HazardObserver::modify(Instruction& instruction) const {
    if (int const n = needed(instruction); n > 0)
        instruction.addNops(n);
}

void HazardObserver::observe(Instruction const& instruction) {
    int states = instruction.waitStates() + instruction.nopsBefore();
    if (!instruction.waitBefore().empty())
        states += 1 + (instruction.waitBefore().vscnt ? 1 : 0);
    if (states == 0)
        return;
    history_.push_back({instruction.released(), states});
    // Keep only what a rule can still see.
    int total = 0;
    std::size_t keep = 0;
    for (auto it = history_.rbegin(); it != history_.rend() && total < horizon_; ++it, ++keep)
        total += it->waitStates;
    while (history_.size() > keep)
        history_.pop_front();
}

} // namespace kiln::amdgcn
