// ArchFiguresTest.cpp: the database holds the vendors' published figures cited in
// arch-db/generator (CUDA Programming Guide, whitepapers, datasheets, ISA guides, LLVM docs).
#include "kiln/arch-db/ArchLibrary.h"

#include <gtest/gtest.h>

namespace kiln::arch {
namespace {

std::int64_t fact(char const* target, char const* name) {
    return ArchLibrary::get(target).requireFact(name);
}

TEST(ArchFigures, NvidiaSharedMemoryFromTheCudaGuide) {
    // Opt-in per-block maxima: 163 KB (8.0), 99 KB (8.6, 8.9), 227 KB (9.0); per SM
    // 164/100/100/228 KB.
    EXPECT_EQ(fact("sm_80", "shared_bytes"), 163 * 1024);
    EXPECT_EQ(fact("sm_86", "shared_bytes"), 99 * 1024);
    EXPECT_EQ(fact("sm_86", "shared_bytes_per_multiprocessor"), 100 * 1024);
    EXPECT_EQ(fact("sm_89", "shared_bytes"), 99 * 1024);
    EXPECT_EQ(fact("sm_90", "shared_bytes"), 232448);
    EXPECT_EQ(fact("sm_90a", "shared_bytes"), 227 * 1024);
    EXPECT_EQ(fact("sm_80", "shared_bytes_per_multiprocessor"), 164 * 1024);
    EXPECT_EQ(fact("sm_89", "shared_bytes_per_multiprocessor"), 100 * 1024);
    EXPECT_EQ(fact("sm_90a", "shared_bytes_per_multiprocessor"), 228 * 1024);
    for (char const* target : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
        EXPECT_EQ(fact(target, "shared_bytes_default"), 48 * 1024) << target;
    }
}

TEST(ArchFigures, NvidiaRegistersAndWarps) {
    for (char const* target : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
        EXPECT_EQ(fact(target, "wave_size"), 32) << target;
        EXPECT_EQ(fact(target, "registers_per_multiprocessor"), 65536) << target;
        EXPECT_EQ(fact(target, "max_registers_per_thread"), 255) << target;
        EXPECT_EQ(fact(target, "max_threads_per_block"), 1024) << target;
    }
    EXPECT_EQ(fact("sm_80", "max_warps_per_multiprocessor"), 64);
    EXPECT_EQ(fact("sm_86", "max_warps_per_multiprocessor"), 48);
    EXPECT_EQ(fact("sm_86", "max_blocks_per_multiprocessor"), 16);
    EXPECT_EQ(fact("sm_89", "max_warps_per_multiprocessor"), 48);
    EXPECT_EQ(fact("sm_90a", "max_warps_per_multiprocessor"), 64);
}

TEST(ArchFigures, NvidiaReferenceParts) {
    EXPECT_EQ(fact("sm_80", "multiprocessor_count"), 108);   // A100
    EXPECT_EQ(fact("sm_86", "multiprocessor_count"), 82);    // RTX 3090
    EXPECT_EQ(fact("sm_86", "l2_bytes"), 6LL * 1024 * 1024); // 6144 KB
    EXPECT_EQ(fact("sm_86", "memory_bandwidth_gbps"), 936);
    EXPECT_EQ(fact("sm_86", "peak_fp16_matrix_gflops"), 71000);   // FP32 accumulate, dense
    EXPECT_EQ(fact("sm_89", "multiprocessor_count"), 128);        // RTX 4090
    EXPECT_EQ(fact("sm_90a", "multiprocessor_count"), 132);       // H100 SXM5
    EXPECT_EQ(fact("sm_80", "l2_bytes"), 40LL * 1024 * 1024);     // 40 MB
    EXPECT_EQ(fact("sm_90a", "l2_bytes"), 50LL * 1024 * 1024);    // 50 MB
    EXPECT_EQ(fact("sm_80", "peak_fp16_matrix_gflops"), 312000);  // 312 TFLOPS dense
    EXPECT_EQ(fact("sm_90a", "peak_fp16_matrix_gflops"), 989400); // 989.4 TFLOPS dense
    EXPECT_EQ(fact("sm_90a", "memory_bandwidth_gbps"), 3350);     // 3.35 TB/s
    EXPECT_EQ(ArchLibrary::get("sm_90a").referencePart(), "NVIDIA H100 SXM5 80GB");
}

TEST(ArchFigures, AmdRegistersLdsAndWaves) {
    EXPECT_EQ(fact("gfx90a", "wave_size"), 64);
    EXPECT_EQ(fact("gfx942", "wave_size"), 64);
    EXPECT_EQ(fact("gfx1100", "wave_size"), 32);
    EXPECT_EQ(fact("gfx90a", "shared_bytes"), 64 * 1024);
    EXPECT_EQ(fact("gfx942", "shared_bytes"), 64 * 1024);
    EXPECT_EQ(fact("gfx1100", "shared_bytes"), 64 * 1024);
    // 512 VGPRs per wave on CDNA 2/3, architected VGPRs and AGPRs from one file.
    EXPECT_EQ(fact("gfx90a", "vgprs_per_wave"), 512);
    EXPECT_EQ(fact("gfx90a", "arch_vgprs_per_wave") + fact("gfx90a", "agprs_per_wave"), 512);
    EXPECT_EQ(fact("gfx942", "vgprs_per_wave"), 512);
    EXPECT_EQ(fact("gfx90a", "sgprs_per_wave"), 102);
    EXPECT_EQ(fact("gfx1100", "sgprs_per_wave"), 106);
    EXPECT_TRUE(ArchLibrary::get("gfx90a").has(Capability::HasUnifiedVgprFile));
}

TEST(ArchFigures, AmdWaitCounterMaxima) {
    // LLVM AMDGPU waitcnt operand: GFX9 vmcnt 6 bits, expcnt 3, lgkmcnt 4; GFX11 lgkmcnt 6.
    for (char const* target : {"gfx90a", "gfx942"}) {
        EXPECT_EQ(fact(target, "vmcnt_max"), 63) << target;
        EXPECT_EQ(fact(target, "lgkmcnt_max"), 15) << target;
        EXPECT_EQ(fact(target, "expcnt_max"), 7) << target;
        EXPECT_FALSE(ArchLibrary::get(target).fact("vscnt_max")) << target;
    }
    EXPECT_EQ(fact("gfx1100", "lgkmcnt_max"), 63);
    EXPECT_EQ(fact("gfx1100", "vscnt_max"), 63);
}

TEST(ArchFigures, AmdReferenceParts) {
    EXPECT_EQ(fact("gfx90a", "multiprocessor_count"), 110); // MI250X, one GCD
    EXPECT_EQ(fact("gfx942", "multiprocessor_count"), 304); // MI300X
    EXPECT_EQ(fact("gfx1100", "multiprocessor_count"), 96); // RX 7900 XTX
    EXPECT_EQ(fact("gfx942", "peak_fp16_matrix_gflops"), 1307400);
    EXPECT_EQ(fact("gfx942", "memory_bandwidth_gbps"), 5300);
    EXPECT_EQ(fact("gfx942", "boost_clock_mhz"), 2100);
}

TEST(ArchFigures, MatrixIssueRatesAgreeWithPeakRates) {
    // The derived issue cycles and the datasheet peaks must tell the same story:
    // peak = units x clock x flops per instruction / issue cycles.
    auto check = [](char const* target, char const* instruction, int unitsPerMultiprocessor) {
        Arch const& arch = ArchLibrary::get(target);
        Instruction const& mma = arch.instruction(instruction);
        ASSERT_TRUE(mma.matrix);
        double flops = 2.0 * mma.matrix->m * mma.matrix->n * mma.matrix->k * mma.matrix->blocks;
        double perClock = flops / mma.issueCycles * unitsPerMultiprocessor *
                          static_cast<double>(arch.requireFact("multiprocessor_count"));
        double peak = static_cast<double>(arch.requireFact("peak_fp16_matrix_gflops")) * 1e9;
        double clockMhz = peak / perClock / 1e6;
        // Within the vendor's boost clock, and not absurdly below it.
        EXPECT_LE(clockMhz, arch.requireFact("boost_clock_mhz") * 1.001) << target;
        EXPECT_GE(clockMhz, arch.requireFact("boost_clock_mhz") * 0.85) << target;
    };
    check("sm_80", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4);
    check("sm_86", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4);
    check("sm_89", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4);
    check("sm_90a", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", 1);
    check("gfx90a", "v_mfma_f32_32x32x8f16", 4);
    check("gfx942", "v_mfma_f32_32x32x8_f16", 4);
    check("gfx1100", "v_wmma_f32_16x16x16_f16", 2);
}

TEST(ArchFigures, CapabilitiesByTarget) {
    Arch const& sm80 = ArchLibrary::get("sm_80");
    Arch const& sm90 = ArchLibrary::get("sm_90");
    Arch const& sm90a = ArchLibrary::get("sm_90a");
    EXPECT_TRUE(sm80.has(Capability::HasMmaSync));
    EXPECT_TRUE(sm80.has(Capability::HasCpAsync));
    EXPECT_FALSE(sm80.has(Capability::HasTMA));
    EXPECT_TRUE(sm90.has(Capability::HasTMA));
    EXPECT_FALSE(sm90.has(Capability::HasWGMMA)); // wgmma needs the sm_90a target
    EXPECT_TRUE(sm90a.has(Capability::HasWGMMA));
    EXPECT_TRUE(ArchLibrary::get("gfx90a").has(Capability::HasMFMA));
    EXPECT_FALSE(ArchLibrary::get("gfx90a").has(Capability::HasVscnt));
    EXPECT_TRUE(ArchLibrary::get("gfx1100").has(Capability::HasWMMA));
    EXPECT_TRUE(ArchLibrary::get("gfx1100").has(Capability::HasVscnt));
    EXPECT_FALSE(ArchLibrary::get("gfx1100").has(Capability::HasMFMA));
    EXPECT_TRUE(ArchLibrary::get("gfx942").has(Capability::HasPackedFP32));
    EXPECT_FALSE(ArchLibrary::get("gfx1100").has(Capability::HasPackedFP32));
}

TEST(ArchFigures, InstructionsOfTheGemmPath) {
    Instruction const& load = ArchLibrary::get("gfx90a").instruction("global_load_dwordx4");
    EXPECT_EQ(load.waitQueue, WaitQueue::Vmcnt);
    EXPECT_EQ(load.bytesPerLane, 16);
    ASSERT_TRUE(load.offset);
    EXPECT_EQ(load.offset->min, -4096); // 13-bit signed
    EXPECT_EQ(load.offset->max, 4095);
    EXPECT_TRUE(load.latencyIsEstimate());

    Instruction const& lds = ArchLibrary::get("gfx942").instruction("ds_read_b128");
    EXPECT_EQ(lds.waitQueue, WaitQueue::Lgkmcnt);
    EXPECT_EQ(lds.offset->max, 65535); // 16-bit unsigned
    EXPECT_EQ(ArchLibrary::get("gfx90a").instruction("buffer_load_dword").offset->max, 4095);

    // GFX9 stores count in vmcnt, GFX11 stores in vscnt.
    EXPECT_EQ(ArchLibrary::get("gfx90a").instruction("global_store_dwordx4").waitQueue,
              WaitQueue::Vmcnt);
    EXPECT_EQ(ArchLibrary::get("gfx1100").instruction("global_store_b128").waitQueue,
              WaitQueue::Vscnt);

    Instruction const& mfma = ArchLibrary::get("gfx90a").instruction("v_mfma_f32_32x32x8f16");
    EXPECT_EQ(mfma.issueCycles, 64); // 16 passes (AMD Matrix Instruction Calculator, cdna2)
    EXPECT_EQ(mfma.matrix->k, 8);
    EXPECT_EQ(mfma.matrix->a, "f16");
    EXPECT_EQ(mfma.matrix->d, "f32");
    EXPECT_FALSE(mfma.issueIsEstimate());
    EXPECT_EQ(ArchLibrary::get("gfx90a").instruction("v_mfma_f32_16x16x16f16").issueCycles, 32);

    Instruction const& copy = ArchLibrary::get("sm_80").instruction("cp.async.cg.shared.global");
    EXPECT_EQ(copy.waitQueue, WaitQueue::AsyncGroup);
    EXPECT_EQ(copy.bytesPerLane, 16);
    Instruction const& tma = ArchLibrary::get("sm_90a").instruction(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
    EXPECT_EQ(tma.waitQueue, WaitQueue::Mbarrier);
    Instruction const& mma =
        ArchLibrary::get("sm_80").instruction("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
    EXPECT_EQ((std::array{mma.matrix->m, mma.matrix->n, mma.matrix->k}), (std::array{16, 8, 16}));
    EXPECT_EQ(ArchLibrary::get("sm_90a")
                  .instruction("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16")
                  .waitQueue,
              WaitQueue::WgmmaGroup);
}

TEST(ArchFigures, EveryFigureHasASource) {
    for (Arch const& arch : ArchLibrary::instance().targets()) {
        for (Fact const& fact : arch.facts()) {
            EXPECT_FALSE(fact.source.empty()) << arch.name() << " " << fact.name;
            EXPECT_FALSE(fact.unit.empty()) << arch.name() << " " << fact.name;
        }
        for (Instruction const& instruction : arch.instructions()) {
            EXPECT_FALSE(instruction.latencySource.empty()) << instruction.name;
            EXPECT_FALSE(instruction.issueSource.empty()) << instruction.name;
            EXPECT_GT(instruction.issueCycles, 0) << arch.name() << " " << instruction.name;
        }
    }
}

} // namespace
} // namespace kiln::arch
