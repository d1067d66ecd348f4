// KernelLoaderSpec.h: where a kernel's code is and in what form (PTX, cubin or AMD code object;
// memory or disk).
//
// After StreamExecutor's MultiKernelLoaderSpec: the caller says where the code is, the device
// loads it. A spec can carry the kernel's manifest, against which the loaded kernel and typed
// launches are checked. Code on disk is read when the device loads it, so a missing file is a
// NotFound error naming the path at that point.
#pragma once

#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// The form of device code.
enum class CodeFormat : std::uint8_t {
    Ptx,        ///< PTX text, compiled by the driver's JIT at load (CUDA)
    Cubin,      ///< an NVIDIA ELF (or fatbin), loaded as is (CUDA)
    CodeObject, ///< an AMD code object (AMDGPU ELF, .hsaco), loaded as is (HIP)
};

/// "PTX", "cubin" or "code object".
std::string_view name(CodeFormat format);

/// The code of one kernel: format, location, entry name and (optionally) its manifest.
class KernelLoaderSpec {
public:
    /// PTX text held in memory.
    static KernelLoaderSpec ptxInMemory(std::string ptx, std::string kernelName);
    /// A PTX file, read at load.
    static KernelLoaderSpec ptxOnDisk(std::string path, std::string kernelName);
    /// A cubin image held in memory.
    static KernelLoaderSpec cubinInMemory(std::string image, std::string kernelName);
    /// A cubin file, read at load.
    static KernelLoaderSpec cubinOnDisk(std::string path, std::string kernelName);
    /// An AMD code object held in memory (what runtime::Assembler::assemble returns).
    static KernelLoaderSpec codeObjectInMemory(std::string image, std::string kernelName);
    /// An AMD code object file (`kiln emit --target gfx942` writes ENTRY.hsaco), read at load.
    static KernelLoaderSpec codeObjectOnDisk(std::string path, std::string kernelName);

    /// This spec with a manifest to check the kernel and its launches against.
    KernelLoaderSpec withManifest(KernelManifest manifest) const;

    /// The code format.
    CodeFormat format() const { return format_; }
    /// The kernel's entry name.
    std::string const& kernelName() const { return kernelName_; }
    /// The file the code is read from, or empty for code in memory.
    std::string const& path() const { return path_; }
    /// The manifest, when one was given.
    std::optional<KernelManifest> const& manifest() const { return manifest_; }
    /// "PTX in memory", "cubin file 'k.cubin'" or "code object file 'k.hsaco'", for messages.
    std::string describe() const;

    /// The code bytes: the in-memory text, or the file's contents (NotFound naming the file).
    Expected<std::string> image() const;

private:
    KernelLoaderSpec(CodeFormat format, std::string code, std::string path, std::string name);

    CodeFormat format_;
    std::string code_;
    std::string path_;
    std::string kernelName_;
    std::optional<KernelManifest> manifest_;
};

/// The target of PTX text (its `.target` directive, e.g. "sm_80"), or empty.
std::string ptxTarget(std::string_view ptx);
/// The names of the `.entry` functions in PTX text, in order.
std::vector<std::string> ptxEntries(std::string_view ptx);

} // namespace kiln::runtime
