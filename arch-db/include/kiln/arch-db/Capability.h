// Capability.h: the named yes/no features a target has (HasMFMA, HasWGMMA, HasVmcnt, ...).
//
// Codegen and rule guards ask `arch.has(Capability::HasWGMMA)` instead of comparing target names,
// so a new target with the same features needs no code change. The table below is the single
// list of capabilities: the generator writes these names into the database, the loader rejects
// any other name, and `kiln arch show` prints the descriptions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::arch {

/// A yes/no feature of a target. Numeric limits that go with a feature (the largest vmcnt, ...)
/// are facts, see Arch::fact.
enum class Capability : std::uint8_t {
    // NVIDIA tensor cores and asynchronous copies.
    HasMmaSync,
    HasLdmatrix,
    HasStmatrix,
    HasCpAsync,
    HasCpAsyncBulk,
    HasTMA,
    HasMbarrier,
    HasMbarrierExpectTx,
    HasWGMMA,
    HasSetMaxNReg,
    HasThreadBlockClusters,
    // AMD matrix cores and register files.
    HasMFMA,
    HasWMMA,
    HasAccVgprs,
    HasUnifiedVgprFile,
    HasPackedFP32,
    HasDirectToLds,
    HasDualIssueVALU,
    HasDPP,
    // AMD wait counters (their maxima are the facts vmcnt_max, lgkmcnt_max, ...).
    HasVmcnt,
    HasLgkmcnt,
    HasExpcnt,
    HasVscnt,
    // Execution width and matrix data types, both vendors.
    HasWave32,
    HasWave64,
    HasBF16Matrix,
    HasTF32Matrix,
    HasFP8Matrix,
};

/// One row of the capability table: the enumerator, its name in JSON and rules, what it means.
struct CapabilityInfo {
    Capability capability;
    std::string_view name;
    std::string_view description;
};

/// Every capability, in enumerator order (capabilityTable()[i].capability == Capability(i)).
inline constexpr std::array<CapabilityInfo, 28> kCapabilityTable{{
    {Capability::HasMmaSync, "HasMmaSync", "warp-level mma.sync tensor-core instructions"},
    {Capability::HasLdmatrix, "HasLdmatrix", "ldmatrix: shared memory to mma fragments"},
    {Capability::HasStmatrix, "HasStmatrix", "stmatrix: mma fragments to shared memory"},
    {Capability::HasCpAsync, "HasCpAsync",
     "cp.async global-to-shared copies, ordered by commit/wait groups"},
    {Capability::HasCpAsyncBulk, "HasCpAsyncBulk", "cp.async.bulk bulk copies"},
    {Capability::HasTMA, "HasTMA", "tensor memory accelerator: cp.async.bulk.tensor"},
    {Capability::HasMbarrier, "HasMbarrier", "mbarrier objects in shared memory"},
    {Capability::HasMbarrierExpectTx, "HasMbarrierExpectTx",
     "mbarrier transaction counts (expect_tx / complete_tx)"},
    {Capability::HasWGMMA, "HasWGMMA", "warpgroup wgmma.mma_async (sm_90a only)"},
    {Capability::HasSetMaxNReg, "HasSetMaxNReg", "setmaxnreg register reallocation"},
    {Capability::HasThreadBlockClusters, "HasThreadBlockClusters",
     "thread block clusters and distributed shared memory"},
    {Capability::HasMFMA, "HasMFMA", "matrix fused multiply-add v_mfma_* (CDNA)"},
    {Capability::HasWMMA, "HasWMMA", "wave matrix multiply-accumulate v_wmma_* (RDNA 3)"},
    {Capability::HasAccVgprs, "HasAccVgprs", "accumulation registers (AGPRs, a[N])"},
    {Capability::HasUnifiedVgprFile, "HasUnifiedVgprFile",
     "VGPRs and AGPRs are allocated from one 512-entry file per wave"},
    {Capability::HasPackedFP32, "HasPackedFP32", "packed FP32 VALU: v_pk_fma_f32, v_pk_mul_f32"},
    {Capability::HasDirectToLds, "HasDirectToLds",
     "buffer loads with the lds modifier write LDS directly"},
    {Capability::HasDualIssueVALU, "HasDualIssueVALU", "VOPD dual-issue VALU (v_dual_*)"},
    {Capability::HasDPP, "HasDPP", "data-parallel primitives (lane permutes in VALU operands)"},
    {Capability::HasVmcnt, "HasVmcnt", "s_waitcnt vmcnt: vector memory loads"},
    {Capability::HasLgkmcnt, "HasLgkmcnt", "s_waitcnt lgkmcnt: LDS, GDS, scalar memory, messages"},
    {Capability::HasExpcnt, "HasExpcnt", "s_waitcnt expcnt: exports and GDS"},
    {Capability::HasVscnt, "HasVscnt", "s_waitcnt_vscnt: vector memory stores (GFX10+)"},
    {Capability::HasWave32, "HasWave32", "32-wide waves / warps"},
    {Capability::HasWave64, "HasWave64", "64-wide waves"},
    {Capability::HasBF16Matrix, "HasBF16Matrix", "BF16 inputs to matrix instructions"},
    {Capability::HasTF32Matrix, "HasTF32Matrix", "TF32 / XF32 inputs to matrix instructions"},
    {Capability::HasFP8Matrix, "HasFP8Matrix", "FP8 (E4M3/E5M2) inputs to matrix instructions"},
}};

/// How many capabilities there are.
inline constexpr std::size_t kCapabilityCount = kCapabilityTable.size();

/// The capability's name as written in JSON, rules and `kiln arch show`.
constexpr std::string_view name(Capability capability) {
    return kCapabilityTable[static_cast<std::size_t>(capability)].name;
}

/// The capability's one-line description.
constexpr std::string_view description(Capability capability) {
    return kCapabilityTable[static_cast<std::size_t>(capability)].description;
}

/// The capability with this exact name, or nothing (O(1): one hash lookup).
std::optional<Capability> capabilityFromName(std::string_view name);

} // namespace kiln::arch
