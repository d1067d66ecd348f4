// LaunchConfig.h: the shape of one kernel launch (grid, block, dynamic shared memory).
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

/// Grid and block extents and the dynamic shared memory of one launch.
struct LaunchConfig {
    Dim3 grid;
    Dim3 block;
    std::size_t sharedBytes = 0; ///< dynamic shared memory per block
};

} // namespace kiln::runtime
