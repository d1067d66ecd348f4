// ArchDatabaseReader.cpp: the strict reader of the database format (see arch-db.schema.json).
#include "ArchDatabaseReader.h"

#include "kiln/arch-db/ArchError.h"
#include "kiln/arch-db/ArchJson.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

namespace kiln::arch::detail {

namespace {

using Json = nlohmann::json;

constexpr std::int64_t kAnyInteger = std::numeric_limits<std::int64_t>::min();

/// Walks the JSON, failing with "<origin>: <pointer>: <what>".
class Reader {
public:
    explicit Reader(std::string origin)
        : origin_(std::move(origin)) {}

    [[noreturn]] void fail(std::string const& pointer, std::string const& what) const {
        throw ArchError(ArchError::Kind::MalformedDatabase,
                        origin_ + ": " + (pointer.empty() ? "/" : pointer) + ": " + what);
    }

    Json const& object(Json const& value, std::string const& pointer,
                       std::initializer_list<char const*> required,
                       std::initializer_list<char const*> optional = {}) const {
        if (!value.is_object()) {
            fail(pointer, "expected an object");
        }
        for (char const* key : required) {
            if (!value.contains(key)) {
                fail(pointer, std::string("missing required key \"") + key + "\"");
            }
        }
        for (auto const& [key, member] : value.items()) {
            bool known = false;
            for (char const* name : required) {
                known = known || key == name;
            }
            for (char const* name : optional) {
                known = known || key == name;
            }
            if (!known) {
                fail(pointer + "/" + key, "unknown key \"" + key + "\"");
            }
        }
        return value;
    }

    /// An object used as a map from names to entries (facts, instructions): any keys.
    Json const& map(Json const& value, std::string const& pointer) const {
        if (!value.is_object()) {
            fail(pointer, "expected an object");
        }
        return value;
    }

    std::string string(Json const& parent, char const* key, std::string const& pointer) const {
        Json const& value = parent.at(key);
        if (!value.is_string()) {
            fail(pointer + "/" + key, "expected a string");
        }
        return value.get<std::string>();
    }

    std::int64_t integer(Json const& parent, char const* key, std::string const& pointer,
                         std::int64_t minimum) const {
        Json const& value = parent.at(key);
        if (!value.is_number_integer()) {
            fail(pointer + "/" + key, "expected an integer");
        }
        auto result = value.get<std::int64_t>();
        if (result < minimum) {
            fail(pointer + "/" + key, "must be at least " + std::to_string(minimum));
        }
        return result;
    }

    int smallInteger(Json const& parent, char const* key, std::string const& pointer,
                     int minimum) const {
        std::int64_t value = integer(parent, key, pointer, minimum);
        if (value > 1'000'000'000) {
            fail(pointer + "/" + key, "is implausibly large");
        }
        return static_cast<int>(value);
    }

    std::vector<std::string> strings(Json const& parent, char const* key,
                                     std::string const& pointer) const {
        Json const& value = parent.at(key);
        if (!value.is_array()) {
            fail(pointer + "/" + key, "expected an array of strings");
        }
        std::vector<std::string> result;
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (!value[i].is_string()) {
                fail(pointer + "/" + key + "/" + std::to_string(i), "expected a string");
            }
            result.push_back(value[i].get<std::string>());
        }
        return result;
    }

    Fact fact(std::string const& name, Json const& value, std::string const& pointer) const {
        object(value, pointer, {"value", "unit", "source"}, {"origin", "database_value"});
        Fact fact{name,
                  integer(value, "value", pointer, kAnyInteger),
                  string(value, "unit", pointer),
                  string(value, "source", pointer),
                  FactOrigin::Database,
                  std::nullopt};
        if (value.contains("origin")) {
            std::string origin = string(value, "origin", pointer);
            if (origin == "device") {
                fact.origin = FactOrigin::Device;
            } else if (origin != "database") {
                fail(pointer + "/origin", "expected \"database\" or \"device\"");
            }
        }
        if (value.contains("database_value")) {
            fact.databaseValue = integer(value, "database_value", pointer, kAnyInteger);
        }
        return fact;
    }

    Instruction instruction(std::string const& name, Json const& value,
                            std::string const& pointer) const {
        object(value, pointer,
               {"kind", "latency", "latency_source", "issue_cycles", "issue_source", "wait_queue",
                "bytes_per_lane"},
               {"aliases", "offset", "matrix"});
        Instruction result;
        result.name = name;
        std::string kind = string(value, "kind", pointer);
        auto parsedKind = instructionKindFromName(kind);
        if (!parsedKind) {
            fail(pointer + "/kind", "unknown instruction kind \"" + kind + "\"");
        }
        result.kind = *parsedKind;
        result.latency = smallInteger(value, "latency", pointer, 0);
        result.issueCycles = smallInteger(value, "issue_cycles", pointer, 0);
        std::string queue = string(value, "wait_queue", pointer);
        auto parsedQueue = waitQueueFromName(queue);
        if (!parsedQueue) {
            fail(pointer + "/wait_queue", "unknown wait queue \"" + queue + "\"");
        }
        result.waitQueue = *parsedQueue;
        result.bytesPerLane = smallInteger(value, "bytes_per_lane", pointer, 0);
        result.latencySource = string(value, "latency_source", pointer);
        result.issueSource = string(value, "issue_source", pointer);
        if (result.latencySource.empty()) {
            fail(pointer + "/latency_source", "every figure needs a source");
        }
        if (result.issueSource.empty()) {
            fail(pointer + "/issue_source", "every figure needs a source");
        }
        if (value.contains("aliases")) {
            result.aliases = strings(value, "aliases", pointer);
        }
        if (value.contains("offset")) {
            std::string at = pointer + "/offset";
            Json const& offset = object(value.at("offset"), at, {"min", "max", "source"});
            result.offset =
                OffsetRange{integer(offset, "min", at, kAnyInteger),
                            integer(offset, "max", at, kAnyInteger), string(offset, "source", at)};
            if (result.offset->min > result.offset->max) {
                fail(at, "min is larger than max");
            }
        }
        if (value.contains("matrix")) {
            std::string at = pointer + "/matrix";
            Json const& matrix =
                object(value.at("matrix"), at, {"m", "n", "k", "blocks", "a", "b", "c", "d"});
            result.matrix =
                MatrixShape{smallInteger(matrix, "m", at, 1), smallInteger(matrix, "n", at, 1),
                            smallInteger(matrix, "k", at, 1), smallInteger(matrix, "blocks", at, 1),
                            string(matrix, "a", at),          string(matrix, "b", at),
                            string(matrix, "c", at),          string(matrix, "d", at)};
        }
        if ((result.kind == InstructionKind::Matrix) != result.matrix.has_value()) {
            fail(pointer, "\"matrix\" is required for, and only allowed on, kind \"matrix\"");
        }
        return result;
    }

    Arch target(Json const& value, std::string const& pointer) const {
        object(value, pointer,
               {"name", "vendor", "family", "reference_part", "facts", "capabilities",
                "instructions"});
        std::string name = string(value, "name", pointer);
        std::string vendorName = string(value, "vendor", pointer);
        Vendor vendor = Vendor::Nvidia;
        if (vendorName == "amd") {
            vendor = Vendor::Amd;
        } else if (vendorName != "nvidia") {
            fail(pointer + "/vendor", "expected \"nvidia\" or \"amd\"");
        }
        std::vector<Fact> facts;
        Json const& factsJson = map(value.at("facts"), pointer + "/facts");
        for (auto const& [key, member] : factsJson.items()) {
            facts.push_back(fact(key, member, pointer + "/facts/" + key));
        }
        for (std::string_view required : kRequiredFacts) {
            if (!factsJson.contains(required)) {
                fail(pointer + "/facts", "missing required fact \"" + std::string(required) + "\"");
            }
        }
        std::vector<Capability> capabilities;
        auto names = strings(value, "capabilities", pointer);
        for (std::size_t i = 0; i < names.size(); ++i) {
            auto capability = capabilityFromName(names[i]);
            if (!capability) {
                fail(pointer + "/capabilities/" + std::to_string(i),
                     "unknown capability \"" + names[i] + "\"");
            }
            capabilities.push_back(*capability);
        }
        std::vector<Instruction> instructions;
        Json const& instructionsJson = map(value.at("instructions"), pointer + "/instructions");
        for (auto const& [key, member] : instructionsJson.items()) {
            instructions.push_back(instruction(key, member, pointer + "/instructions/" + key));
        }
        try {
            return Arch(std::move(name), vendor, string(value, "family", pointer),
                        string(value, "reference_part", pointer), std::move(facts),
                        std::move(capabilities), std::move(instructions));
        } catch (ArchError const& error) {
            fail(pointer, error.what());
        }
    }

private:
    std::string origin_;
};

} // namespace

Database readDatabase(std::string_view text, std::string const& origin) {
    Reader reader(origin);
    Json root;
    try {
        root = Json::parse(text.begin(), text.end());
    } catch (Json::parse_error const& error) {
        throw ArchError(ArchError::Kind::MalformedDatabase,
                        origin + ": not valid JSON: " + error.what());
    }
    reader.object(root, "", {"schema_version", "targets"},
                  {"generator", "capabilities", "default_targets"});
    std::int64_t version = reader.integer(root, "schema_version", "", 0);
    if (version != kSchemaVersion) {
        reader.fail("/schema_version", "this Kiln reads version " + std::to_string(kSchemaVersion) +
                                           ", the file is " + std::to_string(version));
    }
    Json const& targets = root.at("targets");
    if (!targets.is_array() || targets.empty()) {
        reader.fail("/targets", "expected a non-empty array of targets");
    }
    Database result;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        result.targets.push_back(reader.target(targets[i], "/targets/" + std::to_string(i)));
    }
    if (root.contains("default_targets")) {
        result.defaultTargets = reader.strings(root, "default_targets", "");
        for (std::size_t i = 0; i < result.defaultTargets.size(); ++i) {
            std::string const& name = result.defaultTargets[i];
            bool const known = std::any_of(result.targets.begin(), result.targets.end(),
                                           [&](Arch const& arch) { return arch.name() == name; });
            if (!known) {
                reader.fail("/default_targets/" + std::to_string(i),
                            "'" + name + "' is not a target of this database");
            }
        }
    }
    return result;
}

} // namespace kiln::arch::detail
