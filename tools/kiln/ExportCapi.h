// ExportCapi.h: the C ABI `kiln export` writes beside the C++ header, for any language.
//
// NAME_capi.h declares, and NAME_capi.c defines, one C function that launches the kernel:
//
//   int NAME_launch(void* stream, <one argument per manifest parameter, in its order>);
//   const char* NAME_error(void);
//
// A tensor is a device pointer (`const void*` when the Command only reads it), a size or a
// scalar its integer or floating-point type (an f16 or bf16 scalar its 16 bits as uint16_t).
// The launch computes the grid from the sizes (ExportInterface.h: the formula the C++ header
// computes too) and returns 0 or the driver's error code, NAME_error() saying why. The source is
// C11 and needs only libc: it embeds the kernel and loads its target's driver with dlopen when
// first called, so a library built from it loads on a machine without a GPU and links without
// the vendor's toolkit. For an NVIDIA target that is the CUDA driver (libcuda.so.1, or
// $KILN_CUDA_DRIVER) and the cubin, or the PTX where no ptxas ran; for an AMD target the HIP
// runtime (libamdhip64.so, or $KILN_HIP_RUNTIME) and the code object, its arguments packed as
// the code object's metadata lays out the kernarg segment. Both are one generator over a small
// per-driver part (ExportCapiDriver.h), so the signature, the size checks and the grid are the
// same. The arguments are the Command's, not the kernel's: a kernel that takes tensor maps
// builds them in NAME_launch from the same pointers and sizes. C rather than C++: any C compiler
// builds it, and the library needs no C++ runtime in the process that loads it (Python, Julia,
// Rust).
#pragma once

#include "kiln/lowering/Codegen.h"

#include <map>
#include <string>

namespace kiln::cli {

/// How the Command uses one of its tensors, for the C ABI's declarations.
struct CapiTensor {
    std::string layout;   ///< its shape and layout in words ("[M, K], row-major"); may be empty
    bool written = false; ///< stored to by the Command (a `void*`), else only read (`const void*`)
};

/// What the C ABI says besides the kernel itself.
struct CapiOptions {
    std::string name;   ///< the functions' prefix: NAME_launch, NAME_error (a C identifier)
    std::string origin; ///< where the schedule point came from, for the comments
    std::string checked = "unchecked"; ///< how its result was checked (HeaderOptions::checked)
    /// The cubin ptxas made of the kernel's PTX, embedded instead of the PTX; null: the PTX,
    /// which the driver compiles when the kernel is first launched.
    std::string const* cubin = nullptr;
    /// An AMD kernel's code object, which its C ABI embeds and whose metadata lays out its
    /// arguments; required for an AMD target.
    std::string const* codeObject = nullptr;
    /// The Command's tensors by name; a tensor not here is declared `void*`.
    std::map<std::string, CapiTensor> tensors;
};

/// NAME_capi.h: the declarations of NAME_launch and NAME_error, with what each argument is. A
/// UserError for a name that is no C identifier, a parameter called `stream`, or an AMD kernel
/// without its code object.
std::string generateCapiHeader(lowering::EmittedKernel const& kernel, CapiOptions const& options);

/// NAME_capi.c: the kernel's code and the launcher over its target's driver (the CUDA driver,
/// the HIP runtime); includes NAME_capi.h.
std::string generateCapiSource(lowering::EmittedKernel const& kernel, CapiOptions const& options);

} // namespace kiln::cli
