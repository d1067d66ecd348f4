// AssemblyKernel.h: a whole kernel's assembly file and manifest.
//
// The kernel's text is its header (.amdgcn_target), the entry label, the scheduled body, then
// the `.amdhsa_kernel` descriptor (register counts from the allocators' high-water marks, LDS
// bytes, accum_offset on gfx90a/gfx942, wave size) and the `.amdgpu_metadata` note that runtimes
// read: every argument's name, offset, size and kind, the kernarg size, register counts and
// the workgroup size. The prologue() reserves the registers the hardware initializes (the
// dispatch packet's address where asked for, the kernarg address, workgroup ids after them,
// workitem ids in v0) and must run before anything is allocated. manifestJson() is the runtime's
// KernelManifest format (the same as the PTX backend's), plus grid, registers and schedule.
#pragma once

#include "kiln/amdgcn/ArgumentLoader.h"
#include "kiln/amdgcn/Context.h"

#include <array>
#include <map>
#include <optional>
#include <string>

namespace kiln::amdgcn {

/// What the kernel is, apart from its body.
struct KernelSpec {
    std::vector<KernelArgument> arguments;                 ///< laid out (layoutArguments)
    std::array<int, 3> block{64, 1, 1};                    ///< workitems per workgroup
    std::array<bool, 3> workgroupAxes{true, false, false}; ///< which workgroup ids the code reads
    int ldsBytes = 0;
    /// Whether the code reads the dispatch packet (the grid's size: a persistent kernel's
    /// workgroups launched), whose address then comes in s[0:1], before the kernarg address.
    bool dispatchPacket = false;
    std::vector<std::string> grid;                ///< workgroups along x, y, z (expressions)
    std::map<std::string, std::int64_t> schedule; ///< recorded in the manifest
};

/// The registers the hardware fills before the first instruction.
struct EntryRegisters {
    std::optional<Value> dispatch;                   ///< s[0:1] where KernelSpec asks for it
    Value kernarg;                                   ///< s[0:1], or s[2:3] after the dispatch
    std::array<std::optional<Value>, 3> workgroupId; ///< SGPRs after the user SGPRs
    Value workitemIds; ///< v0 (x, y, z packed 10 bits each on CDNA3/GFX11)
};

class AssemblyKernel {
public:
    AssemblyKernel(Context& context, KernelSpec spec);

    /// Reserves the entry registers; call once, before allocating anything.
    EntryRegisters const& prologue();
    /// The workitem id along `axis` (v0 itself for x in a 1-D workgroup), appended to `out`.
    Value workitemId(int axis, Stream& out);

    /// The complete assembly file, after the body is scheduled; appends s_endpgm and makes the
    /// branches that cannot reach their targets long (BranchRelaxation.h).
    std::string assembly();
    /// The manifest JSON (valid after assembly()).
    std::string manifestJson() const;

    /// The LDS the workgroup takes, where the body decided it (a staged tile that reuses and
    /// may outgrow the workgroup's other LDS); call before assembly().
    void setLdsBytes(int bytes) { spec_.ldsBytes = bytes; }

    int vgprCount() const; ///< arch VGPRs declared (aligned to 4 on CDNA for accum_offset)
    int agprCount() const;
    int sgprCount() const;   ///< next_free_sgpr
    int accumOffset() const; ///< first AGPR in the unified file (CDNA)

private:
    Context& context_;
    KernelSpec spec_;
    std::optional<EntryRegisters> entry_;
    bool ended_ = false;
};

} // namespace kiln::amdgcn
