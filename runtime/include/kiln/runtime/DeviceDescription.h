// DeviceDescription.h: what a device is and what it allows, read once when it is opened.
//
// Platform-neutral: the CUDA platform fills it from cuDeviceGetAttribute, the HIP platform from
// hipDeviceGetAttribute (and the processor from hipDeviceProp_t::gcnArchName). Launch checks read
// their limits from here, so tests can check them against a made-up device on a machine with no
// GPU.
#pragma once

#include "kiln/runtime/LaunchConfig.h"

#include <cstdint>
#include <string>

namespace kiln::runtime {

/// Properties and limits of one device.
struct DeviceDescription {
    std::string platform; ///< "cuda", "hip"
    int ordinal = 0;      ///< index within the platform
    std::string name;     ///< e.g. "NVIDIA H100 80GB HBM3"
    std::string target;   ///< the architecture as codegen names it: "sm_80", "sm_90a", "gfx942"
    int computeMajor = 0; ///< compute capability (CUDA) or GFX major
    int computeMinor = 0;
    int driverVersion = 0; ///< e.g. 13000 for CUDA 13.0, 60342134 for HIP 6.3.42134

    int multiprocessorCount = 0;
    int warpSize = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t totalMemoryBytes = 0;
    std::int64_t clockKHz = 0;       ///< SM clock; 0 when the driver does not say
    std::int64_t memoryClockKHz = 0; ///< 0 when the driver does not say
    int memoryBusWidthBits = 0;      ///< 0 when the driver does not say

    int maxThreadsPerBlock = 0;
    Dim3 maxBlock; ///< per-dimension block limits
    Dim3 maxGrid;  ///< per-dimension grid limits
    int maxThreadsPerMultiprocessor = 0;
    int registersPerBlock = 0;
    int registersPerMultiprocessor = 0;
    std::int64_t sharedBytesPerBlock = 0;      ///< without opting in (48 KB on NVIDIA)
    std::int64_t sharedBytesPerBlockOptin = 0; ///< the most a kernel can opt in to
    std::int64_t sharedBytesPerMultiprocessor = 0;

    /// "device 0 'NVIDIA H100 80GB HBM3' (sm_90)", for messages.
    std::string summary() const;
    /// Peak DRAM bandwidth from the memory clock and bus width in GB/s (double data rate), or 0.
    double peakMemoryBandwidthGBps() const;
};

} // namespace kiln::runtime
