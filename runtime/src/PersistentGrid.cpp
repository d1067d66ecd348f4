// PersistentGrid.cpp: min(tiles, multiprocessors x workgroups per multiprocessor)
// (PersistentGrid.h).
#include "kiln/runtime/PersistentGrid.h"

#include <algorithm>
#include <limits>

namespace kiln::runtime {

Dim3 persistentGrid(Dim3 tiles, std::uint32_t workgroupsPerMultiprocessor, int multiprocessors,
                    std::uint32_t clusterBlocks) {
    std::uint64_t const cluster = std::max<std::uint32_t>(1, clusterBlocks);
    std::uint64_t launched = (tiles.count() + cluster - 1) / cluster * cluster;
    if (multiprocessors > 0 && workgroupsPerMultiprocessor > 0)
        launched =
            std::min(launched, std::max(cluster, std::uint64_t{workgroupsPerMultiprocessor} *
                                                     static_cast<std::uint64_t>(multiprocessors) /
                                                     cluster * cluster));
    launched = std::min<std::uint64_t>(launched, std::numeric_limits<std::uint32_t>::max() /
                                                     cluster * cluster);
    return Dim3{static_cast<std::uint32_t>(launched), 1, 1};
}

} // namespace kiln::runtime
