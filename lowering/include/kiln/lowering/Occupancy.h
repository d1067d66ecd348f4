// Occupancy.h: how many workgroups of a kernel one multiprocessor (compute unit) holds at once,
// which sizes the persistent grid of PERSISTENT=1 (Codegen.h): a persistent kernel launches
// min(tiles, multiprocessors x this many) workgroups, each looping over output tiles, so that
// every workgroup is resident from the start and none waits for a second wave.
//
// The figure is the least of four limits of the target (arch-db facts): workgroups per
// multiprocessor, workitems (warps or waves), shared memory (each workgroup's bytes plus what the
// hardware reserves per workgroup: the multiprocessor's bytes less the most one workgroup may
// have, 1 KB on NVIDIA, none on AMD) and registers. Registers are what an assembler allocated
// where known; where not (PTX before ptxas) the bound MIN_BLOCKS promises, else the most a
// workitem may have, so that the figure never exceeds what fits. Launchers that assemble the PTX
// themselves refine it with the registers ptxas reports (withAssembledRegisters). It is a
// performance figure only: a persistent kernel computes every tile at any grid size.
#pragma once

#include "kiln/lowering/Codegen.h"

#include <cstdint>

namespace kiln::lowering {

/// Whether `schedule` asks for persistent tiles (PERSISTENT=1).
bool persistentTiles(std::map<std::string, std::int64_t> const& schedule);

/// Workgroups of `kernel` (its workitems, shared memory and schedule) that one multiprocessor of
/// its target holds at once when each workitem has `registers` registers (0: not known yet);
/// at least 1.
std::int64_t workgroupsPerMultiprocessor(EmittedKernel const& kernel, int registers);

/// `kernel` with its persistent grid's workgroups per multiprocessor computed again for the
/// `registers` an assembler allocated (unchanged for a kernel that is not persistent).
EmittedKernel withAssembledRegisters(EmittedKernel kernel, int registers);

} // namespace kiln::lowering
