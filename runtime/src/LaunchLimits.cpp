// LaunchLimits.cpp: launch shapes against device and kernel limits.
#include "kiln/runtime/LaunchLimits.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace kiln::runtime {
namespace {

Error outOfLimits(DeviceDescription const& device, std::string_view kernelName,
                  std::string const& what) {
    return Error(ErrorCode::LaunchOutOfLimits, "launch of '" + std::string(kernelName) + "' on " +
                                                   device.summary() + ": " + what);
}

/// Checks each extent of `dims` is at least 1 and at most the limit's.
Status checkExtents(DeviceDescription const& device, std::string_view kernelName, char const* what,
                    Dim3 const& dims, Dim3 const& limits) {
    std::array<std::uint32_t, 3> const extents{dims.x, dims.y, dims.z};
    std::array<std::uint32_t, 3> const maxima{limits.x, limits.y, limits.z};
    std::array<char const*, 3> const axes{"x", "y", "z"};
    for (std::size_t i = 0; i < 3; ++i) {
        if (extents[i] == 0) {
            return outOfLimits(device, kernelName,
                               std::string(what) + " " + dims.toString() +
                                   " has a zero extent in " + axes[i]);
        }
        if (extents[i] > maxima[i]) {
            return outOfLimits(device, kernelName,
                               std::string(what) + " " + dims.toString() + ": " + axes[i] + " = " +
                                   std::to_string(extents[i]) + " is over the device's limit of " +
                                   std::to_string(maxima[i]));
        }
    }
    return {};
}

} // namespace

Status checkLaunchLimits(DeviceDescription const& device, std::string_view kernelName,
                         KernelAttributes const& kernel, LaunchConfig const& config) {
    KILN_RETURN_IF_ERROR(checkExtents(device, kernelName, "grid", config.grid, device.maxGrid));
    KILN_RETURN_IF_ERROR(checkExtents(device, kernelName, "block", config.block, device.maxBlock));
    std::uint64_t const threads = config.block.count();
    if (threads > static_cast<std::uint64_t>(device.maxThreadsPerBlock)) {
        return outOfLimits(device, kernelName,
                           "block " + config.block.toString() + " has " + std::to_string(threads) +
                               " threads; the device allows " +
                               std::to_string(device.maxThreadsPerBlock) + " per block");
    }
    if (kernel.maxThreadsPerBlock > 0 &&
        threads > static_cast<std::uint64_t>(kernel.maxThreadsPerBlock)) {
        return outOfLimits(device, kernelName,
                           "block " + config.block.toString() + " has " + std::to_string(threads) +
                               " threads; the kernel allows " +
                               std::to_string(kernel.maxThreadsPerBlock) + " (it uses " +
                               std::to_string(kernel.registers) + " registers per thread)");
    }
    if (config.cluster.count() != 1) {
        // Zero extents here; the portable limit on the blocks of a cluster below.
        KILN_RETURN_IF_ERROR(checkExtents(device, kernelName, "cluster", config.cluster,
                                          {UINT32_MAX, UINT32_MAX, UINT32_MAX}));
        if (device.platform != "cuda" || device.computeMajor < 9) {
            return outOfLimits(device, kernelName,
                               "cluster " + config.cluster.toString() +
                                   ": thread-block clusters need an NVIDIA device of compute "
                                   "capability 9.0 or newer");
        }
        if (config.cluster.count() > kMaxClusterBlocks) {
            return outOfLimits(device, kernelName,
                               "cluster " + config.cluster.toString() + " has " +
                                   std::to_string(config.cluster.count()) +
                                   " blocks; a portable cluster has at most " +
                                   std::to_string(kMaxClusterBlocks));
        }
        if (config.grid.x % config.cluster.x || config.grid.y % config.cluster.y ||
            config.grid.z % config.cluster.z) {
            return outOfLimits(device, kernelName,
                               "grid " + config.grid.toString() +
                                   " is not a whole number of "
                                   "clusters " +
                                   config.cluster.toString());
        }
    }
    std::uint64_t const shared = kernel.staticSharedBytes + config.sharedBytes;
    std::uint64_t const limit = static_cast<std::uint64_t>(
        std::max(device.sharedBytesPerBlockOptin, device.sharedBytesPerBlock));
    if (shared > limit) {
        return outOfLimits(device, kernelName,
                           std::to_string(config.sharedBytes) +
                               " bytes of dynamic shared memory plus " +
                               std::to_string(kernel.staticSharedBytes) +
                               " static is over the device's limit of " + std::to_string(limit) +
                               " bytes per block (opt-in)");
    }
    return {};
}

} // namespace kiln::runtime
