// DeviceDescription.cpp: device summaries and derived figures.
#include "kiln/runtime/DeviceDescription.h"

namespace kiln::runtime {

std::string DeviceDescription::summary() const {
    return "device " + std::to_string(ordinal) + " '" + name + "' (" + target + ")";
}

double DeviceDescription::peakMemoryBandwidthGBps() const {
    if (memoryClockKHz <= 0 || memoryBusWidthBits <= 0)
        return 0.0;
    return 2.0 * static_cast<double>(memoryClockKHz) * 1e3 * (memoryBusWidthBits / 8.0) / 1e9;
}

} // namespace kiln::runtime
