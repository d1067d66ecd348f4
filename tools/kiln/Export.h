// Export.h: a tuned kernel as files another application can build with.
//
// For one schedule point: the kernel's code (PTX, and the cubin where ptxas exists), its
// manifest, and a generated C++ header that embeds both and declares a typed launch function
// taking the problem sizes by name (ExportHeader.h), so that an application needs only the
// header and the installed Kiln runtime library (find_package(kiln), target kiln::runtime). Also
// a C ABI (ExportCapi.h: NAME_capi.h and NAME_capi.c, over the CUDA driver or the HIP runtime,
// which need neither Kiln nor the vendor's toolkit), and on request the shared library
// libNAME.so built from it with the system's C compiler, for any language that calls C. `kiln
// export` and the end of `kiln tune` use it.
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/Pipeline.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// What to export.
struct ExportRequest {
    Command const* command = nullptr;
    rules::Pipeline const* pipeline = nullptr;
    std::string target; ///< an arch-db target
    std::map<std::string, std::int64_t> params;
    std::string folder;
    std::string name;   ///< file stem and C++ namespace; empty: the kernel's entry name
    std::string origin; ///< where the point came from, for the header's comment
    /// How the point's result was checked (CheckProvenance.h's checkedBy), for the manifest's
    /// "checked" and the header's comment.
    std::string checked = "unchecked (schedule given by --params)";
    /// Also build libNAME.so from the C ABI's source, with $CC (else cc).
    bool sharedLibrary = false;
    /// The problem's sizes where the kernel is made for them only (--specialize, as `kiln tune
    /// --specialize` times it); empty: for every size. Its launchers refuse other sizes.
    std::map<std::string, std::int64_t> sizes;
};

/// The files written.
struct ExportedFiles {
    std::string code;     ///< NAME.ptx, or the AMDGCN assembly NAME.s
    std::string binary;   ///< NAME.cubin (empty when there is no ptxas), or NAME.hsaco
    std::string manifest; ///< NAME.manifest.json
    std::string header;   ///< NAME.h
    std::string capiHeader, capiSource; ///< NAME_capi.h and NAME_capi.c
    std::string sharedLibrary;          ///< libNAME.so, when asked for
};

/// Lowers, emits, assembles and writes the kernel of `request`; a UserError (with the command
/// and its messages) when the C compiler fails to build the shared library.
ExportedFiles exportKernel(ExportRequest const& request);

} // namespace kiln::cli
