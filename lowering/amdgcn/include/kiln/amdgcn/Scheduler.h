// Scheduler.h: interleaving independent instruction streams into one kernel.
//
// Code generation produces streams that do not depend on each other (the loads of different
// elements, the arithmetic of different tiles); a scheduler decides the order in which their
// instructions reach the Context. Sequential takes the streams one after another; round-robin
// takes one instruction from each in turn; cost-based asks the Context's observers (peek) what
// each stream's next instruction would cost now (wait cycles, nops) and takes the cheapest;
// random picks a stream at random. Ties and random choices come from a generator seeded by the
// caller, so a given seed always gives the same kernel. A stream holding a lock (a sequence that
// uses vcc, scc or exec) is never interrupted.
#pragma once

#include "kiln/amdgcn/Context.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::amdgcn {

enum class SchedulerKind : std::uint8_t { Sequential, RoundRobin, Cost, Random };

/// "sequential", "round-robin", "cost", "random".
std::string_view name(SchedulerKind kind);
/// The scheduler of this name; a UserError listing the names otherwise.
SchedulerKind parseScheduler(std::string_view name);

/// Schedules every instruction of `streams` into `context`; deterministic for a given seed.
void scheduleStreams(Context& context, std::vector<Stream> streams, SchedulerKind kind,
                     std::uint64_t seed = 0);

} // namespace kiln::amdgcn
