// ArgumentCheck.cpp: launch arguments against manifests and loaded parameter layouts.
#include "kiln/runtime/ArgumentCheck.h"

namespace kiln::runtime {
namespace {

/// "a double", "an int32_t", "a uint32_t".
std::string withArticle(std::string const& noun) {
    bool const vowel =
        !noun.empty() && std::string_view("aeioAEIO").find(noun[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + noun;
}

std::string bytes(std::size_t count) {
    return std::to_string(count) + (count == 1 ? " byte" : " bytes");
}

/// How the launch's argument reads in a message.
std::string passes(ArgumentDescriptor const& argument) {
    if (argument.kind == ParameterKind::TensorMap)
        return "a tensor map (" + argument.tensorMap.toString() + ")";
    if (argument.kind == ParameterKind::Pointer) {
        return argument.cppType() + " (a pointer to " + std::string(name(argument.type)) + ")";
    }
    return withArticle(argument.cppType()) + " (" + bytes(argument.size) + ")";
}

/// How a manifest parameter reads in a message: "f32 (4 bytes)", "a pointer to f32".
std::string expects(KernelParameter const& parameter) {
    if (parameter.kind == ParameterKind::TensorMap && parameter.tensorMap)
        return "a tensor map of " + parameter.tensor + " (" + parameter.tensorMap->toString() + ")";
    if (parameter.kind == ParameterKind::Pointer) {
        return "a pointer to " + std::string(name(parameter.type));
    }
    return std::string(name(parameter.type)) + " (" + bytes(parameter.size) + ")";
}

std::string label(std::size_t index, KernelParameter const& parameter) {
    return "parameter " + std::to_string(index) + " '" + parameter.name + "'";
}

Error mismatch(std::string_view kernelName, std::string const& what) {
    return Error(ErrorCode::ArgumentMismatch, "kernel '" + std::string(kernelName) + "': " + what);
}

std::string count(std::size_t n, char const* noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// The offset of `argument` placed after `end` bytes (aligned to its alignment).
std::size_t placeAfter(std::size_t end, ArgumentDescriptor const& argument) {
    std::size_t const alignment = argument.alignment == 0 ? 1 : argument.alignment;
    return (end + alignment - 1) / alignment * alignment;
}

/// Whether the loaded code's `loaded` offset agrees with ours, `shift` being how far the driver
/// has moved parameters so far. The driver places a parameter aligned beyond 16 bytes (a tensor
/// map) at an address aligned in its constant bank, whose base is not (0x210 on sm_90): the
/// parameter sits less than its alignment past where the previous one ends in the loaded code
/// (`loadedEnd`), before or after our offset, and every later one moves with it.
bool agrees(std::size_t ours, std::size_t loaded, std::size_t alignment, std::size_t loadedEnd,
            std::int64_t& shift) {
    if (alignment <= 16)
        return static_cast<std::int64_t>(loaded) == static_cast<std::int64_t>(ours) + shift;
    if (loaded < loadedEnd || loaded - loadedEnd >= alignment)
        return false;
    shift = static_cast<std::int64_t>(loaded) - static_cast<std::int64_t>(ours);
    return true;
}

std::size_t alignmentOf(KernelParameter const& parameter) {
    switch (parameter.kind) {
    case ParameterKind::Pointer:
        return 8;
    case ParameterKind::TensorMap:
        return kTensorMapAlignment;
    case ParameterKind::Value:
        break;
    }
    return parameter.size;
}

} // namespace

std::string ArgumentDescriptor::cppType() const {
    if (kind == ParameterKind::TensorMap)
        return "TensorMap";
    if (kind == ParameterKind::Pointer)
        return "DevicePointer<" + std::string(cppName(type)) + ">";
    return std::string(cppName(type));
}

std::vector<std::size_t> argumentOffsets(std::span<ArgumentDescriptor const> arguments) {
    std::vector<std::size_t> offsets;
    offsets.reserve(arguments.size());
    std::size_t end = 0;
    for (ArgumentDescriptor const& argument : arguments) {
        offsets.push_back(placeAfter(end, argument));
        end = offsets.back() + argument.size;
    }
    return offsets;
}

Status checkArguments(std::string_view kernelName, KernelManifest const& manifest,
                      std::span<ArgumentDescriptor const> arguments) {
    if (arguments.size() != manifest.parameters.size()) {
        return mismatch(kernelName,
                        "the manifest has " + count(manifest.parameters.size(), "parameter") +
                            " but the launch passes " + count(arguments.size(), "argument"));
    }
    std::size_t end = 0; // where the launch's previous argument ends
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        KernelParameter const& parameter = manifest.parameters[i];
        ArgumentDescriptor const& argument = arguments[i];
        std::size_t const offset = placeAfter(end, argument);
        end = offset + argument.size;
        bool const sameMap = parameter.kind != ParameterKind::TensorMap ||
                             (parameter.tensorMap && *parameter.tensorMap == argument.tensorMap);
        if (parameter.kind != argument.kind || parameter.type != argument.type ||
            parameter.size != argument.size || !sameMap) {
            return mismatch(kernelName, label(i, parameter) + " is " + expects(parameter) +
                                            " but the launch passes " + passes(argument));
        }
        if (parameter.offset != offset) {
            return mismatch(kernelName, label(i, parameter) + " is at offset " +
                                            std::to_string(parameter.offset) +
                                            " in the manifest but the launch puts it at " +
                                            std::to_string(offset));
        }
    }
    return {};
}

Status checkArguments(std::string_view kernelName, std::span<ParameterLayout const> layout,
                      std::span<ArgumentDescriptor const> arguments) {
    if (arguments.size() != layout.size()) {
        return mismatch(kernelName, "the loaded code has " + count(layout.size(), "parameter") +
                                        " but the launch passes " +
                                        count(arguments.size(), "argument"));
    }
    std::size_t end = 0, loadedEnd = 0;
    std::int64_t shift = 0;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        std::size_t const offset = placeAfter(end, arguments[i]);
        end = offset + arguments[i].size;
        if (layout[i].size != arguments[i].size ||
            !agrees(offset, layout[i].offset, arguments[i].alignment, loadedEnd, shift)) {
            return mismatch(kernelName,
                            "parameter " + std::to_string(i) + " is " + bytes(layout[i].size) +
                                " at offset " + std::to_string(layout[i].offset) +
                                " in the loaded code but the launch passes " +
                                passes(arguments[i]) + " at offset " + std::to_string(offset));
        }
        loadedEnd = layout[i].offset + layout[i].size;
    }
    return {};
}

Status checkManifestLayout(std::string_view kernelName, KernelManifest const& manifest,
                           std::span<ParameterLayout const> layout) {
    if (manifest.parameters.size() != layout.size()) {
        return mismatch(kernelName,
                        "the manifest has " + count(manifest.parameters.size(), "parameter") +
                            " but the loaded code has " + count(layout.size(), "parameter"));
    }
    std::size_t loadedEnd = 0;
    std::int64_t shift = 0;
    for (std::size_t i = 0; i < layout.size(); ++i) {
        KernelParameter const& parameter = manifest.parameters[i];
        if (parameter.size != layout[i].size ||
            !agrees(parameter.offset, layout[i].offset, alignmentOf(parameter), loadedEnd, shift)) {
            return mismatch(kernelName, label(i, parameter) + " is " + bytes(parameter.size) +
                                            " at offset " + std::to_string(parameter.offset) +
                                            " in the manifest but " + bytes(layout[i].size) +
                                            " at offset " + std::to_string(layout[i].offset) +
                                            " in the loaded code");
        }
        loadedEnd = layout[i].offset + layout[i].size;
    }
    return {};
}

} // namespace kiln::runtime
