// KernelManifest.h: what a compiled kernel expects, written next to every kernel by codegen.
//
// A manifest names the entry point, its parameters (name, type, size, offset, pointer or value),
// the block size it was generated for, its dynamic shared memory and its target. The launcher
// checks launches against it (TypedKernel at load, untyped launches at launch), so that a double
// passed for an f32 is an error naming the parameter instead of garbage in the kernel.
//
// JSON form (unknown keys are kept out of the way for codegen's own fields, e.g. "grid",
// "registers", "schedule", "graph_hash"):
//   { "entry": "kiln_saxpy", "target": "sm_80", "block": [256, 1, 1], "shared_bytes": 0,
//     "parameters": [ { "name": "x", "type": "f32", "kind": "pointer", "size": 8, "offset": 0 },
//                     { "name": "alpha", "type": "f32", "kind": "value", "size": 4,
//                       "offset": 16 }, ... ] }
// For a pointer, "type" is the element type and "size" is 8. A TMA tensor map (TensorMap.h) is
// { "name": "A_map", "type": "f16", "kind": "tensor_map", "size": 128, "offset": 64,
//   "tensor_map": { "tensor": "A", "box": [64, 128], "swizzle": "128B" } }: the tensor it maps,
// the box one copy moves (innermost first) and the shared-memory swizzle; "type" is the element
// type. A kernel launched in thread-block clusters declares "cluster": [2, 1, 1]. A persistent
// kernel (PERSISTENT=1) declares "persistent": {"workgroups_per_multiprocessor": 1}: its "grid"
// counts output tiles, and launchers launch persistentGrid() of them (PersistentGrid.h). A pointer
// the launcher allocates itself, a workspace, says so: { "name": "kiln_workspace", "type": "u8",
// "kind": "pointer", ..., "workspace": { "bytes": "ceildiv(M, 4) * 16 + M * 64", "zeroed": true }
// }.
#pragma once

#include "kiln/runtime/LaunchConfig.h"
#include "kiln/runtime/ScalarType.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/TensorMap.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// Whether a parameter is a device address, a value passed by copy, or a TMA tensor map (128
/// bytes passed by copy, 64-byte aligned).
enum class ParameterKind : std::uint8_t { Pointer, Value, TensorMap };

/// "pointer", "value" or "tensor_map".
std::string_view name(ParameterKind kind);

/// One kernel parameter as the manifest describes it.
struct KernelParameter {
    std::string name;
    ScalarType type = ScalarType::U8; ///< the value's type, or the pointed-to element type
    ParameterKind kind = ParameterKind::Value;
    std::size_t size = 0;   ///< bytes in the parameter buffer (8 for a pointer)
    std::size_t offset = 0; ///< byte offset in the parameter buffer
    /// For a tensor map: the box and swizzle it was generated for (shape.element == type), and
    /// the tensor (another parameter's name, or a tensor of the Command) it maps.
    std::optional<TensorMapShape> tensorMap;
    std::string tensor;
    /// For a workspace pointer ("workspace": {"bytes": "...", "zeroed": true}): its bytes, an
    /// expression of the kernel's size parameters. The launcher passes a buffer of at least
    /// that many bytes, zeroed before the first launch; each launch leaves it zeroed, so one
    /// buffer serves a stream's launches in turn. Empty for any other parameter.
    std::string workspaceBytes;
    bool operator==(KernelParameter const&) const = default;
};

/// Everything the launcher needs to know about one compiled kernel.
struct KernelManifest {
    std::string entry;           ///< the kernel's entry name in the code
    std::string target;          ///< e.g. "sm_80", "sm_90a"
    std::optional<Dim3> block;   ///< the block size the kernel was generated for
    std::size_t sharedBytes = 0; ///< dynamic shared memory the kernel needs
    std::optional<Dim3> cluster; ///< the thread-block cluster it must be launched in, if any
    /// A persistent kernel's workgroups per multiprocessor (PersistentGrid.h); 0: the kernel is
    /// launched on the grid its formula gives.
    std::uint32_t workgroupsPerMultiprocessor = 0;
    std::vector<KernelParameter> parameters;
    bool operator==(KernelManifest const&) const = default;

    /// Parses the JSON form; `origin` (a file name, or "manifest") prefixes error messages, which
    /// name the JSON path of the problem (InvalidManifest).
    static Expected<KernelManifest> fromJson(std::string_view text, std::string const& origin);
    /// Reads and parses a manifest file (NotFound when it cannot be read).
    static Expected<KernelManifest> fromFile(std::string const& path);
    /// The JSON form, as fromJson reads it.
    std::string toJson() const;
    /// Total bytes of the parameter buffer (end of the last parameter).
    std::size_t parameterBytes() const;
};

} // namespace kiln::runtime
