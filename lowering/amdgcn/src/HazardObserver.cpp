// HazardObserver.cpp: the wait-state tables of the CDNA 2 and CDNA 3 ISA reference guides.
#include "kiln/amdgcn/HazardObserver.h"

#include "kiln/arch-db/Arch.h"

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

bool isVectorLike(PhysicalRegister const& r) {
    return r.kind == RegisterKind::Vector || r.kind == RegisterKind::Accumulator;
}

bool isMfma(Instruction const& i) {
    return i.form() == Instruction::Form::Operation &&
           i.instructionClass() == InstructionClass::Mfma;
}

// The registers of source `k` of an MFMA (SrcA 0, SrcB 1, SrcC 2) that are VGPRs or AGPRs.
Regs mfmaSource(Instruction const& i, std::size_t k) {
    if (!isMfma(i) || i.srcs().size() <= k)
        return {};
    return filter(i.srcs()[k].registers(), isVectorLike);
}

Regs mfmaResult(Instruction const& i) {
    if (!isMfma(i) || i.dsts().empty())
        return {};
    return filter(i.dsts()[0].registers(), isVectorLike);
}

// VALU (not MFMA), VMEM and LDS instructions: the ones the MFMA -> "VALU/VM/LDS/export" rows
// are about.
bool isValuOrMemory(Instruction const& i) {
    switch (i.instructionClass()) {
    case InstructionClass::Valu:
    case InstructionClass::Trans:
    case InstructionClass::VmemLoad:
    case InstructionClass::VmemStore:
    case InstructionClass::LdsLoad:
    case InstructionClass::LdsStore:
    case InstructionClass::LdsDma:
        return true;
    default:
        return false;
    }
}

// CDNA 3 splits MFMAs into XDL ops (16-bit floats, bf16, i8, fp8, xf32) and the others (f32,
// f64), whose wait states differ by one.
bool isXdl(Instruction const& i) {
    // The input type follows the shape MxNxK: v_mfma_f32_16x16x16_f16, v_mfma_f32_16x16x16f16.
    std::string_view const m = i.mnemonic();
    auto const first = m.find('x');
    auto const second = first == std::string_view::npos ? first : m.find('x', first + 1);
    if (second == std::string_view::npos)
        return false;
    std::size_t k = second + 1;
    while (k < m.size() && m[k] >= '0' && m[k] <= '9')
        ++k;
    std::string_view const type = m.substr(k);
    return type.find("f16") != std::string_view::npos ||
           type.find("bf16") != std::string_view::npos ||
           type.find("i8") != std::string_view::npos ||
           type.find("fp8") != std::string_view::npos ||
           type.find("bf8") != std::string_view::npos ||
           type.find("xf32") != std::string_view::npos;
}

// The rows of "Dependency Resolution: Required Independent Instructions" (CDNA 2 ISA §7.6,
// CDNA 3 ISA §7.6) for the MFMAs Kiln emits (S/HGEMM: f32 and 16-bit inputs; not DGEMM),
// given as the passes P of the first MFMA (CDNA 2: 4x4 = 2, 16x16 = 8, 32x32 = 16 passes;
// CDNA 3 XDL f16/bf16: 16x16x16 = 4, 32x32x8 = 8). The counts are the tables' (LLVM's
// GCNHazardRecognizer checkMAIHazards90A and checkMAIVALUHazards implement the same rows):
//
//   MFMA writes VGPR -> MFMA reads it as SrcC, overlapped but not the same range:
//       CDNA 2: 2 / 8 / 16 (P); CDNA 3: XDL P + 1, other P. The same range: 0 (back-to-back
//       accumulation into one fragment needs nothing), except a 2-pass MFMA on CDNA 3: 2.
//   MFMA writes VGPR -> MFMA reads it as SrcA/B: CDNA 2: 5 / 11 / 19 (P + 3); CDNA 3: XDL P + 3,
//       other P + 2.
//   MFMA writes VGPR/AGPR -> VALU, VMEM, LDS or export reads it (v_accvgpr_read included):
//       CDNA 2: 5 / 11 / 19 (P + 3); CDNA 3: XDL P + 3, other P + 2.
//   MFMA writes VGPR -> VALU, VMEM or LDS writes it (WAW): as the read, P + 3 (CDNA 3 other:
//       P + 2).
//   MFMA reads VGPR as SrcC -> VALU, VMEM or LDS writes it (WAR): CDNA 2: 1 / 7 / 15 (P - 1);
//       CDNA 3: XDL P - 1 (2 passes: 1), other MFMAs none.
void addMfmaRules(Target const& target, std::string const& isa, std::vector<HazardRule>& rules) {
    if (!target.arch().has(arch::Capability::HasMFMA))
        return;
    bool const cdna3 = target.isCdna3();
    std::string const table =
        isa + " §7.6 Dependency Resolution: Required Independent Instructions: ";
    // P + 3, or P + 2 for a CDNA 3 MFMA that is not XDL.
    auto const readAfter = [target, cdna3](Instruction const& first) {
        int const p = mfmaPasses(target, first);
        return cdna3 && !isXdl(first) ? p + 2 : p + 3;
    };
    int const most = 19; // a 16-pass MFMA
    auto const valuOrMemoryReads = [](Instruction const& i) {
        return isValuOrMemory(i) ? filter(i.reads(), isVectorLike) : Regs{};
    };
    auto const valuOrMemoryWrites = [](Instruction const& i) {
        return isValuOrMemory(i) ? filter(i.writes(), isVectorLike) : Regs{};
    };

    rules.push_back({"mfma-srcc-overlap",
                     table + "\"XDL/SMFMA write VGPR -> XDL/SMFMA read as SrcC, overlapped\": " +
                         (cdna3 ? "XDL P + 1, SMFMA P passes" : "4x4 2, 16x16 8, 32x32 16") +
                         "; the same VGPRs: 0" + (cdna3 ? " (2 for a 2-pass SMFMA)" : ""),
                     most, mfmaResult, [](Instruction const& i) { return mfmaSource(i, 2); },
                     [target, cdna3](Instruction const& first) {
                         int const p = mfmaPasses(target, first);
                         return cdna3 && isXdl(first) ? p + 1 : p;
                     },
                     [target, cdna3](Instruction const& first, Instruction const& second) {
                         bool const same = first.dsts()[0].sameRegisters(second.srcs()[2]);
                         return same && !(cdna3 && mfmaPasses(target, first) == 2);
                     }});
    rules.push_back({"mfma-srcab",
                     table + "\"XDL/SMFMA write VGPR -> XDL/SMFMA read as SrcA/B\": " +
                         (cdna3 ? "XDL P + 3, SMFMA P + 2" : "4x4 5, 16x16 11, 32x32 19"),
                     most, mfmaResult,
                     [](Instruction const& i) {
                         Regs ab = mfmaSource(i, 0);
                         Regs const b = mfmaSource(i, 1);
                         ab.insert(ab.end(), b.begin(), b.end());
                         return ab;
                     },
                     readAfter});
    rules.push_back({"mfma-valu-read",
                     table + "\"XDL/SMFMA write VGPR -> VALU read / VM, LDS, FLAT, export read " +
                         "(v_accvgpr_read of an AGPR likewise)\": " +
                         (cdna3 ? "XDL P + 3, SMFMA P + 2" : "4x4 5, 16x16 11, 32x32 19"),
                     most, mfmaResult, valuOrMemoryReads, readAfter});
    rules.push_back({"mfma-valu-write",
                     table + "\"XDL/SMFMA write VGPR -> VALU write / VM, LDS, FLAT write of the " +
                         "same VGPR (WAW)\": " +
                         (cdna3 ? "XDL P + 3, SMFMA P + 2" : "4x4 5, 16x16 11, 32x32 19"),
                     most, mfmaResult, valuOrMemoryWrites, readAfter});
    rules.push_back(
        {"mfma-srcc-war",
         table + "\"XDL/SMFMA read VGPR as SrcC -> VALU write / VM, LDS, FLAT write of it " +
             "(WAR)\": " +
             (cdna3 ? "XDL 2 passes 1, 4 passes 3, 8 passes 7, 16 passes 15" +
                          std::string("; non-XDL none")
                    : "4x4 1, 16x16 7, 32x32 15"),
         15,
         [cdna3](Instruction const& i) { return cdna3 && !isXdl(i) ? Regs{} : mfmaSource(i, 2); },
         valuOrMemoryWrites,
         [target](Instruction const& first) { return mfmaPasses(target, first) - 1; }});
}

} // namespace

int mfmaPasses(Target const& target, Instruction const& instruction) {
    if (!isMfma(instruction))
        return 0;
    return std::max(1, target.issueCycles(instruction.mnemonic()) / 4);
}

std::vector<HazardRule> hazardRules(Target const& target) {
    if (target.isGfx11())
        return {};
    std::string const isa = target.isCdna3() ? "CDNA 3 ISA" : "CDNA 2 ISA";
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
    int const storeStates = target.isCdna3() ? 2 : 1;
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
    addMfmaRules(target, isa, rules);
    if (target.isCdna3()) {
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
                if (rule.exempt && rule.exempt(it->instruction, instruction))
                    break;
                int const states =
                    rule.waitStatesAfter ? rule.waitStatesAfter(it->instruction) : rule.waitStates;
                int const missing = states - elapsed;
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
