// Observer.h: what watches every instruction a Context schedules.
//
// As in the rocRoller design, an observer sees each instruction three times: `peek` says what
// scheduling it now would cost (waits, nops, stall cycles) without changing anything, which is
// what the cost-based scheduler compares; `modify` attaches the waits and nops the instruction
// needs; `observe` updates the observer's state once it is scheduled. The observers here are the
// wait-count observer (WaitcntObserver.h), the hazard observer (HazardObserver.h) and the
// register-liveness observer (LivenessObserver.h).
#pragma once

#include "kiln/amdgcn/Instruction.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::amdgcn {

/// What scheduling one instruction now would take.
struct PeekResult {
    WaitCount wait;                 ///< counters it must wait for
    int nops = 0;                   ///< wait states to insert for hazards
    int stallCycles = 0;            ///< estimated cycles lost waiting
    std::vector<std::string> rules; ///< the hazard rules that apply (for tests and comments)
};

class Observer {
public:
    virtual ~Observer() = default;
    /// Adds what `instruction` would need now to `result`; changes nothing.
    virtual void peek(Instruction const& instruction, PeekResult& result) const = 0;
    /// Attaches what `instruction` needs (waits, nops).
    virtual void modify(Instruction& instruction) const = 0;
    /// Records that `instruction` (as modified) was scheduled.
    virtual void observe(Instruction const& instruction) = 0;
    /// A short name for messages.
    virtual std::string_view name() const = 0;
};

} // namespace kiln::amdgcn
