// TargetDefinition.cpp: building targets and writing them in the database format.
#include "TargetDefinition.h"

#include "kiln/arch-db/ArchJson.h"

#include <vector>

namespace kiln::arch::gen {

Op Op::memory(std::string name, int bytesPerLane, WaitQueue queue) {
    Op op;
    op.instruction_.name = std::move(name);
    op.instruction_.kind = InstructionKind::Memory;
    op.instruction_.bytesPerLane = bytesPerLane;
    op.instruction_.waitQueue = queue;
    return op;
}

Op Op::scalar(std::string name, int bytesPerLane, WaitQueue queue) {
    Op op = memory(std::move(name), bytesPerLane, queue);
    op.instruction_.kind = InstructionKind::Scalar;
    return op;
}

Op Op::alu(std::string name) {
    Op op;
    op.instruction_.name = std::move(name);
    op.instruction_.kind = InstructionKind::Alu;
    return op;
}

Op Op::sync(std::string name, WaitQueue queue) {
    Op op;
    op.instruction_.name = std::move(name);
    op.instruction_.kind = InstructionKind::Sync;
    op.instruction_.waitQueue = queue;
    return op;
}

Op Op::matrix(std::string name, WaitQueue queue, int m, int n, int k, std::string a, std::string b,
              std::string c, std::string d, int blocks) {
    Op op;
    op.instruction_.name = std::move(name);
    op.instruction_.kind = InstructionKind::Matrix;
    op.instruction_.waitQueue = queue;
    op.instruction_.matrix =
        MatrixShape{m, n, k, blocks, std::move(a), std::move(b), std::move(c), std::move(d)};
    return op;
}

Op& Op::timing(int latency, int issueCycles, std::string const& source) {
    return this->latency(latency, source).issue(issueCycles, source);
}

Op& Op::latency(int cycles, std::string source) {
    instruction_.latency = cycles;
    instruction_.latencySource = std::move(source);
    return *this;
}

Op& Op::issue(int cycles, std::string source) {
    instruction_.issueCycles = cycles;
    instruction_.issueSource = std::move(source);
    return *this;
}

Op& Op::offset(std::int64_t min, std::int64_t max, std::string source) {
    instruction_.offset = OffsetRange{min, max, std::move(source)};
    return *this;
}

Op& Op::alias(std::string name) {
    instruction_.aliases.push_back(std::move(name));
    return *this;
}

std::function<bool(TargetDefinition const&)> whenHas(std::initializer_list<Capability> all) {
    std::vector<Capability> needed(all);
    return [needed](TargetDefinition const& target) {
        for (Capability capability : needed) {
            if (!target.has(capability)) {
                return false;
            }
        }
        return true;
    };
}

TargetDefinition::TargetDefinition(std::string name, Vendor vendor, std::string family)
    : name_(std::move(name))
    , vendor_(vendor)
    , family_(std::move(family)) {}

TargetDefinition& TargetDefinition::named(std::string name) {
    name_ = std::move(name);
    return *this;
}

TargetDefinition& TargetDefinition::part(std::string referencePart) {
    referencePart_ = std::move(referencePart);
    return *this;
}

TargetDefinition& TargetDefinition::fact(std::string const& name, std::int64_t value,
                                         std::string unit, std::string source) {
    facts_[name] = FactValue{value, std::move(unit), std::move(source)};
    return *this;
}

TargetDefinition& TargetDefinition::with(std::initializer_list<Capability> capabilities) {
    capabilities_.insert(capabilities.begin(), capabilities.end());
    return *this;
}

TargetDefinition& TargetDefinition::without(std::initializer_list<Capability> capabilities) {
    for (Capability capability : capabilities) {
        capabilities_.erase(capability);
    }
    return *this;
}

TargetDefinition& TargetDefinition::instruction(Op const& op) {
    instructions_[op.instruction().name] = op.instruction();
    return *this;
}

TargetDefinition& TargetDefinition::instructions(std::vector<InstructionRow> const& table) {
    for (auto const& row : table) {
        if (row.appliesTo(*this)) {
            instruction(row.op);
        }
    }
    return *this;
}

std::vector<std::string> TargetDefinition::problems() const {
    std::vector<std::string> found;
    auto problem = [&](std::string const& what) { found.push_back(name_ + ": " + what); };
    if (referencePart_.empty()) {
        problem("no reference part");
    }
    for (std::string_view required : kRequiredFacts) {
        if (facts_.count(std::string(required)) == 0) {
            problem("missing required fact " + std::string(required));
        }
    }
    for (auto const& [name, fact] : facts_) {
        if (fact.source.empty() || fact.unit.empty()) {
            problem("fact " + name + " needs a unit and a source");
        }
    }
    for (auto const& [name, instruction] : instructions_) {
        if (instruction.latencySource.empty() || instruction.issueSource.empty()) {
            problem("instruction " + name + " needs a latency source and an issue source");
        }
        if (instruction.issueCycles <= 0) {
            problem("instruction " + name + " has no issue cycles");
        }
        if (instruction.offset && instruction.offset->source.empty()) {
            problem("instruction " + name + " has an offset range without a source");
        }
    }
    return found;
}

nlohmann::ordered_json TargetDefinition::toJson() const {
    using Json = nlohmann::ordered_json;
    Json facts = Json::object();
    for (auto const& [name, fact] : facts_) {
        facts[name] = {{"value", fact.value}, {"unit", fact.unit}, {"source", fact.source}};
    }
    Json capabilities = Json::array();
    for (Capability capability : capabilities_) {
        capabilities.push_back(kiln::arch::name(capability));
    }
    Json instructions = Json::object();
    for (auto const& [name, instruction] : instructions_) {
        Json entry = {{"kind", kiln::arch::name(instruction.kind)},
                      {"latency", instruction.latency},
                      {"latency_source", instruction.latencySource},
                      {"issue_cycles", instruction.issueCycles},
                      {"issue_source", instruction.issueSource},
                      {"wait_queue", kiln::arch::name(instruction.waitQueue)},
                      {"bytes_per_lane", instruction.bytesPerLane}};
        if (!instruction.aliases.empty()) {
            entry["aliases"] = instruction.aliases;
        }
        if (auto const& offset = instruction.offset) {
            entry["offset"] = {
                {"min", offset->min}, {"max", offset->max}, {"source", offset->source}};
        }
        if (auto const& matrix = instruction.matrix) {
            entry["matrix"] = {{"m", matrix->m},           {"n", matrix->n}, {"k", matrix->k},
                               {"blocks", matrix->blocks}, {"a", matrix->a}, {"b", matrix->b},
                               {"c", matrix->c},           {"d", matrix->d}};
        }
        instructions[name] = entry;
    }
    return Json{{"name", name_},
                {"vendor", vendor_ == Vendor::Nvidia ? "nvidia" : "amd"},
                {"family", family_},
                {"reference_part", referencePart_},
                {"facts", facts},
                {"capabilities", capabilities},
                {"instructions", instructions}};
}

} // namespace kiln::arch::gen
