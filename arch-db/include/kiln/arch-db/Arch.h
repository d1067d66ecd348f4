// Arch.h: everything Kiln knows about one target (sm_90a, gfx942, ...).
//
// An Arch is a value: named facts, a capability set and an instruction table, with O(1) lookups
// by name (hash maps built once when the database is loaded). The database describes the
// architecture and one reference part (the SM/CU count, clocks and peak rates of e.g. an H100
// SXM5); a runtime that sees a real device overlays the part-specific facts with withOverlay(),
// which keeps the database values beside the device ones.
#pragma once

#include "kiln/arch-db/Capability.h"
#include "kiln/arch-db/Fact.h"
#include "kiln/arch-db/Instruction.h"

#include <bitset>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::arch {

/// Who designed the target; decides which codegen (PTX or AMDGCN) applies.
enum class Vendor : std::uint8_t { Nvidia, Amd };

/// "nvidia" or "amd".
std::string_view name(Vendor vendor);

/// A value a live device reports for a fact, to overlay on the database's.
struct FactOverlay {
    std::string name;
    std::int64_t value = 0;
    std::string unit;   ///< used only when the database has no such fact
    std::string source; ///< e.g. "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"
};

/// Everything known about one target.
class Arch {
public:
    /// Builds a target; facts and instructions are indexed here, once. Duplicate fact or
    /// instruction names (aliases included) throw ArchError(MalformedDatabase).
    Arch(std::string name, Vendor vendor, std::string family, std::string referencePart,
         std::vector<Fact> facts, std::vector<Capability> capabilities,
         std::vector<Instruction> instructions);

    /// The target name (sm_90a, gfx942).
    std::string const& name() const { return name_; }
    /// NVIDIA or AMD.
    Vendor vendor() const { return vendor_; }
    /// The architecture family (ampere, ada, hopper, cdna2, cdna3, rdna3).
    std::string const& family() const { return family_; }
    /// The product whose part-specific facts (SM count, clocks, peaks) the database holds.
    std::string const& referencePart() const { return referencePart_; }

    /// Whether the target has the capability.
    bool has(Capability capability) const {
        return capabilities_.test(static_cast<std::size_t>(capability));
    }
    /// Whether the target has the capability of this name; an unknown name is an ArchError
    /// (a misspelt capability must not read as "no").
    bool has(std::string_view capabilityName) const;
    /// The capabilities the target has, in enumerator order.
    std::vector<Capability> capabilities() const;

    /// The value of a named fact, or nothing when the target has no such fact.
    std::optional<std::int64_t> fact(std::string_view factName) const;
    /// The value of a named fact; an ArchError listing the target's facts when there is none.
    std::int64_t requireFact(std::string_view factName) const;
    /// The whole fact (unit, source, origin), or null.
    Fact const* findFact(std::string_view factName) const;
    /// Every fact, sorted by name.
    std::span<Fact const> facts() const { return facts_; }

    /// The instruction with this name or alias; an ArchError listing the target's instructions
    /// (and the closest name) when there is none.
    Instruction const& instruction(std::string_view instructionName) const;
    /// The instruction with this name or alias, or null.
    Instruction const* findInstruction(std::string_view instructionName) const;
    /// Every instruction, sorted by name.
    std::span<Instruction const> instructions() const { return instructions_; }

    /// A copy of this target with some facts replaced by a live device's values. Replaced facts
    /// get origin Device and keep the database value in databaseValue; new names are added.
    Arch withOverlay(std::span<FactOverlay const> overlays) const;

    bool operator==(Arch const& other) const;

private:
    struct NameHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const {
            return std::hash<std::string_view>{}(text);
        }
    };
    using NameIndex = std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>>;

    void index();

    std::string name_;
    Vendor vendor_;
    std::string family_;
    std::string referencePart_;
    std::vector<Fact> facts_;
    std::bitset<kCapabilityCount> capabilities_;
    std::vector<Instruction> instructions_;
    NameIndex factIndex_;
    NameIndex instructionIndex_;
};

} // namespace kiln::arch
