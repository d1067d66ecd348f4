// Target.h: what AMDGCN code generation needs to know about one AMD target.
//
// Read once from arch-db: the ISA generation (GFX9-based CDNA or GFX11 RDNA 3), the wave size,
// register files, wait-counter maxima, and the mnemonics that differ between generations
// (global_load_dword on GFX9 is global_load_b32 on GFX11). Everything target-dependent in the
// instruction generators asks this, never the target's name.
#pragma once

#include "kiln/arch-db/Arch.h"

#include <string>
#include <string_view>

namespace kiln::amdgcn {

class Target {
public:
    /// The AMD target `arch` (an InternalError for an NVIDIA one: callers check the vendor).
    explicit Target(arch::Arch const& arch);
    /// The target of this arch-db name ("gfx90a", ...); a UserError for an unknown or NVIDIA one.
    static Target named(std::string_view name);

    arch::Arch const& arch() const { return *arch_; }
    std::string const& name() const { return arch_->name(); }
    /// GFX11 (RDNA 3) encodings and mnemonics.
    bool isGfx11() const { return gfx11_; }
    /// gfx90a or gfx942: aligned VGPR tuples, AGPRs in the unified file, accum_offset.
    bool isCdna() const { return !gfx11_; }
    /// CDNA 3 (gfx940, gfx941, gfx942): its wait states and hazards, by the arch-db family, so
    /// that a CDNA 3 target added to arch-db gets them without code.
    bool isCdna3() const { return arch_->family() == "cdna3"; }
    int waveSize() const { return waveSize_; }
    /// Scalar registers a lane mask takes (2 in wave64, 1 in wave32).
    int maskRegisters() const { return waveSize_ / 32; }

    int vgprs() const { return vgprs_; }
    int agprs() const { return agprs_; }
    int sgprs() const { return sgprs_; }
    int vgprGranule() const { return vgprGranule_; }

    int vmcntMax() const { return vmcntMax_; }
    int lgkmcntMax() const { return lgkmcntMax_; }
    int expcntMax() const { return expcntMax_; }
    /// 0 when the target counts stores with vmcnt.
    int vscntMax() const { return vscntMax_; }
    bool hasVscnt() const { return vscntMax_ > 0; }
    /// Distinct SGPRs and literals one VALU instruction may read (1 on GFX9, 2 on GFX10+).
    int constantBusLimit() const { return gfx11_ ? 2 : 1; }

    /// The target's spelling of a GFX9 mnemonic (s_load_dword -> s_load_b32 on GFX11, ...).
    std::string mnemonic(std::string_view gfx9) const;
    /// Cycles from issue until the result can be used, from arch-db where it knows the
    /// instruction, else a class default.
    int latency(std::string_view mnemonic) const;
    /// Cycles the issuing unit is busy.
    int issueCycles(std::string_view mnemonic) const;

    /// "amdgcn-amd-amdhsa--gfx90a"
    std::string triple() const;

private:
    arch::Arch const* arch_;
    bool gfx11_ = false;
    int waveSize_ = 64;
    int vgprs_ = 0, agprs_ = 0, sgprs_ = 0, vgprGranule_ = 8;
    int vmcntMax_ = 0, lgkmcntMax_ = 0, expcntMax_ = 0, vscntMax_ = 0;
};

} // namespace kiln::amdgcn
