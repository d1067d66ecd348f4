// Target.cpp: AMD target facts from arch-db and the GFX11 spelling of mnemonics.
#include "kiln/amdgcn/Target.h"

#include "kiln/amdgcn/Instruction.h"
#include "kiln/arch-db/ArchError.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"

#include <array>
#include <fmt/format.h>
#include <string>
#include <utility>
#include <vector>

namespace kiln::amdgcn {

Target::Target(arch::Arch const& arch)
    : arch_(&arch) {
    KILN_ASSERT(arch.vendor() == arch::Vendor::Amd, "{} is not an AMD target", arch.name());
    gfx11_ = arch.family() == "rdna3";
    waveSize_ = static_cast<int>(arch.requireFact("wave_size"));
    vgprs_ = static_cast<int>(
        arch.fact("arch_vgprs_per_wave").value_or(arch.requireFact("vgprs_per_wave")));
    agprs_ = static_cast<int>(arch.fact("agprs_per_wave").value_or(0));
    sgprs_ = static_cast<int>(arch.requireFact("sgprs_per_wave"));
    vgprGranule_ = static_cast<int>(arch.fact("vgpr_alloc_granule").value_or(8));
    vmcntMax_ = static_cast<int>(arch.requireFact("vmcnt_max"));
    lgkmcntMax_ = static_cast<int>(arch.requireFact("lgkmcnt_max"));
    expcntMax_ = static_cast<int>(arch.requireFact("expcnt_max"));
    vscntMax_ = static_cast<int>(arch.fact("vscnt_max").value_or(0));
}

Target Target::named(std::string_view name) {
    try {
        arch::Arch const& arch = arch::ArchLibrary::get(name);
        if (arch.vendor() != arch::Vendor::Amd) {
            std::vector<std::string> amd;
            for (std::string const& t : arch::ArchLibrary::instance().targetNames())
                if (arch::ArchLibrary::get(t).vendor() == arch::Vendor::Amd)
                    amd.push_back(t);
            fail("'{}' is an NVIDIA target; the AMDGCN backend needs an AMD one ({})", name,
                 fmt::join(amd, ", "));
        }
        return Target(arch);
    } catch (arch::ArchError const& e) {
        throw UserError(e.what());
    }
}

std::string Target::mnemonic(std::string_view gfx9) const {
    if (!gfx11_)
        return std::string(gfx9);
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 52> kRenamed{{
        {"s_load_dword", "s_load_b32"},
        {"s_load_dwordx2", "s_load_b64"},
        {"s_load_dwordx4", "s_load_b128"},
        {"s_load_dwordx8", "s_load_b256"},
        {"global_load_ubyte", "global_load_u8"},
        {"global_load_sbyte", "global_load_i8"},
        {"global_load_ushort", "global_load_u16"},
        {"global_load_sshort", "global_load_i16"},
        {"global_load_dword", "global_load_b32"},
        {"global_load_dwordx2", "global_load_b64"},
        {"global_load_dwordx3", "global_load_b96"},
        {"global_load_dwordx4", "global_load_b128"},
        {"global_store_byte", "global_store_b8"},
        {"global_store_short", "global_store_b16"},
        {"global_store_dword", "global_store_b32"},
        {"global_store_dwordx2", "global_store_b64"},
        {"global_store_dwordx3", "global_store_b96"},
        {"global_store_dwordx4", "global_store_b128"},
        {"buffer_load_ubyte", "buffer_load_u8"},
        {"buffer_load_sbyte", "buffer_load_i8"},
        {"buffer_load_ushort", "buffer_load_u16"},
        {"buffer_load_sshort", "buffer_load_i16"},
        {"buffer_load_dword", "buffer_load_b32"},
        {"buffer_load_dwordx2", "buffer_load_b64"},
        {"buffer_load_dwordx3", "buffer_load_b96"},
        {"buffer_load_dwordx4", "buffer_load_b128"},
        {"buffer_store_byte", "buffer_store_b8"},
        {"buffer_store_short", "buffer_store_b16"},
        {"buffer_store_dword", "buffer_store_b32"},
        {"buffer_store_dwordx2", "buffer_store_b64"},
        {"buffer_store_dwordx3", "buffer_store_b96"},
        {"buffer_store_dwordx4", "buffer_store_b128"},
        {"ds_read_u8", "ds_load_u8"},
        {"ds_read_u16", "ds_load_u16"},
        {"ds_read_b32", "ds_load_b32"},
        {"ds_read_b64", "ds_load_b64"},
        {"ds_read_b96", "ds_load_b96"},
        {"ds_read_b128", "ds_load_b128"},
        {"ds_write_b8", "ds_store_b8"},
        {"ds_write_b16", "ds_store_b16"},
        {"ds_write_b32", "ds_store_b32"},
        {"ds_write_b64", "ds_store_b64"},
        {"ds_write_b96", "ds_store_b96"},
        {"ds_write_b128", "ds_store_b128"},
        {"v_add_u32", "v_add_nc_u32"},
        {"v_sub_u32", "v_sub_nc_u32"},
        {"v_addc_co_u32", "v_add_co_ci_u32"},
        {"v_subb_co_u32", "v_sub_co_ci_u32"},
        {"s_andn2_b32", "s_and_not1_b32"},
        {"s_andn2_b64", "s_and_not1_b64"},
        {"s_orn2_b32", "s_or_not1_b32"},
        {"s_orn2_b64", "s_or_not1_b64"},
    }};
    for (auto const& [old, renamed] : kRenamed)
        if (old == gfx9)
            return std::string(renamed);
    return std::string(gfx9);
}

namespace {
// Defaults by class where arch-db has no row for the mnemonic; the memory ones are the same
// order-of-magnitude estimates arch-db gives its rows.
int defaultLatency(InstructionClass c) {
    switch (c) {
    case InstructionClass::VmemLoad:
    case InstructionClass::LdsDma:
        return 500;
    case InstructionClass::LdsLoad:
    case InstructionClass::Smem:
        return 64;
    case InstructionClass::Trans:
        return 8;
    case InstructionClass::Mfma:
        return 32;
    default:
        return 4;
    }
}
} // namespace

int Target::latency(std::string_view mnemonic) const {
    if (arch::Instruction const* row = arch_->findInstruction(mnemonic))
        return row->latency;
    return defaultLatency(classify(mnemonic));
}

int Target::issueCycles(std::string_view mnemonic) const {
    if (arch::Instruction const* row = arch_->findInstruction(mnemonic))
        return std::max(1, row->issueCycles);
    InstructionClass const c = classify(mnemonic);
    if (isVector(c))
        return waveSize_ == 64 ? 4 : 1;
    return 1;
}

std::string Target::triple() const {
    return "amdgcn-amd-amdhsa--" + arch_->name();
}

} // namespace kiln::amdgcn
