// ArchDiff.cpp: comparing two targets fact by fact, capability by capability, instruction by
// instruction.
#include "kiln/arch-db/ArchDiff.h"

#include <algorithm>

namespace kiln::arch {

namespace {

std::vector<std::string> differingFields(Instruction const& a, Instruction const& b) {
    std::vector<std::string> fields;
    if (a.name != b.name) {
        fields.emplace_back("name");
    }
    if (a.kind != b.kind) {
        fields.emplace_back("kind");
    }
    if (a.latency != b.latency) {
        fields.emplace_back("latency");
    }
    if (a.issueCycles != b.issueCycles) {
        fields.emplace_back("issue_cycles");
    }
    if (a.waitQueue != b.waitQueue) {
        fields.emplace_back("wait_queue");
    }
    if (a.bytesPerLane != b.bytesPerLane) {
        fields.emplace_back("bytes_per_lane");
    }
    auto sameOffset = [](std::optional<OffsetRange> const& x, std::optional<OffsetRange> const& y) {
        return x.has_value() == y.has_value() && (!x || (x->min == y->min && x->max == y->max));
    };
    if (!sameOffset(a.offset, b.offset)) {
        fields.emplace_back("offset");
    }
    if (a.matrix != b.matrix) {
        fields.emplace_back("matrix");
    }
    return fields;
}

} // namespace

ArchDiff diff(Arch const& left, Arch const& right) {
    ArchDiff result;
    for (auto const& fact : left.facts()) {
        Fact const* other = right.findFact(fact.name);
        if (other == nullptr || other->value != fact.value) {
            result.facts.push_back({fact.name, fact.unit, fact.value,
                                    other ? std::optional(other->value) : std::nullopt});
        }
    }
    for (auto const& fact : right.facts()) {
        if (left.findFact(fact.name) == nullptr) {
            result.facts.push_back({fact.name, fact.unit, std::nullopt, fact.value});
        }
    }
    std::sort(result.facts.begin(), result.facts.end(),
              [](auto const& a, auto const& b) { return a.name < b.name; });

    for (auto const& info : kCapabilityTable) {
        if (left.has(info.capability) && !right.has(info.capability)) {
            result.onlyLeft.push_back(info.capability);
        } else if (!left.has(info.capability) && right.has(info.capability)) {
            result.onlyRight.push_back(info.capability);
        }
    }

    std::vector<Instruction const*> pairedRight;
    for (auto const& instruction : left.instructions()) {
        Instruction const* other = right.findInstruction(instruction.name);
        if (other == nullptr) {
            for (auto const& alias : instruction.aliases) {
                other = other ? other : right.findInstruction(alias);
            }
        }
        if (other == nullptr) {
            result.instructions.push_back({instruction.name, &instruction, nullptr, {}});
            continue;
        }
        pairedRight.push_back(other);
        auto fields = differingFields(instruction, *other);
        if (!fields.empty()) {
            result.instructions.push_back({instruction.name, &instruction, other, fields});
        }
    }
    for (auto const& instruction : right.instructions()) {
        if (std::find(pairedRight.begin(), pairedRight.end(), &instruction) == pairedRight.end()) {
            result.instructions.push_back({instruction.name, nullptr, &instruction, {}});
        }
    }
    return result;
}

} // namespace kiln::arch
