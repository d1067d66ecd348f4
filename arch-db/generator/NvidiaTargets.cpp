// NvidiaTargets.cpp: sm_80, sm_86, sm_89, sm_90 and sm_90a, as family defaults plus part facts.
//
// Architecture limits come from the CUDA Programming Guide's table of technical
// specifications per compute capability and from the PTX ISA; part figures (SM count, clocks,
// bandwidth, peak rates) from the vendor whitepaper or datasheet of the named reference part.
// Instruction latencies that no vendor publishes are marked "estimate:" and say what they rest
// on; issue cycles of tensor-core instructions are derived from the published peak rates.
#include "Families.h"

namespace kiln::arch::gen {

namespace {

using C = Capability;
using Q = WaitQueue;

// Documents, cited next to each figure.
constexpr char const* kCudaGuide =
    "NVIDIA CUDA C++ Programming Guide, Technical Specifications per Compute Capability";
constexpr char const* kPtxIsa = "NVIDIA PTX ISA 8.x";
constexpr char const* kA100Whitepaper = "NVIDIA A100 Tensor Core GPU Architecture whitepaper";
constexpr char const* kA100Datasheet = "NVIDIA A100 Tensor Core GPU datasheet, A100 SXM4 40GB";
constexpr char const* kGa102Whitepaper =
    "NVIDIA Ampere GA102 GPU Architecture whitepaper, Appendix A (GeForce RTX 3090)";
constexpr char const* kAdaWhitepaper =
    "NVIDIA Ada GPU Architecture whitepaper, Appendix A (GeForce RTX 4090)";
constexpr char const* kH100Whitepaper = "NVIDIA H100 Tensor Core GPU Architecture whitepaper";
constexpr char const* kH100Datasheet = "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM5";

// What the unmeasured memory latencies rest on. Kiln's own measurements (runtime + bench)
// replace these once the runtime exists.
constexpr char const* kGlobalLatencyEstimate =
    "estimate: order of magnitude of a DRAM miss reported by microbenchmark studies (Jia et al. "
    "2018, Volta; Luo et al. 2024, Ampere/Ada/Hopper); issue = 512 B per warp at 128 B/clock L1";
constexpr char const* kSharedLatencyEstimate =
    "estimate: shared-memory round trip of a few tens of cycles reported by microbenchmark "
    "studies (Jia et al. 2018; Luo et al. 2024); issue = bytes per warp / 128 B per clock";
constexpr char const* kSyncEstimate = "estimate: a few cycles when nothing is outstanding";

/// The ALU rows: latency measured on Volta and assumed unchanged, issue from the FP32/INT32
/// lane counts of the SM (32 threads of a warp over the lanes of one SM sub-partition).
std::vector<InstructionRow> aluRows(int fp32IssueCycles, int int32IssueCycles,
                                    std::string const& laneSource) {
    auto always = [](TargetDefinition const&) { return true; };
    constexpr char const* kLatency = "estimate: 4-cycle dependent latency measured for FFMA on "
                                     "Volta (Jia et al. 2018), assumed unchanged";
    std::string issue = "derived: 32 threads / lanes per SM sub-partition; " + laneSource;
    auto row = [&](char const* name, int issueCycles) {
        return InstructionRow{Op::alu(name).latency(4, kLatency).issue(issueCycles, issue), always};
    };
    return {row("fma.rn.f32", fp32IssueCycles),  row("add.f32", fp32IssueCycles),
            row("mul.f32", fp32IssueCycles),     row("add.s32", int32IssueCycles),
            row("mad.lo.s32", int32IssueCycles), row("shl.b32", int32IssueCycles)};
}

/// Loads, stores, copies and synchronisation common to sm_80 and later.
std::vector<InstructionRow> memoryRows() {
    auto always = [](TargetDefinition const&) { return true; };
    // PTX address operands [reg+imm] take a 32-bit signed immediate; ptxas folds larger ones.
    constexpr std::int64_t kMin = -2147483648LL;
    constexpr std::int64_t kMax = 2147483647LL;
    std::string addressing = std::string(kPtxIsa) + ", Addresses as Operands ([reg+imm32])";
    return {
        {Op::memory("ld.global.v4.f32", 16, Q::None)
             .timing(500, 4, kGlobalLatencyEstimate)
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("ld.global.f32", 4, Q::None)
             .timing(500, 1, kGlobalLatencyEstimate)
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("st.global.v4.f32", 16, Q::None)
             .timing(1, 4,
                     "estimate: stores release their registers after issue; issue = 512 B "
                     "per warp at 128 B/clock L1")
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("st.global.f32", 4, Q::None)
             .timing(1, 1, "estimate: stores release their registers after issue")
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("ld.shared.v4.b32", 16, Q::None)
             .timing(30, 4, kSharedLatencyEstimate)
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("ld.shared.b32", 4, Q::None)
             .timing(30, 1, kSharedLatencyEstimate)
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("st.shared.v4.b32", 16, Q::None)
             .timing(1, 4,
                     "estimate: stores release their registers after issue; issue = 512 B "
                     "per warp at 128 B/clock")
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("st.shared.b32", 4, Q::None)
             .timing(1, 1, "estimate: stores release their registers after issue")
             .offset(kMin, kMax, addressing),
         always},
        {Op::memory("cp.async.cg.shared.global", 16, Q::AsyncGroup)
             .timing(500, 4, kGlobalLatencyEstimate)
             .alias("cp.async.cg.shared.global.L2::128B"),
         whenHas({C::HasCpAsync})},
        {Op::memory("cp.async.ca.shared.global", 4, Q::AsyncGroup)
             .timing(500, 1, kGlobalLatencyEstimate),
         whenHas({C::HasCpAsync})},
        {Op::sync("cp.async.commit_group", Q::AsyncGroup).timing(1, 1, kSyncEstimate),
         whenHas({C::HasCpAsync})},
        {Op::sync("cp.async.wait_group", Q::AsyncGroup).timing(1, 1, kSyncEstimate),
         whenHas({C::HasCpAsync})},
        {Op::memory("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 16, Q::None)
             .timing(30, 4, kSharedLatencyEstimate),
         whenHas({C::HasLdmatrix})},
        {Op::memory("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 16, Q::None)
             .timing(30, 4, kSharedLatencyEstimate),
         whenHas({C::HasLdmatrix})},
        {Op::memory("stmatrix.sync.aligned.m8n8.x4.shared.b16", 16, Q::None)
             .timing(1, 4, "estimate: stores release their registers after issue"),
         whenHas({C::HasStmatrix})},
        {Op::sync("bar.sync")
             .timing(20, 1, "estimate: barrier with all warps already arrived")
             .alias("barrier.sync"),
         always},
        {Op::sync("mbarrier.arrive.shared::cta.b64", Q::Mbarrier).timing(1, 1, kSyncEstimate),
         whenHas({C::HasMbarrier})},
        {Op::sync("mbarrier.try_wait.parity.shared::cta.b64", Q::Mbarrier)
             .timing(1, 1, kSyncEstimate),
         whenHas({C::HasMbarrierExpectTx})},
        {Op::sync("mbarrier.arrive.expect_tx.shared::cta.b64", Q::Mbarrier)
             .timing(1, 1, kSyncEstimate),
         whenHas({C::HasMbarrierExpectTx})},
        {Op::memory("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                    0, Q::Mbarrier)
             .timing(600, 1,
                     "estimate: DRAM miss plus TMA setup; one thread issues the whole tile"),
         whenHas({C::HasTMA})},
        {Op::sync("wgmma.fence.sync.aligned", Q::WgmmaGroup).timing(1, 1, kSyncEstimate),
         whenHas({C::HasWGMMA})},
        {Op::sync("wgmma.commit_group.sync.aligned", Q::WgmmaGroup).timing(1, 1, kSyncEstimate),
         whenHas({C::HasWGMMA})},
        {Op::sync("wgmma.wait_group.sync.aligned", Q::WgmmaGroup).timing(1, 1, kSyncEstimate),
         whenHas({C::HasWGMMA})},
        {Op::sync("setmaxnreg.inc.sync.aligned.u32").timing(1, 1, kSyncEstimate),
         whenHas({C::HasSetMaxNReg})},
        {Op::sync("setmaxnreg.dec.sync.aligned.u32").timing(1, 1, kSyncEstimate),
         whenHas({C::HasSetMaxNReg})},
    };
}

/// mma.sync m16n8k16 with F16 or BF16 inputs and F32 accumulation; `issue` is derived from the
/// part's dense tensor peak (see each family).
std::vector<InstructionRow> mmaSyncRows(int issue, std::string const& issueSource) {
    constexpr char const* kLatency = "estimate: microbenchmark studies (Luo et al. 2024) report "
                                     "a few tens of cycles for HMMA m16n8k16";
    auto row = [&](char const* name, char const* type, std::initializer_list<Capability> needs) {
        return InstructionRow{Op::matrix(name, Q::None, 16, 8, 16, type, type, "f32", "f32")
                                  .latency(32, kLatency)
                                  .issue(issue, issueSource),
                              whenHas(needs)};
    };
    return {row("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "f16", {C::HasMmaSync}),
            row("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "bf16",
                {C::HasMmaSync, C::HasBF16Matrix})};
}

/// What every NVIDIA target from sm_80 on shares.
TargetDefinition nvidiaCommon(std::string name, std::string family) {
    TargetDefinition target(std::move(name), Vendor::Nvidia, std::move(family));
    target
        .with({C::HasWave32, C::HasMmaSync, C::HasLdmatrix, C::HasCpAsync, C::HasMbarrier,
               C::HasBF16Matrix, C::HasTF32Matrix})
        .fact("wave_size", 32, "threads", kCudaGuide)
        .fact("max_threads_per_block", 1024, "threads", kCudaGuide)
        .fact("registers_per_multiprocessor", 65536, "registers", kCudaGuide)
        .fact("max_registers_per_block", 65536, "registers", kCudaGuide)
        .fact("max_registers_per_thread", 255, "registers", kCudaGuide)
        .fact("shared_bytes_default", 49152, "bytes",
              std::string(kCudaGuide) + " (48 KB without the opt-in attribute)")
        .fact("shared_banks", 32, "count", std::string(kCudaGuide) + ", Shared Memory")
        .fact("shared_bank_bytes", 4, "bytes", std::string(kCudaGuide) + ", Shared Memory")
        .fact("tensor_cores_per_multiprocessor", 4, "count",
              "NVIDIA A100, Ada and H100 architecture whitepapers (4 tensor cores per SM)")
        .fact("mbarrier_max_arrive_count", (1 << 20) - 1, "count",
              std::string(kPtxIsa) + ", mbarrier: expected arrival count 1 .. 2^20-1");
    return target;
}

/// wgmma on sm_90a; issue cycles derived from the dense tensor peak.
std::vector<InstructionRow> wgmmaRows() {
    std::string source = std::string("derived: ") + kH100Whitepaper +
                         ": an H100 SM does 2x the A100 SM's dense rate per clock, 4096 "
                         "flops/clock/SM (989.4 TFLOPS = 132 SMs x 1830 MHz x 4096); m64nNk16 = "
                         "2048 N flops -> N/2 cycles";
    constexpr char const* kLatency = "estimate: completion is observed through wgmma.wait_group; "
                                     "taken as the issue time plus 64 cycles";
    auto row = [&](int n, char const* type, int latency) {
        std::string name = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." +
                           type + "." + type;
        return InstructionRow{Op::matrix(name, Q::WgmmaGroup, 64, n, 16, type, type, "f32", "f32")
                                  .latency(latency, kLatency)
                                  .issue(n / 2, source),
                              whenHas({C::HasWGMMA})};
    };
    return {row(128, "f16", 128), row(256, "f16", 192), row(128, "bf16", 128),
            row(256, "bf16", 192)};
}

} // namespace

/// Ampere, compute capability 8.0 (the A100 die).
TargetDefinition ampere(std::string name) {
    TargetDefinition target = nvidiaCommon(std::move(name), "ampere");
    std::string lanes = std::string(kA100Whitepaper) + ": 64 FP32 and 64 INT32 lanes per SM";
    std::string mma = std::string("derived: ") + kA100Datasheet +
                      " 312 TFLOPS dense FP16 = 108 SMs x 1410 MHz x 2048 flops/clock/SM, i.e. "
                      "512 per tensor core; m16n8k16 = 4096 flops -> 8 cycles";
    return target
        .fact("shared_bytes", 166912, "bytes", std::string(kCudaGuide) + " (163 KB opt-in)")
        .fact("shared_bytes_per_multiprocessor", 167936, "bytes",
              std::string(kCudaGuide) + " (164 KB)")
        .fact("max_warps_per_multiprocessor", 64, "count", kCudaGuide)
        .fact("max_blocks_per_multiprocessor", 32, "count", kCudaGuide)
        .fact("fp32_lanes_per_multiprocessor", 64, "count",
              "NVIDIA A100, Ada and H100 architecture whitepapers (4 tensor cores per SM)")
        .instructions(memoryRows())
        .instructions(aluRows(2, 2, lanes))
        .instructions(mmaSyncRows(8, mma));
}

/// Ada, compute capability 8.9.
TargetDefinition ada(std::string name) {
    TargetDefinition target = nvidiaCommon(std::move(name), "ada");
    std::string lanes =
        std::string(kAdaWhitepaper) + ": 128 FP32 lanes per SM, 64 of them also INT32";
    std::string mma = std::string("derived: ") + kAdaWhitepaper +
                      " 165.2 TFLOPS dense FP16 with FP32 accumulate = 128 SMs x 2520 MHz x 512 "
                      "flops/clock/SM, i.e. 128 per tensor core; m16n8k16 = 4096 flops -> 32 "
                      "cycles";
    return target.with({C::HasFP8Matrix})
        .fact("shared_bytes", 101376, "bytes", std::string(kCudaGuide) + " (99 KB opt-in)")
        .fact("shared_bytes_per_multiprocessor", 102400, "bytes",
              std::string(kCudaGuide) + " (100 KB)")
        .fact("max_warps_per_multiprocessor", 48, "count", kCudaGuide)
        .fact("max_blocks_per_multiprocessor", 24, "count", kCudaGuide)
        .fact("fp32_lanes_per_multiprocessor", 128, "count", kAdaWhitepaper)
        .instructions(memoryRows())
        .instructions(aluRows(1, 2, lanes))
        .instructions(mmaSyncRows(32, mma));
}

/// Hopper, compute capability 9.0; `archSpecific` makes it sm_90a, which adds wgmma and
/// setmaxnreg (PTX ISA: these require the sm_90a target).
TargetDefinition hopper(std::string name, bool archSpecific) {
    TargetDefinition target = nvidiaCommon(std::move(name), "hopper");
    std::string lanes = std::string(kH100Whitepaper) + ": 128 FP32 and 64 INT32 lanes per SM";
    std::string mma =
        "estimate: mma.sync on Hopper is taken at the Ampere per-SM rate (2048 flops/clock/SM, "
        "8 cycles per m16n8k16); the full tensor rate needs wgmma (H100 whitepaper)";
    target.with({C::HasStmatrix, C::HasCpAsyncBulk, C::HasTMA, C::HasMbarrierExpectTx,
                 C::HasThreadBlockClusters, C::HasFP8Matrix});
    if (archSpecific) {
        target.with({C::HasWGMMA, C::HasSetMaxNReg});
    }
    return target
        .fact("shared_bytes", 232448, "bytes", std::string(kCudaGuide) + " (227 KB opt-in)")
        .fact("shared_bytes_per_multiprocessor", 233472, "bytes",
              std::string(kCudaGuide) + " (228 KB)")
        .fact("max_warps_per_multiprocessor", 64, "count", kCudaGuide)
        .fact("max_blocks_per_multiprocessor", 32, "count", kCudaGuide)
        .fact("max_cluster_size", 8, "count",
              std::string(kCudaGuide) + ", Thread Block Clusters (portable maximum)")
        .fact("fp32_lanes_per_multiprocessor", 128, "count", kH100Whitepaper)
        .instructions(memoryRows())
        .instructions(aluRows(1, 2, lanes))
        .instructions(mmaSyncRows(8, mma))
        .instructions(wgmmaRows());
}

namespace {

/// H100 SXM5: the part-specific facts of sm_90 and sm_90a.
TargetDefinition& h100Sxm5(TargetDefinition& target) {
    return target.part("NVIDIA H100 SXM5 80GB")
        .fact("multiprocessor_count", 132, "count", kH100Datasheet)
        .fact("boost_clock_mhz", 1980, "MHz", std::string(kH100Whitepaper) + " (max boost)")
        .fact("memory_bandwidth_gbps", 3350, "GB/s", kH100Datasheet)
        .fact("l2_bytes", 52428800, "bytes", std::string(kH100Whitepaper) + " (50 MB)")
        .fact("peak_fp32_gflops", 66900, "GFLOP/s", kH100Datasheet)
        .fact("peak_fp16_matrix_gflops", 989400, "GFLOP/s",
              std::string(kH100Whitepaper) + " (dense; 1979 with sparsity in the datasheet)")
        .fact("peak_bf16_matrix_gflops", 989400, "GFLOP/s",
              std::string(kH100Whitepaper) + " (dense)")
        .fact("peak_fp8_matrix_gflops", 1978900, "GFLOP/s",
              std::string(kH100Whitepaper) + " (dense)");
}

} // namespace

std::vector<TargetDefinition> nvidiaTargets() {
    TargetDefinition sm80 = ampere("sm_80");
    sm80.part("NVIDIA A100 SXM4 40GB")
        .fact("multiprocessor_count", 108, "count",
              "NVIDIA A100, Ada and H100 architecture whitepapers (4 tensor cores per SM)")
        .fact("boost_clock_mhz", 1410, "MHz", kA100Whitepaper)
        .fact("memory_bandwidth_gbps", 1555, "GB/s", kA100Datasheet)
        .fact("l2_bytes", 41943040, "bytes", std::string(kA100Whitepaper) + " (40 MB)")
        .fact("peak_fp32_gflops", 19500, "GFLOP/s", kA100Datasheet)
        .fact("peak_fp16_matrix_gflops", 312000, "GFLOP/s",
              std::string(kA100Datasheet) + " (dense)")
        .fact("peak_bf16_matrix_gflops", 312000, "GFLOP/s",
              std::string(kA100Datasheet) + " (dense)");

    // GA102 is Ampere with the GA10x SM: Ada's shared memory and occupancy limits, 128 FP32
    // lanes per SM, and tensor cores at a quarter of GA100's rate with FP32 accumulate.
    TargetDefinition sm86 = ampere("sm_86");
    sm86.part("NVIDIA GeForce RTX 3090")
        .fact("shared_bytes", 101376, "bytes", std::string(kCudaGuide) + " (99 KB opt-in)")
        .fact("shared_bytes_per_multiprocessor", 102400, "bytes",
              std::string(kCudaGuide) + " (100 KB)")
        .fact("max_warps_per_multiprocessor", 48, "count", kCudaGuide)
        .fact("max_blocks_per_multiprocessor", 16, "count", kCudaGuide)
        .fact("tensor_cores_per_multiprocessor", 4, "count", kGa102Whitepaper)
        .fact("fp32_lanes_per_multiprocessor", 128, "count", kGa102Whitepaper)
        .fact("multiprocessor_count", 82, "count", kGa102Whitepaper)
        .fact("boost_clock_mhz", 1695, "MHz", kGa102Whitepaper)
        .fact("memory_bandwidth_gbps", 936, "GB/s", kGa102Whitepaper)
        .fact("l2_bytes", 6291456, "bytes", std::string(kGa102Whitepaper) + " (6144 KB)")
        .fact("peak_fp32_gflops", 35600, "GFLOP/s", kGa102Whitepaper)
        .fact("peak_fp16_matrix_gflops", 71000, "GFLOP/s",
              std::string(kGa102Whitepaper) + " (dense, FP32 accumulate)")
        .fact("peak_bf16_matrix_gflops", 71000, "GFLOP/s",
              std::string(kGa102Whitepaper) + " (dense, FP32 accumulate)")
        .instructions(aluRows(
            1, 2, std::string(kGa102Whitepaper) + ": 128 FP32 lanes per SM, 64 of them also INT32"))
        .instructions(mmaSyncRows(
            32, std::string("derived: ") + kGa102Whitepaper +
                    " 71 TFLOPS dense FP16 with FP32 accumulate = 82 SMs x 1695 MHz x 512 "
                    "flops/clock/SM, i.e. 128 per tensor core; m16n8k16 = 4096 flops -> 32 "
                    "cycles"));

    TargetDefinition sm89 = ada("sm_89");
    sm89.part("NVIDIA GeForce RTX 4090")
        .fact("multiprocessor_count", 128, "count", kAdaWhitepaper)
        .fact("boost_clock_mhz", 2520, "MHz", kAdaWhitepaper)
        .fact("memory_bandwidth_gbps", 1008, "GB/s", kAdaWhitepaper)
        .fact("l2_bytes", 75497472, "bytes", std::string(kAdaWhitepaper) + " (72 MB)")
        .fact("peak_fp32_gflops", 82600, "GFLOP/s", kAdaWhitepaper)
        .fact("peak_fp16_matrix_gflops", 165200, "GFLOP/s",
              std::string(kAdaWhitepaper) + " (dense, FP32 accumulate)")
        .fact("peak_bf16_matrix_gflops", 165200, "GFLOP/s",
              std::string(kAdaWhitepaper) + " (dense, FP32 accumulate)");

    TargetDefinition sm90 = hopper("sm_90", false);
    h100Sxm5(sm90);
    TargetDefinition sm90a = hopper("sm_90a", true);
    h100Sxm5(sm90a);

    return {sm80, sm86, sm89, sm90, sm90a};
}

} // namespace kiln::arch::gen
