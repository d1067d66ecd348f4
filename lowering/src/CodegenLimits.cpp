// What every code generator checks the same way before and after it writes a kernel: the
// schedule parameters it reads itself (kCodegenParameters), and the registers an assembler
// allocated against what the target has. A kernel the target cannot run is bad input, named
// with the parameter or the limit, not code for a driver to refuse later.
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"
#include "kiln/lowering/Clusters.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/StagedEpilogue.h"

#include <fmt/format.h>

namespace kiln::lowering {

std::string scheduleText(std::map<std::string, std::int64_t> const& schedule) {
    std::string text;
    for (auto const& [name, value] : schedule)
        text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, value);
    return text;
}

void checkCodegenParameters(CodegenOptions const& options) {
    arch::Arch const& arch = arch::ArchLibrary::get(options.target);
    if (auto const stages = options.schedule.find("STAGES"); stages != options.schedule.end()) {
        if (stages->second < 0)
            throw UserError(fmt::format("STAGES={} is not a number of shared-memory copies: it "
                                        "must be 0 (operands read from memory) or more",
                                        stages->second));
        if (stages->second > 1 && !arch.has(arch::Capability::HasCpAsync))
            throw UserError(fmt::format(
                "STAGES={} pipelines a loop through {} copies of shared memory with asynchronous "
                "copies (cp.async), which {} does not have; use STAGES=1",
                stages->second, stages->second, options.target));
    }
    if (auto const tma = options.schedule.find("TMA"); tma != options.schedule.end()) {
        if (tma->second != 0 && tma->second != 1)
            throw UserError(fmt::format("TMA={} must be 0 (tiles staged by every workitem) or 1 "
                                        "(loaded by the copy engine)",
                                        tma->second));
        if (tma->second == 1 &&
            !(arch.has(arch::Capability::HasTMA) && arch.has(arch::Capability::HasWGMMA)))
            throw UserError(
                fmt::format("TMA=1 loads the tiles wgmma reads with the copy engine "
                            "(cp.async.bulk.tensor), which {} does not have with wgmma; "
                            "use TMA=0 (sm_90a has both)",
                            options.target));
        auto const stages = options.schedule.find("STAGES");
        if (tma->second == 1 && (stages == options.schedule.end() || stages->second < 2))
            throw UserError("TMA=1 fills the copies of a pipelined K loop; it needs STAGES >= 2");
    }
    if (auto const ahead = options.schedule.find("PREFETCH");
        ahead != options.schedule.end() && (ahead->second < 0 || ahead->second > kMaxPrefetch))
        throw UserError(fmt::format("PREFETCH={} is not a number of workgroups ahead: it must be "
                                    "0 (no prefetch) to {}",
                                    ahead->second, kMaxPrefetch));
    if (auto const hold = options.schedule.find("HOLD");
        hold != options.schedule.end() && hold->second != 0 && hold->second != 1)
        throw UserError(fmt::format("HOLD={} must be 0 (a row's chunks read again in each pass) "
                                    "or 1 (held in registers where they are written out)",
                                    hold->second));
    if (auto const ws = options.schedule.find("WARP_SPECIALIZE"); ws != options.schedule.end()) {
        if (ws->second != 0 && ws->second != 1)
            throw UserError(fmt::format("WARP_SPECIALIZE={} must be 0 or 1 (a producer warpgroup "
                                        "issues the copy engine's loads)",
                                        ws->second));
        auto const tma = options.schedule.find("TMA");
        if (ws->second == 1 && (tma == options.schedule.end() || tma->second != 1))
            throw UserError("WARP_SPECIALIZE=1 gives the copy engine's loads (TMA=1) to a "
                            "producer warpgroup; it needs TMA=1");
    }
    checkEpilogueParameter(options);
    if (auto const pp = options.schedule.find("PINGPONG"); pp != options.schedule.end()) {
        if (pp->second != 0 && pp->second != 1)
            throw UserError(fmt::format("PINGPONG={} must be 0 (the consumer warpgroups share "
                                        "each tile) or 1 (two consumer warpgroups, each its own "
                                        "tiles)",
                                        pp->second));
        auto on = [&](char const* name) {
            auto const it = options.schedule.find(name);
            return it != options.schedule.end() && it->second == 1;
        };
        if (pp->second == 1 && !(on("TMA") && on("WARP_SPECIALIZE") && on("PERSISTENT")))
            throw UserError("PINGPONG=1 gives a persistent workgroup's tiles in turn to two "
                            "consumer warpgroups fed by one producer warpgroup through the copy "
                            "engine's ring; it needs TMA=1, WARP_SPECIALIZE=1 and PERSISTENT=1");
        if (pp->second == 1 && clusterShape(options.schedule).clustered())
            throw UserError("PINGPONG=1 is not written for thread-block clusters (the peers' "
                            "consumers would have to take their tiles in the same turns); use "
                            "CLUSTER_M=1 and CLUSTER_N=1");
    }
    if (auto const group = options.schedule.find("GROUP_M"); group != options.schedule.end()) {
        if (group->second < 0 || group->second > kMaxGroupM)
            throw UserError(fmt::format("GROUP_M={} is out of range: 0 (the hardware's order of "
                                        "tiles) to {} rows of tiles walked together",
                                        group->second, kMaxGroupM));
    }
    if (auto const persistent = options.schedule.find("PERSISTENT");
        persistent != options.schedule.end() && persistent->second != 0 && persistent->second != 1)
        throw UserError(fmt::format("PERSISTENT={} must be 0 (a workgroup per output tile) or 1 "
                                    "(workgroups that loop over the output tiles)",
                                    persistent->second));
    if (auto const online = options.schedule.find("ONLINE");
        online != options.schedule.end() && (online->second < 0 || online->second > 2))
        throw UserError(fmt::format("ONLINE={} must be 0 (a row read once for each of its "
                                    "statistics), 1 (a softmax's max and sum of exp(x - max), "
                                    "or a mean and variance, in one pass: OnlineSoftmax.h, "
                                    "MeanVariance.h) or 2 (as 1, the row's workitems merging "
                                    "both statistics in one exchange)",
                                    online->second));
    if (auto const blocks = options.schedule.find("MIN_BLOCKS"); blocks != options.schedule.end()) {
        std::int64_t const most = arch.fact("max_blocks_per_multiprocessor").value_or(32);
        if (blocks->second < 0 || blocks->second > most)
            throw UserError(fmt::format("MIN_BLOCKS={} is out of range: 0 (no minimum) to {}, the "
                                        "workgroups {} keeps on one multiprocessor "
                                        "(max_blocks_per_multiprocessor)",
                                        blocks->second, most, options.target));
    }
    checkClusterParameters(options.schedule, options.target);
}

void checkRegisters(EmittedKernel const& kernel, int registers) {
    arch::Arch const& arch = arch::ArchLibrary::get(kernel.target);
    std::int64_t const workitems = kernel.block[0] * kernel.block[1] * kernel.block[2];
    auto const perBlock = arch.fact("max_registers_per_block");
    if (perBlock && registers * workitems > *perBlock)
        throw UserError(fmt::format(
            "the kernel uses {} registers per workitem, {} for its {} workitems; {} has {} for a "
            "workgroup (max_registers_per_block), schedule {}",
            registers, static_cast<std::int64_t>(registers) * workitems, workitems, kernel.target,
            *perBlock, scheduleText(kernel.schedule)));
}

} // namespace kiln::lowering
