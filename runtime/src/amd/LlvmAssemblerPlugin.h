// LlvmAssemblerPlugin.h: the C ABI between kiln::runtime and its LLVM MC + lld assembler plugin.
//
// LLVM and lld have no C API for assembling and linking AMDGCN, and linking libLLVM into every
// Kiln program costs each process ~35 ms at start (relocations, LLVM's static constructors),
// needed only by AMD targets. So the LLVM assembler (LlvmAssembler.cpp) is a module of its own,
// kiln_llvm_assembler, that kiln::runtime dlopens when an AMD assembly is first asked for
// (LlvmAssemblerLoader.cpp). The two sides share nothing but this header: plain C types and
// functions, reached through one exported entry point that returns a table whose first field is
// its ABI version. A change to the table's layout or to any function's contract raises
// kKilnLlvmAssemblerAbiVersion, so a plugin from another build is refused, not called.
#pragma once

#include <cstddef>
#include <cstdint>

/// The ABI version this header describes.
inline constexpr std::uint32_t kKilnLlvmAssemblerAbiVersion = 1;

/// The name of the exported entry point, of type KilnLlvmAssemblerEntry.
inline constexpr char const* kKilnLlvmAssemblerEntryName = "kiln_llvm_assembler_entry";

extern "C" {

/// What KilnLlvmAssembler::assemble returns.
enum KilnLlvmAssemblerStatus : int {
    kKilnLlvmAssemblerOk = 0,          ///< *output holds the code object
    kKilnLlvmAssemblerUnsupported = 1, ///< the target is unknown; *output holds why
    kKilnLlvmAssemblerFailed = 2,      ///< assembling or linking failed; *output holds the log
    kKilnLlvmAssemblerNoTemporary = 3, ///< the link's temporary files failed; *output says which
    kKilnLlvmAssemblerInternal = 4,    ///< an exception inside the plugin; *output holds its text
};

/// The plugin's functions. Every function may be called from any thread.
struct KilnLlvmAssembler {
    /// kKilnLlvmAssemblerAbiVersion of the build that made the plugin; read before anything else.
    std::uint32_t abiVersion;
    /// A description with versions, e.g. "LLVM 16.0.6 MC + lld"; static storage.
    char const* (*version)();
    /// Nonzero when it can assemble for `target` ("gfx90a").
    int (*supports)(char const* target);
    /// Assembles `source` (`sourceSize` bytes) for `target`; `origin` names the source in
    /// diagnostics. Sets *output to a malloc'ed buffer of *outputSize bytes, released with
    /// release(): the code object on kKilnLlvmAssemblerOk, else the message (no terminating 0).
    int (*assemble)(char const* source, std::size_t sourceSize, char const* target,
                    char const* origin, char** output, std::size_t* outputSize);
    /// Frees a buffer that assemble() returned.
    void (*release)(char* buffer);
};

/// The entry point: the plugin's table, of static storage.
using KilnLlvmAssemblerEntry = KilnLlvmAssembler const* (*)();

} // extern "C"
