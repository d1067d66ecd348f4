// LaunchLimits.h: grid, block and shared memory checked against the device and kernel before a
// launch.
//
// A launch the hardware would refuse comes back from the driver as a bare
// CUDA_ERROR_INVALID_VALUE; checked here first, the error says which extent is over which limit,
// for which kernel on which device. Pure functions of the descriptions: testable without a GPU.
#pragma once

#include "kiln/runtime/DeviceDescription.h"
#include "kiln/runtime/KernelAttributes.h"
#include "kiln/runtime/LaunchConfig.h"
#include "kiln/runtime/Status.h"

#include <string_view>

namespace kiln::runtime {

/// Checks `config` against the device's grid/block/shared limits and the kernel's thread and
/// shared-memory limits (dynamic shared memory up to the device's opt-in limit is allowed here:
/// the launch raises the kernel's limit first). LaunchOutOfLimits with a message naming the
/// kernel, the device, the extent and the limit.
Status checkLaunchLimits(DeviceDescription const& device, std::string_view kernelName,
                         KernelAttributes const& kernel, LaunchConfig const& config);

} // namespace kiln::runtime
