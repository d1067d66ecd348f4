// ArchJson.cpp: writing one target in the database format.
#include "kiln/arch-db/ArchJson.h"

#include <nlohmann/json.hpp>

namespace kiln::arch {

namespace {

using Json = nlohmann::ordered_json;

Json factJson(Fact const& fact) {
    Json result = {{"value", fact.value}, {"unit", fact.unit}, {"source", fact.source}};
    if (fact.origin == FactOrigin::Device) {
        result["origin"] = "device";
        if (fact.databaseValue) {
            result["database_value"] = *fact.databaseValue;
        }
    }
    return result;
}

Json instructionJson(Instruction const& instruction) {
    Json result = {{"kind", name(instruction.kind)},
                   {"latency", instruction.latency},
                   {"latency_source", instruction.latencySource},
                   {"issue_cycles", instruction.issueCycles},
                   {"issue_source", instruction.issueSource},
                   {"wait_queue", name(instruction.waitQueue)},
                   {"bytes_per_lane", instruction.bytesPerLane}};
    if (!instruction.aliases.empty()) {
        result["aliases"] = instruction.aliases;
    }
    if (auto const& offset = instruction.offset) {
        result["offset"] = {{"min", offset->min}, {"max", offset->max}, {"source", offset->source}};
    }
    if (auto const& matrix = instruction.matrix) {
        result["matrix"] = {{"m", matrix->m},           {"n", matrix->n}, {"k", matrix->k},
                            {"blocks", matrix->blocks}, {"a", matrix->a}, {"b", matrix->b},
                            {"c", matrix->c},           {"d", matrix->d}};
    }
    return result;
}

} // namespace

std::string toJsonText(Arch const& arch, int indent) {
    Json facts = Json::object();
    for (auto const& fact : arch.facts()) {
        facts[fact.name] = factJson(fact);
    }
    Json capabilities = Json::array();
    for (Capability capability : arch.capabilities()) {
        capabilities.push_back(name(capability));
    }
    Json instructions = Json::object();
    for (auto const& instruction : arch.instructions()) {
        instructions[instruction.name] = instructionJson(instruction);
    }
    Json target = {{"name", arch.name()},
                   {"vendor", name(arch.vendor())},
                   {"family", arch.family()},
                   {"reference_part", arch.referencePart()},
                   {"facts", facts},
                   {"capabilities", capabilities},
                   {"instructions", instructions}};
    return target.dump(indent);
}

} // namespace kiln::arch
