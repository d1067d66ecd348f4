// PersistentGrid.h: the grid a persistent kernel is launched with.
//
// A kernel generated with PERSISTENT=1 loops over its output tiles: the manifest's "grid" counts
// the tiles, and "persistent": {"workgroups_per_multiprocessor": N} says how many of its
// workgroups one multiprocessor holds at once. Every launcher (DeviceRun, the sweep's worker,
// the exported C++ header and C launch function) launches min(tiles, multiprocessors x N)
// workgroups along x, so that every workgroup is resident from the start; the kernel takes tile
// t, t + launched, ... from its linear number t, so any grid computes every tile once.
#pragma once

#include "kiln/runtime/LaunchConfig.h"

#include <cstdint>

namespace kiln::runtime {

/// The persistent grid for `tiles` on a device of `multiprocessors` that holds
/// `workgroupsPerMultiprocessor` workgroups on each: min(tiles, multiprocessors x N) along x
/// (at least 1 where there are tiles; the product of `tiles`' extents when the device does not
/// say how many multiprocessors it has). In clusters of `clusterBlocks` workgroups: the tiles
/// rounded up and what the device holds rounded down to a multiple of it, at least one cluster.
Dim3 persistentGrid(Dim3 tiles, std::uint32_t workgroupsPerMultiprocessor, int multiprocessors,
                    std::uint32_t clusterBlocks = 1);

} // namespace kiln::runtime
