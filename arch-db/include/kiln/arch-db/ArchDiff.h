// ArchDiff.h: what differs between two targets, for `kiln arch diff gfx90a gfx942`.
//
// Instructions are paired by name or alias, so a mnemonic renamed between generations
// (v_mfma_f32_32x32x8f16 -> v_mfma_f32_32x32x8_f16) compares as one instruction.
#pragma once

#include "kiln/arch-db/Arch.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::arch {

/// A fact whose value differs, or that only one target has.
struct FactDifference {
    std::string name;
    std::string unit;
    std::optional<std::int64_t> left;
    std::optional<std::int64_t> right;
};

/// An instruction that differs in some field, or that only one target has.
struct InstructionDifference {
    std::string name;                   ///< the left target's name, or the right's if only there
    Instruction const* left = nullptr;  ///< null: only on the right
    Instruction const* right = nullptr; ///< null: only on the left
    std::vector<std::string> fields;    ///< differing fields: latency, issue_cycles, wait_queue...
};

/// The differences between two targets (pointers refer into the two Arch objects).
struct ArchDiff {
    std::vector<FactDifference> facts;
    std::vector<Capability> onlyLeft;
    std::vector<Capability> onlyRight;
    std::vector<InstructionDifference> instructions;

    bool empty() const {
        return facts.empty() && onlyLeft.empty() && onlyRight.empty() && instructions.empty();
    }
};

/// Compares two targets; both must outlive the result.
ArchDiff diff(Arch const& left, Arch const& right);

} // namespace kiln::arch
