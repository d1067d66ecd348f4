// FakeDevice.h: the description of an H100 SXM5 as the CUDA driver reports it, for checks that
// need a device's limits on a machine without one.
#pragma once

#include "kiln/runtime/DeviceDescription.h"

namespace kiln::runtime::test {

inline DeviceDescription fakeH100() {
    DeviceDescription d;
    d.platform = "cuda";
    d.ordinal = 0;
    d.name = "NVIDIA H100 80GB HBM3";
    d.target = "sm_90";
    d.computeMajor = 9;
    d.computeMinor = 0;
    d.driverVersion = 13000;
    d.multiprocessorCount = 132;
    d.warpSize = 32;
    d.l2Bytes = 52428800;
    d.totalMemoryBytes = 85520809984;
    d.clockKHz = 1980000;
    d.memoryClockKHz = 2619000;
    d.memoryBusWidthBits = 5120;
    d.maxThreadsPerBlock = 1024;
    d.maxBlock = {1024, 1024, 64};
    d.maxGrid = {2147483647, 65535, 65535};
    d.maxThreadsPerMultiprocessor = 2048;
    d.registersPerBlock = 65536;
    d.registersPerMultiprocessor = 65536;
    d.sharedBytesPerBlock = 49152;
    d.sharedBytesPerBlockOptin = 232448;
    d.sharedBytesPerMultiprocessor = 233472;
    return d;
}

} // namespace kiln::runtime::test
