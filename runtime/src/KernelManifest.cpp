// KernelManifest.cpp: reading, checking and writing kernel manifests (JSON).
#include "kiln/runtime/KernelManifest.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kiln::runtime {
namespace {

using nlohmann::json;

/// Builds InvalidManifest errors that start with the origin and the JSON path.
struct Problem {
    std::string const& origin;
    Error operator()(std::string const& path, std::string const& what) const {
        return Error(ErrorCode::InvalidManifest, origin + ": " + path + ": " + what);
    }
};

std::string inQuotes(std::string const& text) {
    return "'" + text + "'";
}

Expected<std::uint64_t> readCount(json const& value, std::string const& path,
                                  Problem const& problem) {
    if (!value.is_number_unsigned()) {
        return problem(path, "must be a non-negative integer, not " + value.dump());
    }
    return value.get<std::uint64_t>();
}

Expected<std::string> readString(json const& object, char const* key, std::string const& path,
                                 Problem const& problem, char const* meaning) {
    auto const found = object.find(key);
    if (found == object.end()) {
        return problem(path + "/" + key, std::string("missing (") + meaning + ")");
    }
    if (!found->is_string() || found->get<std::string>().empty()) {
        return problem(path + "/" + key, "must be a non-empty string, not " + found->dump());
    }
    return found->get<std::string>();
}

Expected<Dim3> readBlock(json const& value, Problem const& problem) {
    std::vector<std::uint32_t> extents;
    if (value.is_array()) {
        if (value.empty() || value.size() > 3) {
            return problem("/block", "must have 1 to 3 extents, not " + value.dump());
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
            std::string const path = "/block/" + std::to_string(i);
            KILN_ASSIGN_OR_RETURN(std::uint64_t extent, readCount(value[i], path, problem));
            if (extent == 0 || extent > 0xffffffffu) {
                return problem(path, "must be between 1 and 2^32-1, not " + value[i].dump());
            }
            extents.push_back(static_cast<std::uint32_t>(extent));
        }
    } else {
        KILN_ASSIGN_OR_RETURN(std::uint64_t extent, readCount(value, "/block", problem));
        if (extent == 0 || extent > 0xffffffffu) {
            return problem("/block", "must be between 1 and 2^32-1, not " + value.dump());
        }
        extents.push_back(static_cast<std::uint32_t>(extent));
    }
    extents.resize(3, 1);
    return Dim3{extents[0], extents[1], extents[2]};
}

Expected<KernelParameter> readParameter(json const& value, std::size_t index,
                                        Problem const& problem) {
    std::string const path = "/parameters/" + std::to_string(index);
    if (!value.is_object())
        return problem(path, "must be an object, not " + value.dump());
    KernelParameter parameter;
    KILN_ASSIGN_OR_RETURN(parameter.name,
                          readString(value, "name", path, problem, "the parameter's name"));
    KILN_ASSIGN_OR_RETURN(std::string type,
                          readString(value, "type", path, problem,
                                     "the value's type, or the pointed-to element type"));
    std::optional<ScalarType> scalar = parseScalarType(type);
    if (!scalar) {
        return problem(path + "/type",
                       "unknown type '" + type + "'; known types: " + scalarTypeNames());
    }
    parameter.type = *scalar;
    KILN_ASSIGN_OR_RETURN(std::string kind,
                          readString(value, "kind", path, problem, "\"pointer\" or \"value\""));
    if (kind == "pointer") {
        parameter.kind = ParameterKind::Pointer;
    } else if (kind == "value") {
        parameter.kind = ParameterKind::Value;
    } else {
        return problem(path + "/kind", "must be \"pointer\" or \"value\", not '" + kind + "'");
    }
    for (char const* key : {"size", "offset"}) {
        if (!value.contains(key)) {
            return problem(path + "/" + key, "missing (bytes in the parameter buffer)");
        }
    }
    KILN_ASSIGN_OR_RETURN(parameter.size, readCount(value["size"], path + "/size", problem));
    KILN_ASSIGN_OR_RETURN(parameter.offset, readCount(value["offset"], path + "/offset", problem));
    std::size_t const expectedSize =
        parameter.kind == ParameterKind::Pointer ? 8 : sizeOf(parameter.type);
    if (parameter.size != expectedSize) {
        std::string const what = parameter.kind == ParameterKind::Pointer
                                     ? "a pointer (8 bytes)"
                                     : "a " + std::string(name(parameter.type)) + " value (" +
                                           std::to_string(expectedSize) + " bytes)";
        return problem(path + "/size", std::to_string(parameter.size) + " does not match " + what);
    }
    if (parameter.offset % parameter.size != 0) {
        return problem(path + "/offset", std::to_string(parameter.offset) +
                                             " is not a multiple of the parameter's size (" +
                                             std::to_string(parameter.size) + ")");
    }
    return parameter;
}

} // namespace

std::string_view name(ParameterKind kind) {
    return kind == ParameterKind::Pointer ? "pointer" : "value";
}

Expected<KernelManifest> KernelManifest::fromJson(std::string_view text,
                                                  std::string const& origin) {
    Problem const problem{origin};
    json root;
    try {
        root = json::parse(text);
    } catch (json::parse_error const& error) {
        return Error(ErrorCode::InvalidManifest, origin + ": not valid JSON: " + error.what());
    }
    if (!root.is_object())
        return problem("/", "a manifest is a JSON object, not " + root.dump());

    KernelManifest manifest;
    KILN_ASSIGN_OR_RETURN(manifest.entry,
                          readString(root, "entry", "", problem, "the kernel's entry name"));
    KILN_ASSIGN_OR_RETURN(manifest.target,
                          readString(root, "target", "", problem, "e.g. \"sm_90a\""));
    if (auto block = root.find("block"); block != root.end()) {
        KILN_ASSIGN_OR_RETURN(manifest.block, readBlock(*block, problem));
    }
    if (auto shared = root.find("shared_bytes"); shared != root.end()) {
        KILN_ASSIGN_OR_RETURN(manifest.sharedBytes, readCount(*shared, "/shared_bytes", problem));
    }
    auto const parameters = root.find("parameters");
    if (parameters == root.end()) {
        return problem("/parameters", "missing (the kernel's parameters, [] for none)");
    }
    if (!parameters->is_array()) {
        return problem("/parameters", "must be an array, not " + parameters->dump());
    }
    for (std::size_t i = 0; i < parameters->size(); ++i) {
        KILN_ASSIGN_OR_RETURN(KernelParameter parameter,
                              readParameter((*parameters)[i], i, problem));
        std::string const path = "/parameters/" + std::to_string(i);
        for (std::size_t j = 0; j < manifest.parameters.size(); ++j) {
            KernelParameter const& earlier = manifest.parameters[j];
            if (earlier.name == parameter.name) {
                return problem(path + "/name", inQuotes(parameter.name) + " is already parameter " +
                                                   std::to_string(j));
            }
        }
        if (!manifest.parameters.empty()) {
            KernelParameter const& previous = manifest.parameters.back();
            std::size_t const previousEnd = previous.offset + previous.size;
            if (parameter.offset < previousEnd) {
                return problem(path + "/offset",
                               std::to_string(parameter.offset) + " overlaps parameter " +
                                   std::to_string(i - 1) + " " + inQuotes(previous.name) +
                                   ", which ends at byte " + std::to_string(previousEnd));
            }
        }
        manifest.parameters.push_back(std::move(parameter));
    }
    return manifest;
}

Expected<KernelManifest> KernelManifest::fromFile(std::string const& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        return Error(ErrorCode::NotFound, "cannot read the manifest file '" + path + "'");
    std::ostringstream text;
    text << file.rdbuf();
    return fromJson(text.str(), path);
}

std::string KernelManifest::toJson() const {
    json root = json::object();
    root["entry"] = entry;
    root["target"] = target;
    if (block)
        root["block"] = {block->x, block->y, block->z};
    root["shared_bytes"] = sharedBytes;
    json list = json::array();
    for (KernelParameter const& parameter : parameters) {
        list.push_back({{"name", parameter.name},
                        {"type", std::string(runtime::name(parameter.type))},
                        {"kind", std::string(runtime::name(parameter.kind))},
                        {"size", parameter.size},
                        {"offset", parameter.offset}});
    }
    root["parameters"] = std::move(list);
    return root.dump(2) + "\n";
}

std::size_t KernelManifest::parameterBytes() const {
    return parameters.empty() ? 0 : parameters.back().offset + parameters.back().size;
}

} // namespace kiln::runtime
