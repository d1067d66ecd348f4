// CodeObject.cpp: the ELF header, the notes and the AMDGPU metadata of AMD code objects.
#include "kiln/runtime/CodeObject.h"

#include "MsgPack.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

namespace kiln::runtime {
namespace {

static_assert(std::endian::native == std::endian::little,
              "AMD code objects are little-endian; this reader reads them on little-endian hosts");

// ELF64 (System V gABI) and AMDGPU (LLVM AMDGPUUsage) constants.
constexpr std::size_t kElfHeaderBytes = 64;
constexpr unsigned char kElfClass64 = 2;      // EI_CLASS: ELFCLASS64
constexpr unsigned char kElfDataLittle = 1;   // EI_DATA: ELFDATA2LSB
constexpr std::uint16_t kMachineAmdgpu = 224; // e_machine: EM_AMDGPU
constexpr std::uint32_t kMachMask = 0xff;     // e_flags: EF_AMDGPU_MACH
constexpr std::uint32_t kSectionNote = 7;     // sh_type: SHT_NOTE
constexpr std::uint32_t kSegmentNote = 4;     // p_type: PT_NOTE
constexpr std::size_t kSectionHeaderBytes = 64;
constexpr std::size_t kProgramHeaderBytes = 56;
constexpr std::uint32_t kNoteAmdgpuMetadata = 32; // NT_AMDGPU_METADATA, owner "AMDGPU"
constexpr std::uint32_t kNoteAmdHsaMetadata = 10; // NT_AMD_HSA_METADATA (v2, YAML), owner "AMD"

template <class T>
T read(std::string_view bytes, std::size_t at) {
    T value{};
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    return value;
}

/// Whether [offset, offset + size) lies inside `total` bytes, without overflowing.
bool inside(std::uint64_t offset, std::uint64_t size, std::size_t total) {
    return offset <= total && size <= total - offset;
}

std::uint64_t alignUp(std::uint64_t value, std::uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

/// One note of an ELF: its owner, type and descriptor bytes.
struct Note {
    std::string_view owner; ///< without its terminating NUL
    std::uint32_t type = 0;
    std::string_view descriptor;
};

/// The notes in `bytes` (one SHT_NOTE section or PT_NOTE segment), each padded to `alignment`.
Expected<std::vector<Note>> readNotes(std::string_view bytes, std::uint64_t alignment,
                                      std::string const& where) {
    std::vector<Note> notes;
    std::size_t at = 0;
    while (at < bytes.size()) {
        if (bytes.size() - at < 12) {
            return Error(ErrorCode::InvalidArgument, where + ": a note at byte " +
                                                         std::to_string(at) +
                                                         " is cut short (12 header bytes needed)");
        }
        auto const nameSize = read<std::uint32_t>(bytes, at);
        auto const descriptorSize = read<std::uint32_t>(bytes, at + 4);
        Note note;
        note.type = read<std::uint32_t>(bytes, at + 8);
        std::uint64_t const nameAt = at + 12;
        std::uint64_t const descriptorAt = nameAt + alignUp(nameSize, alignment);
        if (!inside(nameAt, nameSize, bytes.size()) ||
            !inside(descriptorAt, descriptorSize, bytes.size())) {
            return Error(ErrorCode::InvalidArgument,
                         where + ": the note at byte " + std::to_string(at) + " claims a " +
                             std::to_string(nameSize) + "-byte name and a " +
                             std::to_string(descriptorSize) + "-byte descriptor, past its end");
        }
        note.owner = bytes.substr(nameAt, nameSize);
        if (!note.owner.empty() && note.owner.back() == '\0')
            note.owner.remove_suffix(1);
        note.descriptor = bytes.substr(descriptorAt, descriptorSize);
        notes.push_back(note);
        at = static_cast<std::size_t>(std::min<std::uint64_t>(
            alignUp(descriptorAt + descriptorSize, alignment), bytes.size()));
    }
    return notes;
}

/// Every note of the ELF: from its SHT_NOTE sections, or its PT_NOTE segments when it has no
/// section headers.
Expected<std::vector<Note>> elfNotes(std::string_view image, std::string const& origin) {
    std::vector<Note> notes;
    auto const sectionTable = read<std::uint64_t>(image, 40);
    auto const sectionEntry = read<std::uint16_t>(image, 58);
    auto const sectionCount = read<std::uint16_t>(image, 60);
    bool const useSections = sectionCount > 0;
    std::uint64_t const table = useSections ? sectionTable : read<std::uint64_t>(image, 32);
    std::uint16_t const entry = useSections ? sectionEntry : read<std::uint16_t>(image, 54);
    std::uint16_t const count = useSections ? sectionCount : read<std::uint16_t>(image, 56);
    std::size_t const expectedEntry = useSections ? kSectionHeaderBytes : kProgramHeaderBytes;
    char const* const what = useSections ? "section" : "program";
    if (count == 0)
        return notes;
    if (entry != expectedEntry || !inside(table, std::uint64_t{entry} * count, image.size())) {
        return Error(ErrorCode::InvalidArgument,
                     origin + ": its " + what + " header table (" + std::to_string(count) +
                         " entries of " + std::to_string(entry) + " bytes at byte " +
                         std::to_string(table) + ") does not fit in its " +
                         std::to_string(image.size()) + " bytes");
    }
    for (std::uint16_t i = 0; i < count; ++i) {
        std::size_t const header = static_cast<std::size_t>(table) + std::size_t{i} * entry;
        std::uint32_t type = 0;
        std::uint64_t offset = 0;
        std::uint64_t size = 0;
        std::uint64_t alignment = 0;
        if (useSections) {
            type = read<std::uint32_t>(image, header + 4);
            offset = read<std::uint64_t>(image, header + 24);
            size = read<std::uint64_t>(image, header + 32);
            alignment = read<std::uint64_t>(image, header + 48);
        } else {
            type = read<std::uint32_t>(image, header);
            offset = read<std::uint64_t>(image, header + 8);
            size = read<std::uint64_t>(image, header + 32);
            alignment = read<std::uint64_t>(image, header + 48);
        }
        if (type != (useSections ? kSectionNote : kSegmentNote))
            continue;
        std::string const where = origin + ": note " + what + " " + std::to_string(i);
        if (!inside(offset, size, image.size())) {
            return Error(ErrorCode::InvalidArgument,
                         where + " (" + std::to_string(size) + " bytes at byte " +
                             std::to_string(offset) + ") does not fit in the file's " +
                             std::to_string(image.size()) + " bytes");
        }
        // Notes are padded to 4 bytes, or 8 where the section says so (as LLVM reads them).
        KILN_ASSIGN_OR_RETURN(std::vector<Note> found,
                              readNotes(image.substr(static_cast<std::size_t>(offset),
                                                     static_cast<std::size_t>(size)),
                                        alignment == 8 ? 8 : 4, where));
        notes.insert(notes.end(), found.begin(), found.end());
    }
    return notes;
}

/// Reads the fields of the metadata map into `info`.
class MetadataReader {
public:
    explicit MetadataReader(std::string where)
        : where_(std::move(where)) {}

    Status read(amd::MsgPackValue const& root, CodeObjectInfo& info) const {
        if (root.kind != amd::MsgPackValue::Kind::Map)
            return fail("", "is " + std::string(root.kindName()) + ", not a map");
        if (amd::MsgPackValue const* version = root.find("amdhsa.version")) {
            if (version->kind != amd::MsgPackValue::Kind::Array)
                return fail("amdhsa.version", "is not an array");
            for (amd::MsgPackValue const& part : version->items) {
                std::optional<std::uint64_t> const n = part.asUnsigned();
                if (!n)
                    return fail("amdhsa.version", "holds " + std::string(part.kindName()));
                info.metadataVersion.push_back(static_cast<int>(*n));
            }
        }
        if (amd::MsgPackValue const* target = root.find("amdhsa.target")) {
            std::optional<std::string> text = target->asString();
            if (!text)
                return fail("amdhsa.target", "is " + std::string(target->kindName()));
            info.targetId = std::move(*text);
        }
        amd::MsgPackValue const* kernels = root.find("amdhsa.kernels");
        if (!kernels)
            return fail("", "has no amdhsa.kernels");
        if (kernels->kind != amd::MsgPackValue::Kind::Array)
            return fail("amdhsa.kernels", "is " + std::string(kernels->kindName()));
        for (std::size_t k = 0; k < kernels->items.size(); ++k) {
            CodeObjectKernel kernel;
            KILN_RETURN_IF_ERROR(readKernel(kernels->items[k], k, kernel));
            info.kernels.push_back(std::move(kernel));
        }
        return {};
    }

private:
    std::string where_;

    Error fail(std::string const& path, std::string const& what) const {
        return Error(ErrorCode::InvalidArgument,
                     where_ + (path.empty() ? "" : " " + path) + " " + what);
    }

    Status text(amd::MsgPackValue const& map, char const* key, std::string const& path,
                std::string& out, bool required) const {
        amd::MsgPackValue const* value = map.find(key);
        if (!value)
            return required ? Status(fail(path, "has no " + std::string(key))) : Status();
        std::optional<std::string> found = value->asString();
        if (!found) {
            return fail(path + " " + key,
                        "is " + std::string(value->kindName()) + ", not a string");
        }
        out = std::move(*found);
        return {};
    }

    template <class T>
    Status number(amd::MsgPackValue const& map, char const* key, std::string const& path, T& out,
                  bool required) const {
        amd::MsgPackValue const* value = map.find(key);
        if (!value)
            return required ? Status(fail(path, "has no " + std::string(key))) : Status();
        std::optional<std::uint64_t> const found = value->asUnsigned();
        if (!found || *found > std::uint64_t{1} << 40) {
            return fail(path + " " + key, "is " + std::string(value->kindName()) +
                                              ", not a size (a non-negative integer)");
        }
        out = static_cast<T>(*found);
        return {};
    }

    Status readKernel(amd::MsgPackValue const& map, std::size_t index,
                      CodeObjectKernel& kernel) const {
        std::string path = "amdhsa.kernels[" + std::to_string(index) + "]";
        if (map.kind != amd::MsgPackValue::Kind::Map)
            return fail(path, "is " + std::string(map.kindName()) + ", not a map");
        KILN_RETURN_IF_ERROR(text(map, ".name", path, kernel.name, true));
        path += " '" + kernel.name + "'";
        KILN_RETURN_IF_ERROR(text(map, ".symbol", path, kernel.symbol, false));
        KILN_RETURN_IF_ERROR(
            number(map, ".kernarg_segment_size", path, kernel.kernargSegmentSize, false));
        KILN_RETURN_IF_ERROR(
            number(map, ".group_segment_fixed_size", path, kernel.groupSegmentFixedSize, false));
        KILN_RETURN_IF_ERROR(number(map, ".private_segment_fixed_size", path,
                                    kernel.privateSegmentFixedSize, false));
        KILN_RETURN_IF_ERROR(number(map, ".wavefront_size", path, kernel.wavefrontSize, false));
        KILN_RETURN_IF_ERROR(number(map, ".sgpr_count", path, kernel.sgprCount, false));
        KILN_RETURN_IF_ERROR(number(map, ".vgpr_count", path, kernel.vgprCount, false));
        KILN_RETURN_IF_ERROR(
            number(map, ".max_flat_workgroup_size", path, kernel.maxFlatWorkgroupSize, false));
        amd::MsgPackValue const* arguments = map.find(".args");
        if (!arguments)
            return {}; // a kernel without parameters
        if (arguments->kind != amd::MsgPackValue::Kind::Array)
            return fail(path + " .args", "is " + std::string(arguments->kindName()));
        for (std::size_t a = 0; a < arguments->items.size(); ++a) {
            amd::MsgPackValue const& entry = arguments->items[a];
            std::string const at = path + " .args[" + std::to_string(a) + "]";
            if (entry.kind != amd::MsgPackValue::Kind::Map)
                return fail(at, "is " + std::string(entry.kindName()) + ", not a map");
            CodeObjectArgument argument;
            KILN_RETURN_IF_ERROR(text(entry, ".name", at, argument.name, false));
            KILN_RETURN_IF_ERROR(number(entry, ".offset", at, argument.offset, true));
            KILN_RETURN_IF_ERROR(number(entry, ".size", at, argument.size, true));
            KILN_RETURN_IF_ERROR(text(entry, ".value_kind", at, argument.valueKind, true));
            KILN_RETURN_IF_ERROR(text(entry, ".address_space", at, argument.addressSpace, false));
            kernel.arguments.push_back(std::move(argument));
        }
        return {};
    }
};

/// "gfx942" from "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-".
std::string processorOfTargetId(std::string_view targetId) {
    std::size_t const dashes = targetId.rfind("--");
    if (dashes == std::string_view::npos)
        return {};
    std::string_view processor = targetId.substr(dashes + 2);
    return std::string(processor.substr(0, processor.find(':')));
}

std::string count(std::size_t n, char const* noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string bytes(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

} // namespace

bool CodeObjectArgument::hidden() const {
    return valueKind.starts_with("hidden_");
}

std::vector<CodeObjectArgument> CodeObjectKernel::explicitArguments() const {
    std::vector<CodeObjectArgument> out;
    for (CodeObjectArgument const& argument : arguments) {
        if (!argument.hidden())
            out.push_back(argument);
    }
    return out;
}

std::vector<ParameterLayout> CodeObjectKernel::parameterLayout() const {
    std::vector<ParameterLayout> layout;
    for (CodeObjectArgument const& argument : arguments) {
        if (!argument.hidden())
            layout.push_back({argument.offset, argument.size});
    }
    return layout;
}

std::size_t CodeObjectKernel::explicitArgumentBytes() const {
    std::size_t end = 0;
    for (CodeObjectArgument const& argument : arguments) {
        if (!argument.hidden())
            end = std::max(end, argument.offset + argument.size);
    }
    return end;
}

CodeObjectKernel const* CodeObjectInfo::kernel(std::string_view name) const {
    for (CodeObjectKernel const& k : kernels) {
        if (k.name == name)
            return &k;
    }
    return nullptr;
}

std::string CodeObjectInfo::kernelNames() const {
    std::string names;
    for (CodeObjectKernel const& k : kernels)
        names += (names.empty() ? "" : ", ") + k.name;
    return names;
}

std::string_view amdgpuProcessor(std::uint32_t machine) {
    // EF_AMDGPU_MACH_AMDGCN_* of llvm/BinaryFormat/ELF.h (LLVM 16; gfx942 and gfx950 from
    // LLVM 18+ and ROCm's amd_hsa_elf.h), for the processors of CDNA and RDNA.
    switch (machine) {
    case 0x02c:
        return "gfx900";
    case 0x02f:
        return "gfx906";
    case 0x030:
        return "gfx908";
    case 0x03f:
        return "gfx90a";
    case 0x040:
        return "gfx940";
    case 0x04c:
        return "gfx942";
    case 0x04f:
        return "gfx950";
    case 0x036:
        return "gfx1030";
    case 0x041:
        return "gfx1100";
    case 0x046:
        return "gfx1101";
    case 0x047:
        return "gfx1102";
    default:
        return {};
    }
}

Expected<CodeObjectInfo> readCodeObject(std::string_view image, std::string_view origin) {
    std::string const from(origin);
    if (image.size() < kElfHeaderBytes) {
        return Error(ErrorCode::InvalidArgument,
                     from + " is " + bytes(image.size()) +
                         " long, too short for an ELF header (64 bytes): not a code object");
    }
    if (image.substr(0, 4) != "\x7f"
                              "ELF") {
        return Error(ErrorCode::InvalidArgument,
                     from + " is not an ELF file (it does not start with 0x7f 'ELF'): an AMD "
                            "code object is the ELF an AMDGPU assembler or linker writes");
    }
    if (image[4] != kElfClass64 || image[5] != kElfDataLittle) {
        return Error(ErrorCode::InvalidArgument,
                     from + " is not a 64-bit little-endian ELF, as AMD code objects are");
    }
    if (auto const machine = read<std::uint16_t>(image, 18); machine != kMachineAmdgpu) {
        return Error(ErrorCode::InvalidArgument, from + " is an ELF for machine " +
                                                     std::to_string(machine) +
                                                     ", not an AMDGPU code object (e_machine " +
                                                     std::to_string(kMachineAmdgpu) + ")");
    }
    CodeObjectInfo info;
    info.machine = read<std::uint32_t>(image, 48) & kMachMask;

    KILN_ASSIGN_OR_RETURN(std::vector<Note> notes, elfNotes(image, from));
    Note const* metadata = nullptr;
    bool oldMetadata = false;
    for (Note const& note : notes) {
        if (note.owner == "AMDGPU" && note.type == kNoteAmdgpuMetadata)
            metadata = &note;
        oldMetadata = oldMetadata || (note.owner == "AMD" && note.type == kNoteAmdHsaMetadata);
    }
    if (!metadata) {
        return Error(ErrorCode::InvalidArgument,
                     from +
                         " has no AMDGPU metadata note (owner \"AMDGPU\", type "
                         "NT_AMDGPU_METADATA)" +
                         (oldMetadata ? ": it is a code object of version 2, whose YAML "
                                        "metadata HIP no longer loads; assemble it for code "
                                        "object version 4 or 5"
                                      : ""));
    }
    std::string const where = from + ": the AMDGPU metadata note";
    Expected<amd::MsgPackValue> root = amd::decodeMsgPack(metadata->descriptor);
    if (!root.ok())
        return root.error().withContext(where);
    KILN_RETURN_IF_ERROR(MetadataReader(where).read(*root, info));
    info.processor = processorOfTargetId(info.targetId);
    if (info.processor.empty())
        info.processor = std::string(amdgpuProcessor(info.machine));
    return info;
}

Status checkManifestAgainstCodeObject(KernelManifest const& manifest,
                                      CodeObjectKernel const& kernel) {
    std::vector<CodeObjectArgument> const arguments = kernel.explicitArguments();
    auto mismatch = [&](std::string const& what) {
        return Error(ErrorCode::ArgumentMismatch, "kernel '" + kernel.name + "': " + what);
    };
    if (manifest.parameters.size() != arguments.size()) {
        return mismatch("the manifest has " + count(manifest.parameters.size(), "parameter") +
                        " but the code object's metadata has " +
                        count(arguments.size(), "argument"));
    }
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        KernelParameter const& parameter = manifest.parameters[i];
        CodeObjectArgument const& argument = arguments[i];
        std::string const label = "parameter " + std::to_string(i) + " '" + parameter.name + "'";
        std::string const named = argument.name.empty() || argument.name == parameter.name
                                      ? std::string()
                                      : " (where it is named '" + argument.name + "')";
        char const* const expectedKind =
            parameter.kind == ParameterKind::Pointer ? "global_buffer" : "by_value";
        if (argument.valueKind != expectedKind) {
            return mismatch(label + " is a " + std::string(name(parameter.kind)) +
                            " in the manifest but " + argument.valueKind +
                            " in the code object's metadata" + named);
        }
        if (argument.size != parameter.size || argument.offset != parameter.offset) {
            return mismatch(label + " is " + bytes(parameter.size) + " at offset " +
                            std::to_string(parameter.offset) + " in the manifest but " +
                            bytes(argument.size) + " at offset " + std::to_string(argument.offset) +
                            " in the code object's metadata" + named);
        }
    }
    return {};
}

} // namespace kiln::runtime
