// Occupancy.cpp: workgroups a multiprocessor holds at once, from arch-db's limits (Occupancy.h).
#include "kiln/lowering/Occupancy.h"

#include "kiln/arch-db/ArchLibrary.h"

#include <algorithm>

namespace kiln::lowering {

bool persistentTiles(std::map<std::string, std::int64_t> const& schedule) {
    auto const p = schedule.find("PERSISTENT");
    return p != schedule.end() && p->second != 0;
}

std::int64_t workgroupsPerMultiprocessor(EmittedKernel const& kernel, int registers) {
    arch::Arch const& arch = arch::ArchLibrary::get(kernel.target);
    auto fact = [&](char const* name) { return arch.fact(name); };
    std::int64_t const workitems = kernel.block[0] * kernel.block[1] * kernel.block[2];
    std::int64_t const wave = fact("wave_size").value_or(32);
    std::int64_t const waves = (workitems + wave - 1) / wave;
    std::int64_t most = fact("max_blocks_per_multiprocessor").value_or(32);
    auto limit = [&](std::int64_t n) { most = std::min(most, n); };
    // Workitems: NVIDIA counts warps per multiprocessor; AMD waves per SIMD, four SIMDs a CU.
    if (auto const warps = fact("max_warps_per_multiprocessor"))
        limit(*warps / waves);
    auto const simds = fact("simds_per_multiprocessor");
    if (auto const perSimd = fact("max_waves_per_simd"); perSimd && simds)
        limit(*perSimd * *simds / waves);
    // Shared memory, with what the hardware keeps per workgroup.
    if (auto const perMultiprocessor = fact("shared_bytes_per_multiprocessor");
        perMultiprocessor && kernel.sharedBytes > 0) {
        std::int64_t const reserved = std::max<std::int64_t>(
            0, *perMultiprocessor - fact("shared_bytes").value_or(*perMultiprocessor));
        limit(*perMultiprocessor / (static_cast<std::int64_t>(kernel.sharedBytes) + reserved));
    }
    // Registers.
    if (auto const file = fact("registers_per_multiprocessor")) { // NVIDIA: one file
        std::int64_t perWorkitem = registers;
        if (perWorkitem <= 0) {
            auto const blocks = kernel.schedule.find("MIN_BLOCKS");
            perWorkitem = blocks != kernel.schedule.end() && blocks->second > 0
                              ? *file / (blocks->second * workitems)
                              : fact("max_registers_per_thread").value_or(255);
        }
        // Allocated per warp in units of 256 (8 a workitem).
        perWorkitem = std::max<std::int64_t>(8, (perWorkitem + 7) / 8 * 8);
        limit(*file / (perWorkitem * waves * wave));
    } else if (auto const perWave = fact("vgprs_per_wave"); perWave && simds && registers > 0) {
        // AMD: each SIMD's file holds whole waves; a workgroup's waves spread over the SIMDs.
        std::int64_t const granule = fact("vgpr_alloc_granule").value_or(8);
        std::int64_t const each = (registers + granule - 1) / granule * granule;
        limit(*perWave / each * *simds / waves);
    }
    return std::max<std::int64_t>(1, most);
}

EmittedKernel withAssembledRegisters(EmittedKernel kernel, int registers) {
    if (kernel.workgroupsPerMultiprocessor > 0)
        kernel.workgroupsPerMultiprocessor = workgroupsPerMultiprocessor(kernel, registers);
    return kernel;
}

} // namespace kiln::lowering
