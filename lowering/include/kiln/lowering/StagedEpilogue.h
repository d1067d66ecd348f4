// StagedEpilogue.h: the schedule parameter EPILOGUE, a GEMM's result written through shared
// memory by the copy engine instead of from registers.
//
// With EPILOGUE=1 and TMA=1 (sm_90a) the consumers convert their accumulators (after the fused
// element-wise epilogue) to the output's type and write them to a staging buffer in shared memory,
// in the 128-byte swizzle a TMA tensor map describes; one workitem copies the buffer to the tensor
// with cp.async.bulk.tensor stores, which the copy engine clips at the tensor's bounds, so that
// ragged tiles need no masks and the stores leave the consumers' instructions. The tile goes out
// block by block (64 columns of 16-bit elements along the tensor's contiguous axis), through
// stagingSlots() buffers: one is written while the copy engine still reads another. The walk
// is the kernel walker's (KernelWalker::storeStaged, StagedTile.h); the instructions are
// lowering/ptx/PtxEpilogue.cpp's; docs/codegen.md, "Staged epilogue", says why each step.
//
// On AMD targets (no copy engine) EPILOGUE=1 stages the whole tile in LDS, in the tensor's type,
// where the main loop's tiles were, rows padded against bank conflicts; after a barrier the
// workgroup stores it in coalesced runs of up to 16 bytes (global_store_dwordx4), masked at the
// tensor's edges (lowering/src/StagingLayout.h, amdgcn/emitter/AmdgcnEpilogue.cpp).
#pragma once

#include "kiln/lowering/Codegen.h"

#include <cstdint>
#include <map>
#include <string>

namespace kiln::lowering {

/// Whether `schedule` asks for the staged epilogue (EPILOGUE=1).
bool stagedEpilogue(std::map<std::string, std::int64_t> const& schedule);

/// Refuses EPILOGUE other than 0 (stores from registers) or 1, and EPILOGUE=1 without TMA=1 on
/// NVIDIA targets: the staged tile is written by the copy engine, through a tensor map as the
/// loads are. AMD targets stage the whole tile in LDS and the workgroup stores it
/// (lowering/src/StagingLayout.h, amdgcn/emitter/AmdgcnEpilogue.cpp).
void checkEpilogueParameter(CodegenOptions const& options);

/// The 16-bit elements of a block of the staged tile along the tensor's contiguous axis: one
/// 128-byte row of the swizzle, the widest box row a 128-byte-swizzled tensor map copies.
inline constexpr std::int64_t kStagedBlockColumns = 64;

/// The staging buffers of a tile of `blocks` blocks: 2 where the blocks are even in number (block
/// b in buffer b % 2, so that the next tile's first block goes to the buffer its predecessor's
/// last did not use), 1 otherwise.
std::int64_t stagingSlots(std::int64_t blocks);

/// The bytes of shared memory the staging buffers of a tile of `rows` x `columns` 16-bit
/// elements take (columns along the tensor's contiguous axis, a multiple of
/// kStagedBlockColumns). The search space's constraint counts the same.
std::int64_t stagingBytes(std::int64_t rows, std::int64_t columns);

} // namespace kiln::lowering
