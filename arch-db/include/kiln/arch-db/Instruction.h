// Instruction.h: what the database knows about one target instruction.
//
// The instruction scheduler and the AMDGCN wait-count inserter need, per instruction, how long
// its result takes, how long it occupies its unit, which counter or queue tracks it, how far its
// immediate offset reaches and, for matrix instructions, the shape and operand types. Latency
// and issue cycles each carry their source; an estimate says so ("estimate: ...").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::arch {

/// What an instruction does, coarsely: which scheduler resource it competes for.
enum class InstructionKind : std::uint8_t {
    Memory, ///< vector memory: global, buffer, shared / LDS, asynchronous copies
    Scalar, ///< scalar memory and scalar ALU (AMD SMEM / SALU)
    Alu,    ///< vector ALU
    Matrix, ///< tensor / matrix core
    Sync,   ///< waits, barriers, fences, commit groups
};

/// The counter or queue that tells a later instruction the result is ready.
enum class WaitQueue : std::uint8_t {
    None,       ///< fixed latency or hardware register scoreboard: no explicit wait
    Vmcnt,      ///< AMD s_waitcnt vmcnt
    Lgkmcnt,    ///< AMD s_waitcnt lgkmcnt
    Expcnt,     ///< AMD s_waitcnt expcnt
    Vscnt,      ///< AMD s_waitcnt_vscnt (GFX10+ stores)
    AsyncGroup, ///< NVIDIA cp.async.commit_group / cp.async.wait_group
    Mbarrier,   ///< NVIDIA mbarrier transaction count (TMA, cp.async.bulk)
    WgmmaGroup, ///< NVIDIA wgmma.commit_group / wgmma.wait_group
};

/// JSON / display names, in enumerator order.
inline constexpr std::array<std::string_view, 5> kInstructionKindNames{"memory", "scalar", "alu",
                                                                       "matrix", "sync"};
inline constexpr std::array<std::string_view, 8> kWaitQueueNames{
    "none", "vmcnt", "lgkmcnt", "expcnt", "vscnt", "async_group", "mbarrier", "wgmma_group"};

/// The name of an instruction kind ("memory", ...).
constexpr std::string_view name(InstructionKind kind) {
    return kInstructionKindNames[static_cast<std::size_t>(kind)];
}
/// The name of a wait queue ("vmcnt", ...).
constexpr std::string_view name(WaitQueue queue) {
    return kWaitQueueNames[static_cast<std::size_t>(queue)];
}
/// The kind with this name, or nothing.
std::optional<InstructionKind> instructionKindFromName(std::string_view name);
/// The wait queue with this name, or nothing.
std::optional<WaitQueue> waitQueueFromName(std::string_view name);

/// The range of an immediate address offset the encoding accepts, in bytes, both ends included.
struct OffsetRange {
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::string source; ///< where the limit comes from (ISA document, assembler)
    bool operator==(OffsetRange const&) const = default;
};

/// D = A x B + C for one matrix instruction: M x N x K per block, element types by operand.
struct MatrixShape {
    int m = 0;
    int n = 0;
    int k = 0;
    int blocks = 1; ///< independent blocks per instruction (AMD MFMA "blocks")
    std::string a;  ///< element type of A: f16, bf16, f32, tf32, e4m3, ...
    std::string b;
    std::string c;
    std::string d;
    bool operator==(MatrixShape const&) const = default;
};

/// Timing and encoding facts about one instruction on one target.
struct Instruction {
    std::string name;                 ///< mnemonic as the target's assembler prints it
    std::vector<std::string> aliases; ///< other spellings that find this entry
    InstructionKind kind = InstructionKind::Alu;
    int latency = 0;     ///< cycles from issue until a dependent instruction may use the result
    int issueCycles = 0; ///< cycles the issuing unit is busy (reciprocal throughput per wave)
    WaitQueue waitQueue = WaitQueue::None;
    int bytesPerLane = 0;              ///< memory instructions: bytes each lane moves
    std::optional<OffsetRange> offset; ///< immediate offset limits, where the encoding has one
    std::optional<MatrixShape> matrix; ///< matrix instructions only
    std::string latencySource;         ///< where latency comes from ("estimate: ..." if guessed)
    std::string issueSource;           ///< where issueCycles comes from

    /// True when the latency is an estimate rather than a published or derived figure.
    bool latencyIsEstimate() const { return latencySource.starts_with("estimate:"); }
    /// True when the issue cycles are an estimate rather than a published or derived figure.
    bool issueIsEstimate() const { return issueSource.starts_with("estimate:"); }
    bool operator==(Instruction const&) const = default;
};

} // namespace kiln::arch
