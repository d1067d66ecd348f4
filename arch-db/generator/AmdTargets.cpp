// AmdTargets.cpp: gfx90a (CDNA 2), gfx942 (CDNA 3) and gfx1100 (RDNA 3).
//
// Register, LDS and wait-counter limits come from the ISA reference guides and LLVM's AMDGPU
// documentation (which the assembler enforces); MFMA/WMMA cycle counts from AMD's Matrix
// Instruction Calculator or derived from the datasheet peak; part figures from the datasheet of
// the named reference part. Memory latencies are not published: they are marked "estimate:".
#include "Families.h"

#include <algorithm>

namespace kiln::arch::gen {

namespace {

using C = Capability;
using Q = WaitQueue;

constexpr char const* kCdna2Isa = "AMD Instinct MI200 (CDNA 2) ISA Reference Guide";
constexpr char const* kCdna3Isa = "AMD Instinct MI300 (CDNA 3) ISA Reference Guide";
constexpr char const* kRdna3Isa = "AMD RDNA 3 ISA Reference Guide";
constexpr char const* kLlvmAmdgpu =
    "LLVM AMDGPUUsage and AMDGPU assembler syntax (AMDGPUBaseInfo limits)";
constexpr char const* kMi250xDatasheet = "AMD Instinct MI250X datasheet";
constexpr char const* kMi300xDatasheet = "AMD Instinct MI300X datasheet";
constexpr char const* kCdna3Whitepaper = "AMD CDNA 3 architecture whitepaper";
constexpr char const* kRx7900xtxSpecs = "AMD Radeon RX 7900 XTX product specifications";
constexpr char const* kMatrixCalculator =
    "AMD Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator)";

constexpr char const* kVmemEstimate =
    "estimate: order of magnitude of a DRAM miss; issue = bytes per wave / 64 B per clock "
    "vector L1 (unpublished for these parts)";
constexpr char const* kLdsEstimate =
    "estimate: LDS round trip of several tens of cycles (unpublished)";
constexpr char const* kSmemEstimate = "estimate: scalar cache hit (unpublished)";
constexpr char const* kStoreEstimate =
    "estimate: a store frees its data registers once the counter says so; issue as for loads";
constexpr char const* kSyncEstimate = "estimate: a few cycles when nothing is outstanding";

/// Offset limits, by encoding.
struct OffsetLimits {
    std::int64_t globalMin, globalMax; // FLAT global: signed
    std::string globalSource;
};

/// Memory rows; `gfx11` selects the renamed mnemonics (old names stay as aliases) and the
/// separate store counter; `waveBytes` is how many lanes x 4 bytes one dword moves per wave.
std::vector<InstructionRow> memoryRows(bool gfx11, int waveSize, OffsetLimits const& limits,
                                       char const* isa, std::string const& ldsIssueSource) {
    auto always = [](TargetDefinition const&) { return true; };
    Q storeQueue = gfx11 ? Q::Vscnt : Q::Vmcnt;
    std::string bufferOffset = std::string(isa) + ", MUBUF: 12-bit unsigned offset";
    std::string ldsOffset = std::string(isa) + ", DS: 16-bit unsigned offset";
    std::string smemOffset = std::string(kLlvmAmdgpu) + ": SMEM 21-bit signed immediate offset";
    // Issue cycles: bytes per wave over the per-clock bandwidth named in the estimates above.
    auto vmemIssue = [&](int bytesPerLane) { return std::max(1, bytesPerLane * waveSize / 64); };
    auto ldsIssue = [&](int bytesPerLane) { return std::max(1, bytesPerLane * waveSize / 128); };
    auto name = [&](char const* gfx9, char const* gfx11Name) {
        return std::string(gfx11 ? gfx11Name : gfx9);
    };
    auto withAlias = [&](Op op, char const* gfx9) { return gfx11 ? op.alias(gfx9) : op; };

    std::vector<InstructionRow> rows;
    auto global = [&](char const* gfx9, char const* gfx11Name, int bytes, bool store) {
        Op op = Op::memory(name(gfx9, gfx11Name), bytes, store ? storeQueue : Q::Vmcnt);
        op.timing(store ? 1 : 500, vmemIssue(bytes), store ? kStoreEstimate : kVmemEstimate)
            .offset(limits.globalMin, limits.globalMax, limits.globalSource);
        rows.push_back({withAlias(op, gfx9), always});
    };
    global("global_load_dword", "global_load_b32", 4, false);
    global("global_load_dwordx2", "global_load_b64", 8, false);
    global("global_load_dwordx4", "global_load_b128", 16, false);
    global("global_store_dword", "global_store_b32", 4, true);
    global("global_store_dwordx4", "global_store_b128", 16, true);

    auto buffer = [&](char const* gfx9, char const* gfx11Name, int bytes, bool store) {
        Op op = Op::memory(name(gfx9, gfx11Name), bytes, store ? storeQueue : Q::Vmcnt);
        op.timing(store ? 1 : 500, vmemIssue(bytes), store ? kStoreEstimate : kVmemEstimate)
            .offset(0, 4095, bufferOffset);
        rows.push_back({withAlias(op, gfx9), always});
    };
    buffer("buffer_load_dword", "buffer_load_b32", 4, false);
    buffer("buffer_load_dwordx4", "buffer_load_b128", 16, false);
    buffer("buffer_store_dword", "buffer_store_b32", 4, true);
    buffer("buffer_store_dwordx4", "buffer_store_b128", 16, true);
    // `buffer_load_dword ... lds`: the data goes to LDS at M0, not to VGPRs; tracked by vmcnt.
    rows.push_back({Op::memory("buffer_load_dword_lds", 4, Q::Vmcnt)
                        .timing(500, vmemIssue(4), kVmemEstimate)
                        .offset(0, 4095, bufferOffset),
                    whenHas({C::HasDirectToLds})});

    auto lds = [&](char const* gfx9, char const* gfx11Name, int bytes, bool store) {
        Op op = Op::memory(name(gfx9, gfx11Name), bytes, Q::Lgkmcnt);
        op.latency(store ? 1 : 64, store ? kStoreEstimate : kLdsEstimate)
            .issue(ldsIssue(bytes), ldsIssueSource)
            .offset(0, 65535, ldsOffset);
        rows.push_back({withAlias(op, gfx9), always});
    };
    lds("ds_read_b32", "ds_load_b32", 4, false);
    lds("ds_read_b64", "ds_load_b64", 8, false);
    lds("ds_read_b128", "ds_load_b128", 16, false);
    lds("ds_write_b32", "ds_store_b32", 4, true);
    lds("ds_write_b64", "ds_store_b64", 8, true);
    lds("ds_write_b128", "ds_store_b128", 16, true);

    auto smem = [&](char const* gfx9, char const* gfx11Name, int bytes) {
        Op op = Op::scalar(name(gfx9, gfx11Name), bytes, Q::Lgkmcnt);
        op.timing(64, 1, kSmemEstimate).offset(-1048576, 1048575, smemOffset);
        rows.push_back({withAlias(op, gfx9), always});
    };
    smem("s_load_dword", "s_load_b32", 4);
    smem("s_load_dwordx2", "s_load_b64", 8);
    smem("s_load_dwordx4", "s_load_b128", 16);

    rows.push_back({Op::sync("s_waitcnt").timing(1, 1, kSyncEstimate), always});
    rows.push_back(
        {Op::sync("s_barrier").timing(16, 1, "estimate: barrier, all waves arrived"), always});
    rows.push_back(
        {Op::sync("s_nop").timing(1, 1, std::string(isa) + ": s_nop N waits N+1 cycles"), always});
    rows.push_back({Op::sync("s_waitcnt_vscnt", Q::Vscnt).timing(1, 1, kSyncEstimate),
                    whenHas({C::HasVscnt})});
    return rows;
}

/// VALU rows: a wave occupies its SIMD for waveSize / simdWidth cycles.
std::vector<InstructionRow> aluRows(bool gfx11, int issue, std::string const& issueSource,
                                    int latency, std::string const& latencySource) {
    auto always = [](TargetDefinition const&) { return true; };
    std::vector<InstructionRow> rows = {
        {Op::alu("v_fma_f32").latency(latency, latencySource).issue(issue, issueSource), always},
        {Op::alu("v_add_f32").latency(latency, latencySource).issue(issue, issueSource), always},
        {Op::alu("v_mul_f32").latency(latency, latencySource).issue(issue, issueSource), always},
        {Op::alu("v_mov_b32").latency(latency, latencySource).issue(issue, issueSource), always},
        {Op::alu("v_lshlrev_b32").latency(latency, latencySource).issue(issue, issueSource),
         always},
        {Op::alu("v_pk_fma_f32").latency(latency, latencySource).issue(issue, issueSource),
         whenHas({C::HasPackedFP32})},
        {Op::alu("v_pk_mul_f32").latency(latency, latencySource).issue(issue, issueSource),
         whenHas({C::HasPackedFP32})},
    };
    Op add = Op::alu(gfx11 ? "v_add_nc_u32" : "v_add_u32")
                 .latency(latency, latencySource)
                 .issue(issue, issueSource);
    rows.push_back({gfx11 ? add.alias("v_add_u32") : add, always});
    return rows;
}

/// What the GFX9-based CDNA targets share.
TargetDefinition cdna(std::string name, std::string family, char const* isa) {
    TargetDefinition target(std::move(name), Vendor::Amd, std::move(family));
    std::string waitcnt = std::string(kLlvmAmdgpu) + ", gfx90a/gfx940 waitcnt operand";
    std::string valuIssue =
        std::string("derived: a wave64 VALU op occupies a SIMD16 for 4 cycles (") + isa + ")";
    std::string valuLatency =
        "estimate: a dependent VALU op is taken to issue right after the 4-cycle pass";
    std::string ldsIssue = std::string("derived: bytes per wave / 128 B per clock (LDS of 32 "
                                       "banks x 4 B, ") +
                           isa + ")";
    return target
        .with({C::HasWave64, C::HasMFMA, C::HasAccVgprs, C::HasUnifiedVgprFile, C::HasPackedFP32,
               C::HasDirectToLds, C::HasDPP, C::HasVmcnt, C::HasLgkmcnt, C::HasExpcnt,
               C::HasBF16Matrix})
        .fact("wave_size", 64, "threads", isa)
        .fact("max_threads_per_block", 1024, "threads", kLlvmAmdgpu)
        .fact("vgprs_per_wave", 512, "registers",
              std::string(isa) + " (unified file: arch VGPRs + AGPRs)")
        .fact("arch_vgprs_per_wave", 256, "registers", isa)
        .fact("agprs_per_wave", 256, "registers", isa)
        .fact("sgprs_per_wave", 102, "registers", std::string(kLlvmAmdgpu) + " (addressable, GFX9)")
        .fact("vgpr_alloc_granule", 8, "registers", std::string(kLlvmAmdgpu) + " (gfx90a+)")
        .fact("max_waves_per_simd", 8, "count", std::string(kLlvmAmdgpu) + " (gfx90a+)")
        .fact("simds_per_multiprocessor", 4, "count", isa)
        .fact("shared_bytes", 65536, "bytes", std::string(isa) + " (64 KB LDS per workgroup)")
        .fact("shared_bytes_default", 65536, "bytes", isa)
        .fact("shared_bytes_per_multiprocessor", 65536, "bytes", std::string(isa) + " (per CU)")
        .fact("shared_banks", 32, "count", isa)
        .fact("shared_bank_bytes", 4, "bytes", isa)
        .fact("vmcnt_max", 63, "count", waitcnt)
        .fact("lgkmcnt_max", 15, "count", waitcnt)
        .fact("expcnt_max", 7, "count", waitcnt)
        .instructions(memoryRows(
            false, 64, {-4096, 4095, std::string(kLlvmAmdgpu) + ": FLAT offset13s"}, isa, ldsIssue))
        .instructions(aluRows(false, 4, valuIssue, 4, valuLatency));
}

/// An MFMA row. `cycles` is the issue-to-issue time on one SIMD; LLVM's scheduling model
/// (SISchedule.td) also takes it as the latency.
InstructionRow mfma(std::string name, int m, int n, int k, char const* type, int cycles,
                    std::string const& source, std::vector<std::string> const& aliases = {}) {
    Op op = Op::matrix(std::move(name), Q::None, m, n, k, type, type, "f32", "f32");
    op.issue(cycles, source)
        .latency(cycles,
                 "LLVM SISchedule.td models an MFMA's latency as its pass time (" + source + ")");
    for (auto const& alias : aliases) {
        op.alias(alias);
    }
    return {op, whenHas({C::HasMFMA})};
}

} // namespace

/// CDNA 2: gfx90a.
TargetDefinition cdna2(std::string name) {
    std::string calc = std::string(kMatrixCalculator) + ", cdna2";
    return cdna(std::move(name), "cdna2", kCdna2Isa)
        .instructions({
            mfma("v_mfma_f32_32x32x8f16", 32, 32, 8, "f16", 64, calc),
            mfma("v_mfma_f32_16x16x16f16", 16, 16, 16, "f16", 32, calc),
            mfma("v_mfma_f32_32x32x8bf16_1k", 32, 32, 8, "bf16", 64, calc),
            mfma("v_mfma_f32_16x16x16bf16_1k", 16, 16, 16, "bf16", 32, calc),
            mfma("v_mfma_f32_32x32x2f32", 32, 32, 2, "f32", 64, calc),
            mfma("v_mfma_f32_16x16x4f32", 16, 16, 4, "f32", 32, calc),
        });
}

/// CDNA 3: gfx942. MFMA mnemonics gained underscores (LLVM keeps the old ones as aliases).
TargetDefinition cdna3(std::string name) {
    std::string f16 = std::string("derived: ") + kMi300xDatasheet +
                      " 1307.4 TFLOPS dense FP16/BF16 = 304 CUs x 2100 MHz x 2048 flops/clock/CU"
                      ", 512 per SIMD";
    std::string f32 = std::string("derived: ") + kMi300xDatasheet +
                      " 163.4 TFLOPS FP32 matrix = 304 CUs x 2100 MHz x 256 flops/clock/CU";
    std::string fp8 = std::string("derived: ") + kMi300xDatasheet +
                      " 2614.9 TFLOPS dense FP8 = 304 CUs x 2100 MHz x 4096 flops/clock/CU";
    TargetDefinition target = cdna(std::move(name), "cdna3", kCdna3Isa);
    target.with({C::HasFP8Matrix, C::HasTF32Matrix});
    return target.instructions({
        mfma("v_mfma_f32_32x32x8_f16", 32, 32, 8, "f16", 32, f16, {"v_mfma_f32_32x32x8f16"}),
        mfma("v_mfma_f32_16x16x16_f16", 16, 16, 16, "f16", 16, f16, {"v_mfma_f32_16x16x16f16"}),
        mfma("v_mfma_f32_32x32x8_bf16", 32, 32, 8, "bf16", 32, f16, {"v_mfma_f32_32x32x8bf16_1k"}),
        mfma("v_mfma_f32_16x16x16_bf16", 16, 16, 16, "bf16", 16, f16,
             {"v_mfma_f32_16x16x16bf16_1k"}),
        mfma("v_mfma_f32_32x32x2_f32", 32, 32, 2, "f32", 64, f32, {"v_mfma_f32_32x32x2f32"}),
        mfma("v_mfma_f32_16x16x4_f32", 16, 16, 4, "f32", 32, f32, {"v_mfma_f32_16x16x4f32"}),
        mfma("v_mfma_f32_32x32x16_fp8_fp8", 32, 32, 16, "fp8", 32, fp8),
        mfma("v_mfma_f32_16x16x32_fp8_fp8", 16, 16, 32, "fp8", 16, fp8),
    });
}

/// RDNA 3: gfx1100. Wave32 by default for compute; wave64 also runs.
TargetDefinition rdna3(std::string name) {
    TargetDefinition target(std::move(name), Vendor::Amd, "rdna3");
    std::string waitcnt = std::string(kLlvmAmdgpu) + ", gfx11 waitcnt operand";
    std::string valuIssue =
        std::string("derived: a wave32 VALU op issues in one pass on a SIMD32 (") + kRdna3Isa + ")";
    std::string valuLatency = "estimate: dependent VALU latency taken as 5 cycles (unpublished)";
    std::string wmma = std::string(kMatrixCalculator) + ", rdna3: 32 cycles";
    std::string wmmaLatency = "estimate: taken equal to the pass time, as LLVM does for MFMA";
    target.with({C::HasWave32, C::HasWave64, C::HasWMMA, C::HasDualIssueVALU, C::HasDPP,
                 C::HasVmcnt, C::HasLgkmcnt, C::HasExpcnt, C::HasVscnt, C::HasBF16Matrix});
    return target.fact("wave_size", 32, "threads", kRdna3Isa)
        .fact("max_threads_per_block", 1024, "threads", kLlvmAmdgpu)
        .fact("vgprs_per_wave", 256, "registers", std::string(kRdna3Isa) + " (8-bit VGPR field)")
        .fact("sgprs_per_wave", 106, "registers",
              std::string(kLlvmAmdgpu) + " (addressable, GFX10+)")
        .fact("simds_per_multiprocessor", 2, "count",
              std::string(kRdna3Isa) + " (SIMD32 x 2 per CU)")
        .fact("shared_bytes", 65536, "bytes", std::string(kRdna3Isa) + " (64 KB per workgroup)")
        .fact("shared_bytes_default", 65536, "bytes", kRdna3Isa)
        .fact("shared_bytes_per_multiprocessor", 65536, "bytes",
              std::string(kRdna3Isa) + " (128 KB LDS per WGP of two CUs)")
        .fact("lds_bytes_per_wgp", 131072, "bytes", kRdna3Isa)
        .fact("shared_banks", 32, "count", std::string(kRdna3Isa) + " (per CU half of the WGP LDS)")
        .fact("shared_bank_bytes", 4, "bytes", kRdna3Isa)
        .fact("vmcnt_max", 63, "count", waitcnt)
        .fact("lgkmcnt_max", 63, "count", waitcnt)
        .fact("expcnt_max", 7, "count", waitcnt)
        .fact("vscnt_max", 63, "count", std::string(kLlvmAmdgpu) + " (6-bit VS_CNT, GFX10+)")
        .instructions(memoryRows(true, 32,
                                 {-4096, 4095,
                                  std::string(kLlvmAmdgpu) + ": FLAT global offset, 13-bit signed "
                                                             "on GFX11"},
                                 kRdna3Isa,
                                 "estimate: bytes per wave / 128 B per clock, as on CDNA"))
        .instructions(aluRows(true, 1, valuIssue, 5, valuLatency))
        .instruction(
            Op::matrix("v_wmma_f32_16x16x16_f16", Q::None, 16, 16, 16, "f16", "f16", "f32", "f32")
                .latency(32, wmmaLatency)
                .issue(32, wmma))
        .instruction(Op::matrix("v_wmma_f32_16x16x16_bf16", Q::None, 16, 16, 16, "bf16", "bf16",
                                "f32", "f32")
                         .latency(32, wmmaLatency)
                         .issue(32, wmma));
}

std::vector<TargetDefinition> amdTargets() {
    std::string perGcd = std::string(kMi250xDatasheet) + ", halved for one of the two GCDs";
    TargetDefinition gfx90a = cdna2("gfx90a");
    gfx90a.part("AMD Instinct MI250X, one GCD")
        .fact("multiprocessor_count", 110, "count",
              std::string(kMi250xDatasheet) + " (220 CUs per package, 110 per GCD)")
        .fact("boost_clock_mhz", 1700, "MHz",
              std::string(kMi250xDatasheet) + " (peak engine clock)")
        .fact("memory_bandwidth_gbps", 1638, "GB/s", perGcd + " (3276.8 GB/s)")
        .fact("l2_bytes", 8388608, "bytes", std::string(kCdna2Isa) + " (8 MB per GCD)")
        .fact("peak_fp32_gflops", 23950, "GFLOP/s", perGcd + " (47.9 TFLOPS vector)")
        .fact("peak_fp32_packed_gflops", 47850, "GFLOP/s", perGcd + " (95.7 TFLOPS packed)")
        .fact("peak_fp16_matrix_gflops", 191500, "GFLOP/s", perGcd + " (383 TFLOPS)")
        .fact("peak_bf16_matrix_gflops", 191500, "GFLOP/s", perGcd + " (383 TFLOPS)");

    TargetDefinition gfx942 = cdna3("gfx942");
    gfx942.part("AMD Instinct MI300X")
        .fact("multiprocessor_count", 304, "count", kMi300xDatasheet)
        .fact("boost_clock_mhz", 2100, "MHz",
              std::string(kMi300xDatasheet) + " (peak engine clock)")
        .fact("memory_bandwidth_gbps", 5300, "GB/s", kMi300xDatasheet)
        .fact("l2_bytes", 4194304, "bytes", std::string(kCdna3Whitepaper) + " (4 MB per XCD)")
        .fact("l3_bytes", 268435456, "bytes",
              std::string(kCdna3Whitepaper) + " (256 MB Infinity Cache)")
        .fact("xcd_count", 8, "count", kCdna3Whitepaper)
        .fact("peak_fp32_gflops", 81700, "GFLOP/s", std::string(kMi300xDatasheet) + " (vector)")
        .fact("peak_fp16_matrix_gflops", 1307400, "GFLOP/s",
              std::string(kMi300xDatasheet) + " (dense)")
        .fact("peak_bf16_matrix_gflops", 1307400, "GFLOP/s",
              std::string(kMi300xDatasheet) + " (dense)")
        .fact("peak_fp8_matrix_gflops", 2614900, "GFLOP/s",
              std::string(kMi300xDatasheet) + " (dense)");

    TargetDefinition gfx1100 = rdna3("gfx1100");
    gfx1100.part("AMD Radeon RX 7900 XTX")
        .fact("multiprocessor_count", 96, "count", kRx7900xtxSpecs)
        .fact("boost_clock_mhz", 2500, "MHz", kRx7900xtxSpecs)
        .fact("memory_bandwidth_gbps", 960, "GB/s", kRx7900xtxSpecs)
        .fact("l2_bytes", 6291456, "bytes", std::string(kRx7900xtxSpecs) + " (6 MB)")
        .fact("l3_bytes", 100663296, "bytes",
              std::string(kRx7900xtxSpecs) + " (96 MB Infinity Cache)")
        .fact("peak_fp32_gflops", 61400, "GFLOP/s",
              std::string(kRx7900xtxSpecs) + " (with dual issue)")
        .fact("peak_fp16_matrix_gflops", 122800, "GFLOP/s", kRx7900xtxSpecs)
        .fact("peak_bf16_matrix_gflops", 122800, "GFLOP/s",
              std::string("derived: ") + kMatrixCalculator +
                  " gives v_wmma bf16 the same 32 cycles as f16, so the FP16 peak of " +
                  kRx7900xtxSpecs);

    return {gfx90a, gfx942, gfx1100};
}

} // namespace kiln::arch::gen
