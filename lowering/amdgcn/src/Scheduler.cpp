// Scheduler.cpp: sequential, round-robin, cost-based and random interleaving of streams.
#include "kiln/amdgcn/Scheduler.h"

#include "kiln/graph/Error.h"

#include <limits>
#include <random>

namespace kiln::amdgcn {

std::string_view name(SchedulerKind kind) {
    switch (kind) {
    case SchedulerKind::Sequential:
        return "sequential";
    case SchedulerKind::RoundRobin:
        return "round-robin";
    case SchedulerKind::Cost:
        return "cost";
    case SchedulerKind::Random:
        return "random";
    }
    return "?";
}

SchedulerKind parseScheduler(std::string_view text) {
    for (SchedulerKind k : {SchedulerKind::Sequential, SchedulerKind::RoundRobin,
                            SchedulerKind::Cost, SchedulerKind::Random})
        if (name(k) == text)
            return k;
    fail("unknown instruction scheduler '{}'; known: sequential, round-robin, cost, random", text);
}

void scheduleStreams(Context& context, std::vector<Stream> streams, SchedulerKind kind,
                     std::uint64_t seed) {
    // mt19937_64's output sequence is fixed by the standard, so a seed means the same kernel on
    // every platform (the distributions are not, hence the plain modulo).
    std::mt19937_64 random(seed);
    std::vector<std::size_t> next(streams.size(), 0);
    auto live = [&](std::size_t s) { return next[s] < streams[s].size(); };
    constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
    std::size_t locked = kNone; // the stream holding a lock
    std::size_t turn = 0;

    for (;;) {
        std::vector<std::size_t> candidates;
        for (std::size_t s = 0; s < streams.size(); ++s)
            if (live(s))
                candidates.push_back(s);
        if (candidates.empty())
            break;

        std::size_t pick = candidates.front();
        if (locked != kNone) {
            pick = locked;
        } else {
            switch (kind) {
            case SchedulerKind::Sequential:
                break;
            case SchedulerKind::RoundRobin: {
                // The first live stream at or after `turn`.
                std::size_t s = turn % streams.size();
                while (!live(s))
                    s = (s + 1) % streams.size();
                pick = s;
                turn = s + 1;
                break;
            }
            case SchedulerKind::Cost: {
                int best = std::numeric_limits<int>::max();
                std::vector<std::size_t> ties;
                for (std::size_t s : candidates) {
                    PeekResult const peeked = context.peek(streams[s][next[s]]);
                    int const cost = peeked.stallCycles + peeked.nops;
                    if (cost < best) {
                        best = cost;
                        ties.assign(1, s);
                    } else if (cost == best) {
                        ties.push_back(s);
                    }
                }
                pick = seed == 0 ? ties.front() : ties[random() % ties.size()];
                break;
            }
            case SchedulerKind::Random:
                pick = candidates[random() % candidates.size()];
                break;
            }
        }

        Instruction const& instruction = streams[pick][next[pick]];
        if (instruction.locks())
            locked = pick;
        if (instruction.unlocks())
            locked = kNone;
        context.schedule(std::move(streams[pick][next[pick]]));
        // Drop the scheduled instruction so its registers go back to the allocator now.
        streams[pick][next[pick]] = Instruction::comment("");
        ++next[pick];
        if (locked != kNone && !live(locked))
            locked = kNone;
    }
}

} // namespace kiln::amdgcn
