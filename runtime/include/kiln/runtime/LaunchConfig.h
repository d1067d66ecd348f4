// LaunchConfig.h: the shape of one kernel launch (grid, block, cluster, dynamic shared memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::runtime {

/// Three extents, x fastest; each at least 1 in a valid launch.
struct Dim3 {
    std::uint32_t x = 1;
    std::uint32_t y = 1;
    std::uint32_t z = 1;
    /// x * y * z.
    std::uint64_t count() const { return std::uint64_t{x} * y * z; }
    /// "(x, y, z)".
    std::string toString() const;
    bool operator==(Dim3 const&) const = default;
};

/// The most blocks of a portable thread-block cluster (sm_90: 8; 16 needs the non-portable
/// opt-in, which Kiln does not ask for).
inline constexpr std::uint64_t kMaxClusterBlocks = 8;

/// Grid and block extents and the dynamic shared memory of one launch.
struct LaunchConfig {
    Dim3 grid;
    Dim3 block;
    std::size_t sharedBytes = 0; ///< dynamic shared memory per block
    /// Blocks per thread-block cluster (sm_90+), which must divide the grid; (1, 1, 1) launches
    /// without clusters.
    Dim3 cluster;
};

} // namespace kiln::runtime
