// KernelManifest.cpp: reading, checking and writing kernel manifests (JSON).
#include "kiln/runtime/KernelManifest.h"

#include <array>
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

Expected<Dim3> readCluster(json const& value, Problem const& problem) {
    if (!value.is_array() || value.size() != 3)
        return problem("/cluster", "must be an array of 3 extents, not " + value.dump());
    std::array<std::uint32_t, 3> extents{};
    for (std::size_t i = 0; i < 3; ++i) {
        std::string const path = "/cluster/" + std::to_string(i);
        KILN_ASSIGN_OR_RETURN(std::uint64_t extent, readCount(value[i], path, problem));
        if (extent == 0 || extent > kMaxClusterBlocks)
            return problem(path, "must be between 1 and " + std::to_string(kMaxClusterBlocks) +
                                     ", not " + value[i].dump());
        extents[i] = static_cast<std::uint32_t>(extent);
    }
    Dim3 const cluster{extents[0], extents[1], extents[2]};
    if (cluster.count() > kMaxClusterBlocks)
        return problem("/cluster", "has " + std::to_string(cluster.count()) +
                                       " blocks; a portable cluster has at most " +
                                       std::to_string(kMaxClusterBlocks));
    return cluster;
}

Expected<TensorMapShape> readTensorMapShape(json const& value, ScalarType element,
                                            std::string const& path, Problem const& problem) {
    if (!value.is_object())
        return problem(path, "must be an object, not " + value.dump());
    TensorMapShape shape;
    shape.element = element;
    auto const box = value.find("box");
    if (box == value.end())
        return problem(path + "/box", "missing (elements per dimension, innermost first)");
    if (!box->is_array() || box->empty() || box->size() > kTensorMapMaxRank)
        return problem(path + "/box", "must have 1 to 5 extents, not " + box->dump());
    shape.rank = static_cast<std::uint8_t>(box->size());
    for (std::size_t i = 0; i < box->size(); ++i) {
        std::string const at = path + "/box/" + std::to_string(i);
        KILN_ASSIGN_OR_RETURN(std::uint64_t extent, readCount((*box)[i], at, problem));
        if (extent == 0 || extent > 256)
            return problem(at, "must be between 1 and 256, not " + (*box)[i].dump());
        shape.box[i] = static_cast<std::uint32_t>(extent);
    }
    KILN_ASSIGN_OR_RETURN(
        std::string swizzle,
        readString(value, "swizzle", path, problem, "\"none\", \"32B\", \"64B\" or \"128B\""));
    std::optional<TensorMapSwizzle> parsed = parseTensorMapSwizzle(swizzle);
    if (!parsed)
        return problem(path + "/swizzle",
                       "must be \"none\", \"32B\", \"64B\" or \"128B\", not '" + swizzle + "'");
    shape.swizzle = *parsed;
    return shape;
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
    KILN_ASSIGN_OR_RETURN(std::string kind, readString(value, "kind", path, problem,
                                                       "\"pointer\", \"value\" or \"tensor_map\""));
    if (kind == "pointer") {
        parameter.kind = ParameterKind::Pointer;
    } else if (kind == "value") {
        parameter.kind = ParameterKind::Value;
    } else if (kind == "tensor_map") {
        parameter.kind = ParameterKind::TensorMap;
    } else {
        return problem(path + "/kind",
                       "must be \"pointer\", \"value\" or \"tensor_map\", not '" + kind + "'");
    }
    for (char const* key : {"size", "offset"}) {
        if (!value.contains(key)) {
            return problem(path + "/" + key, "missing (bytes in the parameter buffer)");
        }
    }
    KILN_ASSIGN_OR_RETURN(parameter.size, readCount(value["size"], path + "/size", problem));
    KILN_ASSIGN_OR_RETURN(parameter.offset, readCount(value["offset"], path + "/offset", problem));
    std::size_t expectedSize = sizeOf(parameter.type);
    std::size_t alignment = expectedSize;
    std::string what = "a " + std::string(name(parameter.type)) + " value (" +
                       std::to_string(expectedSize) + " bytes)";
    if (parameter.kind == ParameterKind::Pointer) {
        expectedSize = alignment = 8;
        what = "a pointer (8 bytes)";
    } else if (parameter.kind == ParameterKind::TensorMap) {
        expectedSize = kTensorMapBytes;
        alignment = kTensorMapAlignment;
        what = "a tensor map (128 bytes)";
    }
    if (parameter.size != expectedSize) {
        return problem(path + "/size", std::to_string(parameter.size) + " does not match " + what);
    }
    if (parameter.offset % alignment != 0) {
        return problem(path + "/offset", std::to_string(parameter.offset) +
                                             " is not a multiple of the parameter's alignment (" +
                                             std::to_string(alignment) + ")");
    }
    if (auto const workspace = value.find("workspace"); workspace != value.end()) {
        std::string const at = path + "/workspace";
        if (parameter.kind != ParameterKind::Pointer)
            return problem(at, "only a parameter of kind \"pointer\" is a workspace");
        if (!workspace->is_object())
            return problem(at, "must be an object, not " + workspace->dump());
        KILN_ASSIGN_OR_RETURN(
            parameter.workspaceBytes,
            readString(*workspace, "bytes", at, problem, "its bytes, an expression of the sizes"));
        auto const zeroed = workspace->find("zeroed");
        if (zeroed == workspace->end() || !zeroed->is_boolean() || !zeroed->get<bool>())
            return problem(at + "/zeroed", "must be true (a workspace starts zeroed)");
    }
    auto const map = value.find("tensor_map");
    if (parameter.kind != ParameterKind::TensorMap) {
        if (map != value.end())
            return problem(path + "/tensor_map", "only a parameter of kind \"tensor_map\" has one");
        return parameter;
    }
    if (map == value.end())
        return problem(path + "/tensor_map", "missing (the tensor, box and swizzle it maps)");
    KILN_ASSIGN_OR_RETURN(parameter.tensorMap,
                          readTensorMapShape(*map, parameter.type, path + "/tensor_map", problem));
    KILN_ASSIGN_OR_RETURN(parameter.tensor, readString(*map, "tensor", path + "/tensor_map",
                                                       problem, "the tensor it maps"));
    return parameter;
}

} // namespace

std::string_view name(ParameterKind kind) {
    switch (kind) {
    case ParameterKind::Pointer:
        return "pointer";
    case ParameterKind::Value:
        return "value";
    case ParameterKind::TensorMap:
        return "tensor_map";
    }
    return "?";
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
    if (auto cluster = root.find("cluster"); cluster != root.end()) {
        KILN_ASSIGN_OR_RETURN(manifest.cluster, readCluster(*cluster, problem));
    }
    if (auto persistent = root.find("persistent"); persistent != root.end()) {
        auto const per = persistent->is_object() ? persistent->find("workgroups_per_multiprocessor")
                                                 : persistent->end();
        if (!persistent->is_object() || per == persistent->end())
            return problem("/persistent", "must be {\"workgroups_per_multiprocessor\": N}, not " +
                                              persistent->dump());
        KILN_ASSIGN_OR_RETURN(
            std::uint64_t count,
            readCount(*per, "/persistent/workgroups_per_multiprocessor", problem));
        if (count == 0 || count > 1024)
            return problem("/persistent/workgroups_per_multiprocessor",
                           "must be between 1 and 1024, not " + per->dump());
        manifest.workgroupsPerMultiprocessor = static_cast<std::uint32_t>(count);
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
    if (cluster)
        root["cluster"] = {cluster->x, cluster->y, cluster->z};
    if (workgroupsPerMultiprocessor > 0)
        root["persistent"] = {{"workgroups_per_multiprocessor", workgroupsPerMultiprocessor}};
    json list = json::array();
    for (KernelParameter const& parameter : parameters) {
        json item = {{"name", parameter.name},
                     {"type", std::string(runtime::name(parameter.type))},
                     {"kind", std::string(runtime::name(parameter.kind))},
                     {"size", parameter.size},
                     {"offset", parameter.offset}};
        if (!parameter.workspaceBytes.empty())
            item["workspace"] = {{"bytes", parameter.workspaceBytes}, {"zeroed", true}};
        if (TensorMapShape const* map = parameter.tensorMap ? &*parameter.tensorMap : nullptr) {
            item["tensor_map"] = {
                {"tensor", parameter.tensor},
                {"box", std::vector<std::uint32_t>(map->box.begin(), map->box.begin() + map->rank)},
                {"swizzle", std::string(runtime::name(map->swizzle))}};
        }
        list.push_back(std::move(item));
    }
    root["parameters"] = std::move(list);
    return root.dump(2) + "\n";
}

std::size_t KernelManifest::parameterBytes() const {
    return parameters.empty() ? 0 : parameters.back().offset + parameters.back().size;
}

} // namespace kiln::runtime
