// LivenessObserver.cpp: read-before-write checks and register pressure.
#include "kiln/amdgcn/LivenessObserver.h"

#include "kiln/graph/Error.h"

namespace kiln::amdgcn {

LivenessObserver::LivenessObserver(Allocator const& vgprs, Allocator const& sgprs)
    : vgprs_(vgprs)
    , sgprs_(sgprs) {}

void LivenessObserver::defineOnEntry(Value const& value) {
    for (PhysicalRegister const& r : value.registers())
        written_.insert(r);
}

void LivenessObserver::observe(Instruction const& instruction) {
    if (instruction.form() != Instruction::Form::Operation)
        return;
    ++index_;
    for (PhysicalRegister const& r : instruction.reads()) {
        if (r.kind == RegisterKind::Special || !checkReads_)
            continue; // exec, vcc and m0 hold values on entry
        KILN_ASSERT(written_.contains(r),
                    "instruction {} reads {}{}, which nothing has written: '{}'", index_,
                    amdgcn::name(r.kind), r.index, instruction.bare());
    }
    for (PhysicalRegister const& r : instruction.writes())
        written_.insert(r);
    vgprPressure_.push_back(vgprs_.inUse());
    sgprPressure_.push_back(sgprs_.inUse());
    peakVgprs_ = std::max(peakVgprs_, vgprPressure_.back());
    peakSgprs_ = std::max(peakSgprs_, sgprPressure_.back());
}

} // namespace kiln::amdgcn
