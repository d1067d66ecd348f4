// Codegen.h: from a lowered KernelGraph to a kernel for one target, with its manifest.
//
// emitKernel walks the control graph and writes the kernel for the target's vendor in arch-db:
// PTX for NVIDIA targets (sm_80, sm_89, sm_90, sm_90a), AMDGCN assembly for AMD ones (gfx90a,
// gfx942, gfx1100; lowering/amdgcn/emitter/AmdgcnKernelWriter.h says how). Addresses come from the
// coordinate transforms, solved from the hardware indices (IndexExpressions.h); values a workitem
// owns (Distribution.h) live in its registers; loads and stores of consecutive, aligned elements
// become vector accesses; every element outside a tensor is masked. The manifest says everything a
// launcher needs: entry, parameters (name, type, size, offset, pointer or value), block, the grid
// as expressions of the sizes, shared memory, target, schedule parameters and a hash of the graph.
#pragma once

#include "kiln/arch-db/Arch.h"
#include "kiln/graph/KernelGraph.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::lowering {

struct CodegenOptions {
    std::string target = "sm_90";                 ///< an arch-db target
    std::map<std::string, std::int64_t> schedule; ///< recorded in the manifest
    std::string entry;                            ///< empty: "kiln_" + the graph's name
    /// The problem's sizes, when the kernel is made for one problem (a sweep's candidate,
    /// `kiln run`): of the versions a launch-time condition on sizes chooses between, only the
    /// one that runs at these sizes is written, the fast one behind a trap where the condition
    /// fails, and the manifest lists what it assumes. Empty: one kernel for every size.
    std::map<std::string, std::int64_t> sizes;
};

/// The schedule parameters code generation reads itself (beside those of the rules):
/// MIN_BLOCKS (.minnctapersm), STAGES (copies of a pipelined loop's shared memory), TMA (1: a
/// pipelined loop's wgmma tiles loaded by the copy engine, PtxPipeline.cpp) and WARP_SPECIALIZE
/// (1: those loads issued by a producer warpgroup of their own); GROUP_M (> 0: workgroups take
/// their tiles in groups of GROUP_M rows of tiles, KernelWalker::orderTilesInGroups); PERSISTENT
/// (1: each workgroup loops over output tiles, KernelWalker::forEachTile; the manifest declares
/// the persistent grid, PersistentGrid.h); ONLINE (1: a softmax's row max and sum of
/// exp(x - max), or a layer norm's row mean and variance, in one pass, OnlineSoftmax.h and
/// MeanVariance.h); CLUSTER_M and CLUSTER_N (thread-block clusters
/// whose shared operand the copy engine multicasts, Clusters.h); EPILOGUE (1: the result staged
/// in shared memory and stored by the copy engine, StagedEpilogue.h); PINGPONG (1: two consumer
/// warpgroups after WARP_SPECIALIZE's split, each taking every other tile of the workgroup,
/// lowering/ptx/PtxPingpong.cpp); PREFETCH (> 0: each workgroup of a cooperative Reduce asks L2
/// for the rows of the workgroup PREFETCH after it, KernelWalker::prefetchLaterRows); HOLD (0:
/// the rows of a kernel made for its sizes read again in each pass instead of held in
/// registers, KernelWalker::heldRows; 1, the default: held where their chunks are written out).
inline constexpr char const* kCodegenParameters[] = {
    "MIN_BLOCKS", "STAGES",    "TMA",       "WARP_SPECIALIZE", "GROUP_M",  "PERSISTENT", "ONLINE",
    "PREFETCH",   "CLUSTER_M", "CLUSTER_N", "EPILOGUE",        "PINGPONG", "HOLD"};

/// PREFETCH, at most: workgroups ahead whose rows a workgroup asks L2 for.
inline constexpr std::int64_t kMaxPrefetch = 1 << 20;

/// A cooperative Reduce's chunks a row, at most, that a kernel made for its sizes writes out (the
/// body once a chunk, each chunk's loads issued before the arithmetic of the one before) and,
/// with HOLD=1, holds in registers for the next passes (KernelWalker::forEachChunk, heldRows);
/// rows of more chunks are a loop and read again in each pass. The cost model reads it too.
inline constexpr std::int64_t kMaxWrittenOutChunks = 4;

/// GROUP_M, at most: rows of tiles in one group of the grouped order.
inline constexpr std::int64_t kMaxGroupM = 1024;

/// A kernel's instructions, at most: both code generators refuse a kernel as it passes them, so
/// that a schedule that writes out an unrolled loop over a huge tile stops at once instead of
/// after minutes. The largest kernels of the shipped examples have about 24,000 (AMDGCN) and
/// 9,000 (PTX).
inline constexpr std::size_t kMaxKernelInstructions = 100'000;

/// The schedule as messages name it: "MT_M=128,MT_N=256" (names in order).
std::string scheduleText(std::map<std::string, std::int64_t> const& schedule);

/// Refuses schedule parameters of kCodegenParameters the target cannot honour (STAGES above 1
/// without cp.async, which would be ignored; negative STAGES, MIN_BLOCKS out of range), naming
/// parameter and target. Every code generator calls it first.
void checkCodegenParameters(CodegenOptions const& options);

/// What a TMA tensor-map parameter maps (the manifest's "tensor_map"): the tensor, the box one
/// copy moves and the swizzle, and the tensor's extents and strides as expressions of the sizes
/// (TensorMaps.h), from which a launcher encodes it.
struct TensorMapInfo {
    std::string tensor;
    std::vector<std::int64_t> box;    ///< elements per dimension, innermost first
    std::string swizzle = "128B";     ///< "none", "32B", "64B", "128B"
    std::vector<std::string> sizes;   ///< elements per dimension, innermost first
    std::vector<std::string> strides; ///< elements between indices of dimensions 1 .. rank - 1
};

/// One kernel parameter, in order.
struct ParameterInfo {
    std::string name;
    std::string type; ///< element type for a pointer or a tensor map, else the value's type
    bool pointer = false;
    std::size_t size = 0, offset = 0;
    std::string meaning;                    ///< "tensor X", "scalar alpha", "size N"
    std::optional<TensorMapInfo> tensorMap; ///< a TMA tensor map (128 bytes, 64-byte aligned)
    /// A workspace (kWorkspaceParameter): its bytes, an expression of the sizes. The launcher
    /// passes a buffer of at least these bytes, zeroed before its first launch; each launch
    /// leaves it zeroed again, so one buffer serves the launches of one stream in turn (not two
    /// launches at once). The manifest's "workspace": {"bytes": ..., "zeroed": true}.
    std::optional<std::string> workspaceBytes;
};

/// The name of the workspace parameter, the kernel's last, where it takes one (a Reduce whose
/// rows are split over workgroups: docs/codegen.md, "Rows split over workgroups").
inline constexpr char const* kWorkspaceParameter = "kiln_workspace";

struct EmittedKernel {
    std::string entry, target;
    std::string code; ///< PTX text, or AMDGCN assembly
    std::vector<ParameterInfo> parameters;
    std::int64_t block[3] = {1, 1, 1};
    std::vector<std::string> grid; ///< workgroups along x, y, z, as expressions of sizes
    /// PERSISTENT=1: `grid` counts the output tiles, and the launch is a persistent grid of
    /// min(tiles, multiprocessors x this many) workgroups along x (PersistentGrid.h); 0: the
    /// launch is `grid`.
    std::int64_t workgroupsPerMultiprocessor = 0;
    /// The thread-block cluster the kernel must be launched in (Clusters.h's launchCluster);
    /// (1, 1, 1): none. The manifest's "cluster" where it has more than one workgroup.
    std::array<std::int64_t, 3> cluster = {1, 1, 1};
    std::size_t sharedBytes = 0;
    /// Registers per workitem where code generation allocates them (AMDGCN: VGPRs and AGPRs);
    /// 0 for PTX, whose registers ptxas allocates.
    int registers = 0;
    std::map<std::string, std::int64_t> schedule;
    std::string graphHash; ///< of the lowered graph's JSON form
    /// Conditions on sizes the kernel assumes (it traps where one fails), written as
    /// expressions of the size parameters; empty for a kernel of every size.
    std::vector<std::string> assumptions;

    /// The manifest JSON (the runtime's KernelManifest format plus the fields above).
    std::string manifestJson() const;
};

/// Refuses a kernel whose `registers` per workitem (as an assembler allocated them) times its
/// workitems pass what the target has for a workgroup (max_registers_per_block), naming both and
/// the schedule: the driver would refuse to launch it.
void checkRegisters(EmittedKernel const& kernel, int registers);

/// The kernel for `graph` on `options.target`, written by the code generator of the target's
/// vendor (arch-db). A UserError names an unknown target, or what the graph asks for that code
/// generation cannot do (and the operation it belongs to).
EmittedKernel emitKernel(KernelGraph const& graph, CodegenOptions const& options);

/// The vendor of an arch-db target, which chooses the code generator (and what its code is: PTX
/// text, or AMDGCN assembly for a code object); a UserError listing the targets otherwise.
arch::Vendor targetVendor(std::string_view target);

} // namespace kiln::lowering
