// EPILOGUE, the staged epilogue's schedule parameter: see StagedEpilogue.h.
#include "kiln/lowering/StagedEpilogue.h"

#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"

#include <fmt/format.h>

namespace kiln::lowering {

bool stagedEpilogue(std::map<std::string, std::int64_t> const& schedule) {
    auto const e = schedule.find("EPILOGUE");
    return e != schedule.end() && e->second == 1;
}

void checkEpilogueParameter(CodegenOptions const& options) {
    auto const e = options.schedule.find("EPILOGUE");
    if (e == options.schedule.end())
        return;
    if (e->second != 0 && e->second != 1)
        throw UserError(fmt::format("EPILOGUE={} must be 0 (the result stored from registers) or "
                                    "1 (staged in shared memory and stored by the copy engine)",
                                    e->second));
    auto const tma = options.schedule.find("TMA");
    // AMD targets stage the tile in LDS and store it with the whole workgroup (StagingLayout.h).
    if (e->second == 1 && (tma == options.schedule.end() || tma->second != 1) &&
        arch::ArchLibrary::get(options.target).vendor() != arch::Vendor::Amd)
        throw UserError("EPILOGUE=1 stores the result with the copy engine (cp.async.bulk.tensor) "
                        "through a tensor map, as TMA=1 loads the operands; it needs TMA=1 "
                        "(the store by the whole workgroup is written for AMD targets only)");
}

std::int64_t stagingSlots(std::int64_t blocks) {
    return blocks % 2 == 0 ? 2 : 1;
}

std::int64_t stagingBytes(std::int64_t rows, std::int64_t columns) {
    std::int64_t const blocks = columns / kStagedBlockColumns;
    return stagingSlots(blocks) * rows * kStagedBlockColumns * 2;
}

} // namespace kiln::lowering
