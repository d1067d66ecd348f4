// Arch.cpp: one target's facts, capabilities and instructions, indexed by name.
#include "kiln/arch-db/Arch.h"

#include "kiln/arch-db/ArchError.h"

#include <algorithm>

namespace kiln::arch {

std::string_view name(Vendor vendor) {
    return vendor == Vendor::Nvidia ? "nvidia" : "amd";
}

Arch::Arch(std::string name, Vendor vendor, std::string family, std::string referencePart,
           std::vector<Fact> facts, std::vector<Capability> capabilities,
           std::vector<Instruction> instructions)
    : name_(std::move(name))
    , vendor_(vendor)
    , family_(std::move(family))
    , referencePart_(std::move(referencePart))
    , facts_(std::move(facts))
    , instructions_(std::move(instructions)) {
    for (Capability capability : capabilities) {
        capabilities_.set(static_cast<std::size_t>(capability));
    }
    index();
}

void Arch::index() {
    std::sort(facts_.begin(), facts_.end(),
              [](Fact const& a, Fact const& b) { return a.name < b.name; });
    std::sort(instructions_.begin(), instructions_.end(),
              [](Instruction const& a, Instruction const& b) { return a.name < b.name; });
    factIndex_.clear();
    instructionIndex_.clear();
    factIndex_.reserve(facts_.size());
    for (std::size_t i = 0; i < facts_.size(); ++i) {
        if (!factIndex_.emplace(facts_[i].name, i).second) {
            throw ArchError(ArchError::Kind::MalformedDatabase,
                            name_ + ": fact '" + facts_[i].name + "' is defined twice");
        }
    }
    auto add = [&](std::string const& key, std::size_t i) {
        if (!instructionIndex_.emplace(key, i).second) {
            throw ArchError(ArchError::Kind::MalformedDatabase,
                            name_ + ": instruction name or alias '" + key + "' is defined twice");
        }
    };
    for (std::size_t i = 0; i < instructions_.size(); ++i) {
        add(instructions_[i].name, i);
        for (auto const& alias : instructions_[i].aliases) {
            add(alias, i);
        }
    }
}

bool Arch::has(std::string_view capabilityName) const {
    if (auto capability = capabilityFromName(capabilityName)) {
        return has(*capability);
    }
    std::vector<std::string> known;
    for (auto const& info : kCapabilityTable) {
        known.emplace_back(info.name);
    }
    throw ArchError::unknownName(ArchError::Kind::UnknownCapability, "capability", capabilityName,
                                 "", known);
}

std::vector<Capability> Arch::capabilities() const {
    std::vector<Capability> result;
    for (auto const& info : kCapabilityTable) {
        if (has(info.capability)) {
            result.push_back(info.capability);
        }
    }
    return result;
}

Fact const* Arch::findFact(std::string_view factName) const {
    auto found = factIndex_.find(factName);
    return found == factIndex_.end() ? nullptr : &facts_[found->second];
}

std::optional<std::int64_t> Arch::fact(std::string_view factName) const {
    if (Fact const* found = findFact(factName)) {
        return found->value;
    }
    return std::nullopt;
}

std::int64_t Arch::requireFact(std::string_view factName) const {
    if (Fact const* found = findFact(factName)) {
        return found->value;
    }
    std::vector<std::string> known;
    for (auto const& fact : facts_) {
        known.push_back(fact.name);
    }
    throw ArchError::unknownName(ArchError::Kind::UnknownFact, "fact", factName, " on " + name_,
                                 known);
}

Instruction const* Arch::findInstruction(std::string_view instructionName) const {
    auto found = instructionIndex_.find(instructionName);
    return found == instructionIndex_.end() ? nullptr : &instructions_[found->second];
}

Instruction const& Arch::instruction(std::string_view instructionName) const {
    if (Instruction const* found = findInstruction(instructionName)) {
        return *found;
    }
    std::vector<std::string> known;
    for (auto const& [key, index] : instructionIndex_) {
        known.push_back(key);
    }
    throw ArchError::unknownName(ArchError::Kind::UnknownInstruction, "instruction",
                                 instructionName, " on " + name_, known);
}

Arch Arch::withOverlay(std::span<FactOverlay const> overlays) const {
    Arch result = *this;
    for (auto const& overlay : overlays) {
        auto found = result.factIndex_.find(overlay.name);
        if (found != result.factIndex_.end()) {
            Fact& fact = result.facts_[found->second];
            if (fact.origin == FactOrigin::Database) {
                fact.databaseValue = fact.value;
            }
            fact.value = overlay.value;
            fact.source = overlay.source;
            fact.origin = FactOrigin::Device;
        } else {
            result.facts_.push_back(Fact{overlay.name, overlay.value, overlay.unit, overlay.source,
                                         FactOrigin::Device, std::nullopt});
            result.index();
        }
    }
    return result;
}

bool Arch::operator==(Arch const& other) const {
    return name_ == other.name_ && vendor_ == other.vendor_ && family_ == other.family_ &&
           referencePart_ == other.referencePart_ && facts_ == other.facts_ &&
           capabilities_ == other.capabilities_ && instructions_ == other.instructions_;
}

} // namespace kiln::arch
