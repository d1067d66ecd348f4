// Families.h: the architecture families targets are built from.
//
// Each returns a target with the family's capabilities, facts and instruction tables but no
// reference part; a target names its part and adds the part's facts (see nvidiaTargets() and
// amdTargets(), and docs/arch-db.md for a new target in a few lines).
#pragma once

#include "TargetDefinition.h"

#include <string>

namespace kiln::arch::gen {

/// NVIDIA Ampere, compute capability 8.0 (A100 die): mma.sync, ldmatrix, cp.async, mbarrier.
TargetDefinition ampere(std::string name);
/// NVIDIA Ada, compute capability 8.9: Ampere's features plus FP8 tensor cores.
TargetDefinition ada(std::string name);
/// NVIDIA Hopper, compute capability 9.0: TMA, clusters, stmatrix; `archSpecific` makes it
/// sm_90a with wgmma and setmaxnreg.
TargetDefinition hopper(std::string name, bool archSpecific);
/// AMD CDNA 2 (gfx90a): MFMA, unified VGPR/AGPR file, packed FP32, direct-to-LDS loads.
TargetDefinition cdna2(std::string name);
/// AMD CDNA 3 (gfx94x): CDNA 2 plus FP8 and XF32 MFMA at twice the FP16 rate per CU.
TargetDefinition cdna3(std::string name);
/// AMD RDNA 3 (gfx11): wave32, WMMA, VOPD dual issue, separate store counter (vscnt).
TargetDefinition rdna3(std::string name);

} // namespace kiln::arch::gen
