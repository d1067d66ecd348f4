// Export.h: a tuned kernel as files another application can build with.
//
// For one schedule point: the kernel's code (PTX, and the cubin where ptxas exists), its
// manifest, and a generated C++ header that embeds both and declares a typed launch function
// taking the problem sizes by name (ExportHeader.h), so that an application needs only the
// header and the installed Kiln runtime library (find_package(kiln), target kiln::runtime). `kiln
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
};

/// The files written.
struct ExportedFiles {
    std::string code;     ///< NAME.ptx, or the AMDGCN assembly NAME.s
    std::string binary;   ///< NAME.cubin (empty when there is no ptxas), or NAME.hsaco
    std::string manifest; ///< NAME.manifest.json
    std::string header;   ///< NAME.h
};

/// Lowers, emits, assembles and writes the kernel of `request`.
ExportedFiles exportKernel(ExportRequest const& request);

} // namespace kiln::cli
