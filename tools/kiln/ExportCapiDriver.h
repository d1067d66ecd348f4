// ExportCapiDriver.h: the part of an exported C ABI (ExportCapi.h) that depends on the driver it
// launches through: the CUDA driver for NVIDIA targets (ExportCapiCuda.cpp), the HIP runtime for
// AMD ones (ExportCapiHip.cpp).
//
// ExportCapi.cpp writes everything else once, for both: the header's declarations and what each
// argument is, the embedded kernel, the size checks, the grid formula and NAME_launch, which
// ends in
//   return kiln_launch(stream, kiln_grid, PERSISTENT, kiln_arguments);
// A driver's launcher is C text placed after the kernel's constants (kiln_entry, kiln_target,
// kiln_block, kiln_shared_bytes, kiln_code and its own kernelFacts) and before NAME_launch. It
// defines:
//   static _Thread_local char kiln_message[1024];             what NAME_error() returns
//   static STATUS kiln_fail(STATUS code, const char* format, ...);  sets it, returns `code`
//   static STATUS kiln_launch(void* stream, const int64_t tiles[3], unsigned persistent,
//                             void** arguments);
// where STATUS is an int type (CUresult, hipError_t) and `arguments` holds one pointer per
// manifest parameter, in its order, to its value (a device pointer as `devicePointer`).
// kiln_launch checks the grid, loads the kernel where it runs, sizes a persistent grid (min(tiles,
// multiprocessors x `persistent`) along x; PersistentGrid.h) and enqueues the kernel.
#pragma once

#include "ExportCapi.h"

#include <string>

namespace kiln::cli {

/// What one driver contributes to NAME_capi.h and NAME_capi.c. The header's sentences are
/// written into its comment as they are (each continuation line starting " * ").
struct CapiDriver {
    // NAME_capi.h
    /// What the library needs at run time, after the build command: " * It needs ...\n".
    std::string needs;
    /// Where a launch runs, after "Enqueues ENTRY " and before " with (GRID) workgroups":
    /// "on `stream`, a CUstream, in ...,". Ending in "\n *" starts the grid on a line of its own.
    std::string where;
    /// The failures, after "otherwise " and before " A failure of the kernel itself...": "a
    /// CUresult, and NAME_error() says why: ...". Ending in "\n *" breaks the line there.
    std::string failures;
    /// What is loaded where, after "Thread-safe; ": "the kernel is loaded once into ...".
    std::string loaded;
    /// What the arguments need besides their types, after their list (" * ...\n"), or empty.
    std::string argumentsNote;

    // NAME_capi.c
    std::string through;       ///< "the CUDA driver": what NAME_launch launches through
    std::string invalidValue;  ///< the C name of the code of a refused argument
    std::string devicePointer; ///< the C type a device pointer is passed to the kernel as
    std::string code;          ///< the bytes kiln_code holds (a NUL follows them)
    std::string codeNote;      ///< what they are: "The PTX (...)"
    std::string kernelFacts;   ///< C after kiln_code: more constants of the kernel, or empty
    std::string launcher;      ///< the launcher (above)
    std::string helpers;       ///< C after the launcher that NAME_launch calls, or empty
    /// NAME_launch's statements before kiln_arguments, inside the block where kiln_grid is
    /// known: declarations, then what fills them (a TMA kernel's tensor maps), or empty.
    std::string declarations, preparations;
};

/// The CUDA driver's part for an NVIDIA kernel: the cubin or the PTX, the driver loaded with
/// dlopen, a module per context, a TMA kernel's tensor maps. A UserError for a tensor map the
/// launcher cannot encode (ExportInterface.h: tensorMaps).
CapiDriver cudaCapiDriver(lowering::EmittedKernel const& kernel, CapiOptions const& options);

/// The HIP runtime's part for an AMD kernel: its code object, the runtime loaded with dlopen, a
/// module per device, the arguments packed as the code object's metadata lays out its kernarg
/// segment. A UserError without a code object, or for a tensor map (an NVIDIA construct);
/// an InternalError where the code object's metadata and the manifest disagree.
CapiDriver hipCapiDriver(lowering::EmittedKernel const& kernel, CapiOptions const& options);

} // namespace kiln::cli
