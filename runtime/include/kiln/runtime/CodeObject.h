// CodeObject.h: what an AMD code object (an AMDGPU ELF, the .hsaco the assembler writes) says
// about itself: the processor it is for and the kernels of its metadata note.
//
// A code object of version 3 or later carries, in an ELF note of owner "AMDGPU" and type
// NT_AMDGPU_METADATA (32), a MessagePack map listing each kernel with its kernarg layout
// (`.args`: `.name`, `.offset`, `.size`, `.value_kind`) and resources. The HIP platform reads it
// before loading code, so that a manifest which disagrees with the code is an ArgumentMismatch
// naming the parameter, as cuFuncGetParamInfo makes it on CUDA, and a code object for another
// processor is refused with both names. The reader checks every offset and length: a damaged
// file is an error saying what is wrong, never a crash.
#pragma once

#include "kiln/runtime/KernelAttributes.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// One entry of a kernel's `.args` in the metadata note.
struct CodeObjectArgument {
    std::string name;         ///< `.name`, empty when the note has none
    std::size_t offset = 0;   ///< `.offset` in the kernarg segment
    std::size_t size = 0;     ///< `.size` in bytes
    std::string valueKind;    ///< `.value_kind`: by_value, global_buffer, hidden_..., ...
    std::string addressSpace; ///< `.address_space` of a pointer (global, constant, ...), or empty

    /// Whether the runtime fills it (a `hidden_*` value kind) rather than the launch.
    bool hidden() const;
};

/// One kernel of the metadata note.
struct CodeObjectKernel {
    std::string name;   ///< `.name`
    std::string symbol; ///< `.symbol`, the kernel descriptor: "kiln_axpy.kd"
    std::size_t kernargSegmentSize = 0;
    std::size_t groupSegmentFixedSize = 0;   ///< static LDS bytes
    std::size_t privateSegmentFixedSize = 0; ///< scratch bytes per workitem
    int wavefrontSize = 0;
    int sgprCount = 0;
    int vgprCount = 0;
    int maxFlatWorkgroupSize = 0;
    std::vector<CodeObjectArgument> arguments; ///< in kernarg order, hidden ones included

    /// The arguments a launch passes (hidden ones left out), in order.
    std::vector<CodeObjectArgument> explicitArguments() const;
    /// Offsets and sizes of the explicit arguments, as KernelBackend::parameterLayout gives them.
    std::vector<ParameterLayout> parameterLayout() const;
    /// Bytes of the explicit arguments: the end of the last one.
    std::size_t explicitArgumentBytes() const;
};

/// The parts of a code object the launcher uses.
struct CodeObjectInfo {
    std::uint32_t machine = 0; ///< EF_AMDGPU_MACH of the ELF header's e_flags
    std::string targetId;      ///< `amdhsa.target` ("amdgcn-amd-amdhsa--gfx942:sramecc+"), or empty
    /// The processor: from `amdhsa.target`, else from the machine ("gfx942"); empty when neither
    /// names one Kiln knows.
    std::string processor;
    std::vector<int> metadataVersion; ///< `amdhsa.version`, e.g. {1, 1}
    std::vector<CodeObjectKernel> kernels;

    /// The kernel named `name`, or null.
    CodeObjectKernel const* kernel(std::string_view name) const;
    /// The kernels' names, in order, joined by ", ".
    std::string kernelNames() const;
};

/// Reads the ELF header and the AMDGPU metadata note of `image`; `origin` ("code object file
/// 'k.hsaco'") starts error messages. InvalidArgument when it is not a 64-bit little-endian
/// AMDGPU ELF, has no metadata note (code object version 2 and older keep YAML in another note,
/// which HIP no longer loads) or the note is malformed.
Expected<CodeObjectInfo> readCodeObject(std::string_view image, std::string_view origin);

/// The processor name of an EF_AMDGPU_MACH value ("gfx90a" for 0x3f), or empty when Kiln does not
/// know it.
std::string_view amdgpuProcessor(std::uint32_t machine);

/// Checks a manifest against the kernel's metadata: the parameter count, and for each
/// parameter its offset, size and kind (a manifest pointer is a global_buffer, a value is
/// by_value). ArgumentMismatch naming the kernel and the parameter by index and name.
Status checkManifestAgainstCodeObject(KernelManifest const& manifest,
                                      CodeObjectKernel const& kernel);

} // namespace kiln::runtime
