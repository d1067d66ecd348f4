// CostModel.h: an analytical estimate of a schedule's run time from the target's facts.
//
// Used where there is no GPU (to rank and pick schedules for sm_90a or gfx942 on a laptop) and
// to prune where there is (measure only the model's best). It reads arch-db only: the number of
// multiprocessors, shared memory and registers per multiprocessor (occupancy), peak matrix and
// FP32 rates (compute), memory bandwidth and L2 size (traffic), and the global-load latency
// (how many bytes must be in flight to hide it, Little's law). The schedule parameters it
// understands are those of the shipped pipelines: MT_M, MT_N, MT_K, STAGES, WG_SIZE, MMA, WT_M,
// WT_N, TT_M, TT_N, MIN_BLOCKS, and PERSISTENT with WARP_SPECIALIZE and TMA (GEMM),
// WG_SIZE and VEC (element-wise), ROWS, COOP, LANES, VEC, UNROLL, SPLIT, ROW_VEC, ONLINE, HOLD
// and PREFETCH (reduction); missing ones take the pipeline's defaults. Register counts are
// estimated unless the compile step measured them (ptxas), as are spills.
#pragma once

#include "kiln/arch-db/Arch.h"
#include "kiln/scheduler/Problem.h"

#include <map>
#include <optional>
#include <string>

namespace kiln::scheduler {

/// What a compiled kernel really uses, when known (overrides the model's estimates).
struct ResourceUsage {
    std::optional<int> registers;            ///< per thread
    std::optional<std::int64_t> sharedBytes; ///< per block
    std::optional<std::int64_t> spillBytes;  ///< per thread, stored to local memory
    /// Made for the problem's sizes (`--specialize`): a cooperative Reduce's rows of at most
    /// kMaxWrittenOutChunks chunks are written out, and held in registers unless HOLD=0.
    bool madeForSizes = false;
};

/// The model's estimate and how it got there.
struct CostEstimate {
    bool feasible = true;            ///< false: the block does not fit on a multiprocessor
    std::string reason;              ///< why not, when infeasible
    double microseconds = 0;         ///< the estimate (infinity when infeasible)
    double computeUs = 0;            ///< time at the achievable compute rate
    double memoryUs = 0;             ///< time at the achievable DRAM rate
    double dramBytes = 0;            ///< DRAM traffic after L2 reuse
    int threads = 0;                 ///< per block
    int registers = 0;               ///< per thread (estimated or measured)
    std::int64_t sharedBytes = 0;    ///< per block
    int blocksPerMultiprocessor = 0; ///< occupancy
    std::string limitedBy;           ///< which resource limits occupancy
    double waves = 0;                ///< blocks / (multiprocessors x blocks per multiprocessor)
    double latencyHiding = 1;        ///< share of the memory latency hidden (0..1]
    /// Each tile's pipeline fill and epilogue that no multiply hides (warpgroup pipelines; with
    /// PERSISTENT=1 and a producer warpgroup the next tile's fill overlaps the epilogue).
    double tilesUs = 0;
};

/// Estimates the run time of `problem` on `arch` under the schedule `params`.
CostEstimate estimateCost(Problem const& problem, arch::Arch const& arch,
                          std::map<std::string, std::int64_t> const& params,
                          ResourceUsage const& measured = {});

} // namespace kiln::scheduler
