// TargetDefinition.h: the C++ form in which targets are defined before they become JSON.
//
// A family function (ampere(), cdna3(), ...) returns a TargetDefinition with the family's
// facts, capabilities and instruction table; a target adds its part-specific facts on top:
//
//     TargetDefinition sm_86 = ampere("sm_86").part("NVIDIA GeForce RTX 3090")
//         .fact("multiprocessor_count", 82, "count", "NVIDIA Ampere GA102 whitepaper");
//
// Instruction tables are rows with a predicate over the target (usually "has capability X"),
// so an instruction appears on every target that can execute it without being listed per
// target. Every fact and every instruction timing must name its source; an estimate says so
// with a source starting "estimate:".
#pragma once

#include "kiln/arch-db/Arch.h"
#include "kiln/arch-db/Capability.h"
#include "kiln/arch-db/Instruction.h"

#include <functional>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace kiln::arch::gen {

/// A chainable builder of one Instruction.
class Op {
public:
    /// A vector memory instruction moving `bytesPerLane` per lane, tracked by `queue`.
    static Op memory(std::string name, int bytesPerLane, WaitQueue queue);
    /// A scalar (AMD SMEM / SALU) instruction.
    static Op scalar(std::string name, int bytesPerLane, WaitQueue queue);
    /// A vector ALU instruction (register scoreboard or fixed latency).
    static Op alu(std::string name);
    /// A wait, barrier, fence or commit.
    static Op sync(std::string name, WaitQueue queue = WaitQueue::None);
    /// A matrix instruction: D(MxN, d) = A(MxK, a) x B(KxN, b) + C(MxN, c).
    static Op matrix(std::string name, WaitQueue queue, int m, int n, int k, std::string a,
                     std::string b, std::string c, std::string d, int blocks = 1);

    /// Latency and issue cycles when one document (or one estimate) gives both.
    Op& timing(int latency, int issueCycles, std::string const& source);
    /// Cycles until a dependent instruction may use the result, and where that comes from
    /// ("estimate: ..." when it is a guess).
    Op& latency(int cycles, std::string source);
    /// Cycles the issuing unit is busy, and where that comes from.
    Op& issue(int cycles, std::string source);
    /// The immediate offset range of the encoding and where it is specified.
    Op& offset(std::int64_t min, std::int64_t max, std::string source);
    /// Another spelling that finds this instruction (renamed mnemonics, LLVM aliases).
    Op& alias(std::string name);

    Instruction const& instruction() const { return instruction_; }

private:
    Instruction instruction_;
};

class TargetDefinition;

/// A row of an instruction table: the instruction, and the targets it applies to.
struct InstructionRow {
    Op op;
    std::function<bool(TargetDefinition const&)> appliesTo;
};

/// A predicate for InstructionRow: the target has every listed capability.
std::function<bool(TargetDefinition const&)> whenHas(std::initializer_list<Capability> all);

/// One target under construction.
class TargetDefinition {
public:
    TargetDefinition(std::string name, Vendor vendor, std::string family);

    /// Renames (a family function builds the base, the target names itself).
    TargetDefinition& named(std::string name);
    /// The product whose SM/CU count, clocks and peaks the part-specific facts describe.
    TargetDefinition& part(std::string referencePart);
    /// Adds or replaces a fact.
    TargetDefinition& fact(std::string const& name, std::int64_t value, std::string unit,
                           std::string source);
    /// Adds capabilities.
    TargetDefinition& with(std::initializer_list<Capability> capabilities);
    /// Removes capabilities.
    TargetDefinition& without(std::initializer_list<Capability> capabilities);
    /// Adds or replaces an instruction.
    TargetDefinition& instruction(Op const& op);
    /// Adds every row whose predicate holds for this target (add capabilities first).
    TargetDefinition& instructions(std::vector<InstructionRow> const& table);

    std::string const& name() const { return name_; }
    bool has(Capability capability) const { return capabilities_.count(capability) != 0; }

    /// Problems that must stop the build: a fact or instruction without a source, a matrix
    /// instruction without shape, ... (empty when the definition is complete).
    std::vector<std::string> problems() const;

    /// The target in the database format (see arch-db/schema/arch-db.schema.json).
    nlohmann::ordered_json toJson() const;

private:
    struct FactValue {
        std::int64_t value;
        std::string unit;
        std::string source;
    };

    std::string name_;
    Vendor vendor_;
    std::string family_;
    std::string referencePart_;
    std::map<std::string, FactValue> facts_;
    std::set<Capability> capabilities_;
    std::map<std::string, Instruction> instructions_;
};

/// Every NVIDIA target Kiln ships (NvidiaTargets.cpp).
std::vector<TargetDefinition> nvidiaTargets();
/// Every AMD target Kiln ships (AmdTargets.cpp).
std::vector<TargetDefinition> amdTargets();

} // namespace kiln::arch::gen
