// ExportHeader.h: the C++ header `kiln export` writes for an application.
//
// The header embeds the kernel's code (the PTX, or an AMD target's code object) and its
// manifest (with how the kernel was checked before export, which its comment says too: a
// kernel no check ran on says so), and declares in namespace kiln_export::NAME a typed kernel,
// load(), a struct of the problem sizes, grid(sizes) and launch(stream, kernel, sizes, tensors and
// scalars...).
//
// Sizes are passed by name, in one order (the manifest's), to both grid() and launch():
//   kiln_export::gemm::launch(stream, kernel, {.M = 4096, .K = 512, .N = 1024}, A, B, D);
// A Sizes given by position ({4096, 512, 1024}), with a size left out, with a size that is not
// an integer, or with designators out of order (gcc refuses them; clang warns and still assigns
// by name) does not compile, so two sizes cannot be swapped silently. tests/golden/export/ holds
// a header as generated; tests/cli/export-sizes.sh compiles the calls that must be refused.
#pragma once

#include "kiln/lowering/Codegen.h"

#include <string>

namespace kiln::cli {

/// What the header says besides the kernel itself.
struct HeaderOptions {
    std::string name;   ///< the C++ namespace kiln_export::NAME (a C++ identifier)
    std::string origin; ///< where the schedule point came from, for the header's comment
    /// How its result was checked before export (CheckProvenance.h's words, or "unchecked
    /// (...)" where no sweep ran): in the manifest as "checked" and in the header's comment.
    std::string checked = "unchecked";
    /// An AMD target's code object, embedded as bytes; null for PTX (embedded as text).
    std::string const* codeObject = nullptr;
};

/// The manifest of an exported kernel: code generation's, and "checked": `checked`.
std::string exportedManifest(lowering::EmittedKernel const& kernel, std::string const& checked);

/// The header for `kernel`, which embeds exportedManifest(); a UserError when a name is no C++
/// identifier, or when the manifest's grid formula or a parameter type cannot be expressed in C++.
std::string generateHeader(lowering::EmittedKernel const& kernel, HeaderOptions const& options);

} // namespace kiln::cli
