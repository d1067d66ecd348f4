// AssemblyKernel.cpp: the kernel's text, descriptor, metadata note and manifest.
#include "kiln/amdgcn/AssemblyKernel.h"

#include "kiln/amdgcn/BranchRelaxation.h"
#include "kiln/graph/Error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kiln::amdgcn {

AssemblyKernel::AssemblyKernel(Context& context, KernelSpec spec)
    : context_(context)
    , spec_(std::move(spec)) {}

EntryRegisters const& AssemblyKernel::prologue() {
    KILN_ASSERT(!entry_, "prologue() twice");
    KILN_ASSERT(context_.sgprs().inUse() == 0 && context_.vgprs().inUse() == 0,
                "prologue() after registers were allocated");
    EntryRegisters e;
    // User SGPRs in the hardware's order: the dispatch packet's address, then the kernarg's.
    int next = 0;
    if (spec_.dispatchPacket) {
        e.dispatch = context_.sgprs().reserve(next, 2, DataType::I64);
        next += 2;
    }
    e.kernarg = context_.sgprs().reserve(next, 2, DataType::I64);
    next += 2;
    for (int axis = 0; axis < 3; ++axis)
        if (spec_.workgroupAxes[static_cast<std::size_t>(axis)])
            e.workgroupId[static_cast<std::size_t>(axis)] =
                context_.sgprs().reserve(next++, 1, DataType::I32);
    e.workitemIds = context_.vgprs().reserve(0, 1, DataType::I32);
    if (e.dispatch)
        context_.liveness().defineOnEntry(*e.dispatch);
    context_.liveness().defineOnEntry(e.kernarg);
    for (auto const& w : e.workgroupId)
        if (w)
            context_.liveness().defineOnEntry(*w);
    context_.liveness().defineOnEntry(e.workitemIds);
    entry_ = std::move(e);
    return *entry_;
}

Value AssemblyKernel::workitemId(int axis, Stream& out) {
    KILN_ASSERT(entry_, "workitemId() before prologue()");
    auto const& block = spec_.block;
    if (block[static_cast<std::size_t>(axis)] == 1)
        return Value::literal(0);
    // gfx90a, gfx942 and GFX11 pack the ids into v0: x in bits 0-9, y in 10-19, z in 20-29.
    if (axis == 0 && block[1] == 1 && block[2] == 1)
        return entry_->workitemIds;
    Builder b(context_, out);
    Value id = b.newVector(DataType::I32, "a workitem id");
    b.op("v_bfe_u32", {id},
         b.legalize({entry_->workitemIds, Value::literal(10 * axis), Value::literal(10)}, false));
    return id;
}

int AssemblyKernel::vgprCount() const {
    int const used = std::max(1, context_.vgprs().highWater());
    return context_.target().isCdna() ? (used + 3) / 4 * 4 : used;
}

int AssemblyKernel::agprCount() const {
    return context_.agprs().highWater();
}

int AssemblyKernel::sgprCount() const {
    return std::max(1, context_.sgprs().highWater());
}

int AssemblyKernel::accumOffset() const {
    return vgprCount();
}

std::string AssemblyKernel::assembly() {
    KILN_ASSERT(entry_, "assembly() before prologue()");
    if (!ended_) {
        context_.schedule(Instruction::op("s_endpgm", {}, {}));
        // Before the register counts: a long branch takes an SGPR pair of its own.
        relaxBranches(context_);
        ended_ = true;
    }
    Target const& t = context_.target();
    std::string const& name = context_.kernelName();
    int const waveSize = t.waveSize();
    int const threads = spec_.block[0] * spec_.block[1] * spec_.block[2];
    int const unifiedVgprs = t.isCdna() ? accumOffset() + agprCount() : vgprCount();
    if (unifiedVgprs > t.vgprs() + t.agprs() || vgprCount() > t.vgprs() || sgprCount() > t.sgprs())
        throw OutOfRegisters(fmt::format("kernel {} uses {} VGPRs and {} SGPRs; {} has {} and {}",
                                         name, vgprCount(), sgprCount(), t.name(), t.vgprs(),
                                         t.sgprs()));
    int const workitemAxes = spec_.block[2] > 1 ? 2 : (spec_.block[1] > 1 ? 1 : 0);

    std::string s;
    s += fmt::format(".amdgcn_target \"{}\"\n", t.triple());
    s += ".text\n";
    s += fmt::format(".globl {}\n.p2align 8\n.type {},@function\n{}:\n", name, name, name);
    s += context_.text();
    s += fmt::format(".L{}_end:\n.size {}, .L{}_end-{}\n\n", name, name, name, name);

    s += ".rodata\n.p2align 6\n";
    s += fmt::format(".amdhsa_kernel {}\n", name);
    if (spec_.dispatchPacket)
        s += "  .amdhsa_user_sgpr_dispatch_ptr 1\n";
    s += "  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n";
    for (int axis = 0; axis < 3; ++axis)
        s += fmt::format("  .amdhsa_system_sgpr_workgroup_id_{} {}\n", "xyz"[axis],
                         spec_.workgroupAxes[static_cast<std::size_t>(axis)] ? 1 : 0);
    s += fmt::format("  .amdhsa_system_vgpr_workitem_id {}\n", workitemAxes);
    s += fmt::format("  .amdhsa_next_free_vgpr {}\n", unifiedVgprs);
    s += fmt::format("  .amdhsa_next_free_sgpr {}\n", sgprCount());
    if (t.isCdna())
        s += fmt::format("  .amdhsa_accum_offset {}\n", accumOffset());
    if (t.isGfx11())
        s += fmt::format("  .amdhsa_wavefront_size32 {}\n", waveSize == 32 ? 1 : 0);
    s += fmt::format("  .amdhsa_group_segment_fixed_size {}\n", spec_.ldsBytes);
    s += ".end_amdhsa_kernel\n\n";

    s += ".amdgpu_metadata\n---\namdhsa.version: [ 1, 1 ]\namdhsa.kernels:\n";
    s += fmt::format("  - .name: {}\n    .symbol: {}.kd\n", name, name);
    s += fmt::format("    .kernarg_segment_size: {}\n", kernargBytes(spec_.arguments));
    s += "    .kernarg_segment_align: 8\n";
    s += fmt::format("    .group_segment_fixed_size: {}\n", spec_.ldsBytes);
    s += "    .private_segment_fixed_size: 0\n";
    s += fmt::format("    .wavefront_size: {}\n", waveSize);
    s += fmt::format("    .sgpr_count: {}\n", sgprCount());
    s += fmt::format("    .vgpr_count: {}\n", unifiedVgprs);
    if (t.isCdna())
        s += fmt::format("    .agpr_count: {}\n", agprCount());
    s += fmt::format("    .max_flat_workgroup_size: {}\n", threads);
    s += "    .args:\n";
    // Names are tagged strings: LLVM reads a plain Y or N (even quoted) as a boolean and then
    // rejects the note.
    for (KernelArgument const& a : spec_.arguments) {
        s += fmt::format("      - .name: !str '{}'\n        .size: {}\n        .offset: {}\n",
                         a.name, a.size, a.offset);
        if (a.pointer)
            s += "        .value_kind: global_buffer\n        .address_space: global\n";
        else
            s += "        .value_kind: by_value\n";
    }
    s += "...\n.end_amdgpu_metadata\n";
    return s;
}

std::string AssemblyKernel::manifestJson() const {
    nlohmann::ordered_json j;
    j["entry"] = context_.kernelName();
    j["target"] = context_.target().name();
    j["block"] = {spec_.block[0], spec_.block[1], spec_.block[2]};
    j["shared_bytes"] = spec_.ldsBytes;
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (KernelArgument const& a : spec_.arguments) {
        nlohmann::ordered_json p;
        p["name"] = a.name;
        p["type"] = std::string(kiln::name(a.type));
        p["kind"] = a.pointer ? "pointer" : "value";
        p["size"] = a.size;
        p["offset"] = a.offset;
        params.push_back(p);
    }
    j["parameters"] = params;
    if (!spec_.grid.empty())
        j["grid"] = spec_.grid;
    j["registers"] = {{"vgpr", vgprCount()}, {"agpr", agprCount()}, {"sgpr", sgprCount()}};
    j["code_object"] = "amdhsa";
    if (!spec_.schedule.empty())
        j["schedule"] = spec_.schedule;
    return j.dump(2) + "\n";
}

} // namespace kiln::amdgcn
