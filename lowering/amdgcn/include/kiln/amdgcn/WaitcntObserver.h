// WaitcntObserver.h: inserts the s_waitcnt each instruction needs, and no more.
//
// AMD memory instructions finish asynchronously; counters (vmcnt for vector memory, lgkmcnt
// for LDS and scalar memory, expcnt for exports and GDS, vscnt for stores on GFX10+) count those
// still outstanding, and `s_waitcnt vmcnt(N)` waits until at most N are. Vector memory and LDS
// operations complete in the order they were issued, so to use the result of the k-th youngest
// outstanding load a wait for count k-1 is enough (a partial wait): the younger loads stay in
// flight. Scalar memory returns out of order, so a wait on an SMEM result is lgkmcnt(0). The
// maxima come from arch-db (vmcnt_max, ...): the hardware never has more outstanding than a
// counter holds, so older operations beyond the maximum are known complete. Before s_barrier,
// outstanding stores and LDS operations are waited for, so that other waves see the data.
#pragma once

#include "kiln/amdgcn/Observer.h"
#include "kiln/amdgcn/Target.h"

#include <array>
#include <cstdint>
#include <deque>

namespace kiln::amdgcn {

/// The four AMD wait counters.
enum class Counter : std::uint8_t { Vm, Lgkm, Exp, Vs };

class WaitcntObserver final : public Observer {
public:
    explicit WaitcntObserver(Target const& target);

    void peek(Instruction const& instruction, PeekResult& result) const override;
    void modify(Instruction& instruction) const override;
    void observe(Instruction const& instruction) override;
    std::string_view name() const override { return "waitcnt"; }

    /// The wait `instruction` needs before it issues.
    WaitCount needed(Instruction const& instruction) const;
    /// Operations outstanding on a counter now.
    int outstanding(Counter counter) const;
    /// The largest value of the counter on this target (0 when the target lacks it).
    int maximum(Counter counter) const;

private:
    struct Pending {
        std::vector<PhysicalRegister> writes;
        bool outOfOrder = false; ///< SMEM
        bool store = false;      ///< a store or LDS write (waited for before barriers)
        std::int64_t readyCycle = 0;
    };
    using Queue = std::deque<Pending>;

    std::vector<Counter> countersOf(Instruction const& instruction) const;
    void apply(WaitCount const& wait);
    std::int64_t readyCycle(WaitCount const& wait) const;

    Target target_;
    std::array<Queue, 4> queues_;
    std::int64_t cycle_ = 0;
};

} // namespace kiln::amdgcn
