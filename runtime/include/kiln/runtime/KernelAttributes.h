// KernelAttributes.h: what the loaded code of one kernel needs and allows.
//
// Read from the driver after loading (registers and static shared memory decide how large a
// block the kernel can run with); the launch checks use them beside the device's limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::runtime {

/// Resource use and launch limits of one loaded kernel.
struct KernelAttributes {
    int maxThreadsPerBlock = 0;            ///< what the kernel's register use allows
    int registers = 0;                     ///< registers per thread
    std::size_t staticSharedBytes = 0;     ///< shared memory declared in the code
    std::size_t localBytes = 0;            ///< local (spill/stack) memory per thread
    std::size_t maxDynamicSharedBytes = 0; ///< the current dynamic shared memory limit
    int ptxVersion = 0;                    ///< e.g. 80 for the PTX ISA of the code, 0 if unknown
    int binaryVersion = 0;                 ///< e.g. 90 for the SASS it runs as, 0 if unknown
};

/// Where the loaded code puts one parameter, as the driver reports it.
struct ParameterLayout {
    std::size_t offset = 0;
    std::size_t size = 0;
    bool operator==(ParameterLayout const&) const = default;
};

} // namespace kiln::runtime
