// ArchOverlay.cpp: device facts named as the architecture database names them.
#include "kiln/runtime/ArchOverlay.h"

#include "kiln/arch-db/ArchError.h"
#include "kiln/arch-db/ArchLibrary.h"

namespace kiln::runtime {

std::vector<arch::FactOverlay> deviceFacts(DeviceDescription const& device) {
    std::string const from = device.platform + " " + device.summary() + ": ";
    std::vector<arch::FactOverlay> facts;
    auto const add = [&](char const* name, std::int64_t value, char const* unit,
                         char const* attribute) {
        if (value > 0)
            facts.push_back({name, value, unit, from + attribute});
    };
    add("multiprocessor_count", device.multiprocessorCount, "count", "multiprocessor count");
    add("wave_size", device.warpSize, "threads", "warp size");
    add("l2_bytes", device.l2Bytes, "bytes", "L2 cache size");
    add("max_threads_per_block", device.maxThreadsPerBlock, "threads", "max threads per block");
    add("max_registers_per_block", device.registersPerBlock, "registers",
        "max registers per block");
    add("registers_per_multiprocessor", device.registersPerMultiprocessor, "registers",
        "max registers per multiprocessor");
    add("shared_bytes", device.sharedBytesPerBlockOptin, "bytes",
        "max shared memory per block (opt-in)");
    add("shared_bytes_default", device.sharedBytesPerBlock, "bytes", "max shared memory per block");
    add("shared_bytes_per_multiprocessor", device.sharedBytesPerMultiprocessor, "bytes",
        "max shared memory per multiprocessor");
    if (device.warpSize > 0) {
        add("max_warps_per_multiprocessor", device.maxThreadsPerMultiprocessor / device.warpSize,
            "count", "max threads per multiprocessor / warp size");
    }
    add("boost_clock_mhz", device.clockKHz / 1000, "MHz", "clock rate");
    add("memory_bandwidth_gbps", static_cast<std::int64_t>(device.peakMemoryBandwidthGBps()),
        "GB/s", "2 x memory clock x bus width");
    add("memory_bytes", device.totalMemoryBytes, "bytes", "total memory");
    return facts;
}

Expected<arch::Arch> liveArch(DeviceDescription const& device, std::string_view target) {
    std::string const name = target.empty() ? device.target : std::string(target);
    try {
        arch::Arch const* base = arch::ArchLibrary::instance().find(name);
        if (!base) {
            // The message of the library's own lookup lists the known targets.
            (void)arch::ArchLibrary::get(name);
            return Error(ErrorCode::NotFound, "the architecture database has no target '" + name +
                                                  "' for " + device.summary());
        }
        std::vector<arch::FactOverlay> const facts = deviceFacts(device);
        return base->withOverlay(facts);
    } catch (arch::ArchError const& error) {
        return Error(ErrorCode::NotFound,
                     "no architecture facts for " + device.summary() + ": " + error.what());
    }
}

} // namespace kiln::runtime
