// Assembler.h: AMDGCN assembly text to a loadable code object, in memory.
//
// Kiln writes AMDGCN assembly itself (lowering/amdgcn); an Assembler turns it into an HSA code
// object (an AMDGPU ELF shared object) that HIP's hipModuleLoadData accepts. Two
// implementations sit behind this interface: AMD Comgr (the library HIP itself uses; it
// assembles and links in memory, for the targets its LLVM knows: Debian's Comgr 5.2 knows
// gfx90a but not gfx942 or gfx1100), and LLVM 16's MC layer plus lld. Neither is linked into
// Kiln's programs, whose every start would pay ~35 ms to load libLLVM: each is dlopen'ed when an
// assembler is first made, Comgr from libamd_comgr.so.2, LLVM from Kiln's plugin module
// kiln_llvm_assembler (built with Kiln when LLVM 16 and lld are found; docs/runtime.md says
// where it is looked for). A failure is a JitFailed error whose message holds the assembler's
// whole diagnostic log (file:line:col, the offending line and a caret), never a truncated one.
#pragma once

#include "kiln/runtime/Status.h"

#include <memory>
#include <string>
#include <string_view>

namespace kiln::runtime {

/// Names the LLVM MC assembler plugin to load instead of the one the build made or installed.
inline constexpr char const* kLlvmAssemblerVariable = "KILN_LLVM_ASSEMBLER";
/// Names the Comgr library to load instead of libamd_comgr.so.2 (or libamd_comgr.so).
inline constexpr char const* kComgrLibraryVariable = "KILN_COMGR_LIBRARY";

class Assembler {
public:
    virtual ~Assembler() = default;
    /// "comgr" or "llvm".
    virtual std::string_view name() const = 0;
    /// A description with versions, e.g. "LLVM 16.0.6 MC + lld".
    virtual std::string version() const = 0;
    /// Whether it can assemble for `target` ("gfx90a").
    virtual bool supports(std::string_view target) const = 0;
    /// The code object for `source`, assembled for `target`; `origin` names the source in
    /// diagnostics ("kiln_axpy.s").
    virtual Expected<std::string> assemble(std::string_view source, std::string_view target,
                                           std::string_view origin = "kernel.s") const = 0;
};

/// The assembler "comgr" or "llvm", its library loaded; an error saying why when this build or
/// this machine does not have it (NoDriver: no Comgr library; Unsupported or NotFound: no usable
/// LLVM plugin, saying where it was looked for).
Expected<std::unique_ptr<Assembler>> makeAssembler(std::string_view name);

/// The first assembler that loads and supports `target` (Comgr, then LLVM); Unsupported naming
/// every assembler and what it lacks when none does.
Expected<std::unique_ptr<Assembler>> assemblerFor(std::string_view target);

} // namespace kiln::runtime
