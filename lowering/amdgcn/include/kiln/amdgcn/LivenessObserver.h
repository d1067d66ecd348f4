// LivenessObserver.h: which registers hold values as the kernel runs, and reads of nothing.
//
// Kiln allocates registers itself, so a read of a register nothing has written is a bug in a
// generator (a wrong operand, a value used after its allocation was given back and reused). The
// liveness observer knows the registers the hardware initializes (the prologue declares them),
// checks every read against what has been written, and keeps the pressure profile: registers in
// use (allocated) at every scheduled instruction, and their peak.
#pragma once

#include "kiln/amdgcn/Allocator.h"
#include "kiln/amdgcn/Observer.h"

#include <set>

namespace kiln::amdgcn {

class LivenessObserver final : public Observer {
public:
    /// Watches the allocators of the kernel's VGPR and SGPR files.
    LivenessObserver(Allocator const& vgprs, Allocator const& sgprs);

    void peek(Instruction const&, PeekResult&) const override {}
    void modify(Instruction&) const override {}
    /// An InternalError naming the instruction and register when it reads one never written.
    void observe(Instruction const& instruction) override;
    std::string_view name() const override { return "liveness"; }

    /// Registers holding a value before the first instruction (hardware-initialized).
    void defineOnEntry(Value const& value);
    /// Turns the read-before-write check off (for hand-built instruction streams).
    void checkReads(bool check) { checkReads_ = check; }
    /// Whether `r` has been written (or initialized).
    bool defined(PhysicalRegister const& r) const { return written_.contains(r); }
    /// VGPRs / SGPRs allocated at each scheduled operation, in order.
    std::vector<int> const& vgprPressure() const { return vgprPressure_; }
    std::vector<int> const& sgprPressure() const { return sgprPressure_; }
    /// The peak of each.
    int peakVgprs() const { return peakVgprs_; }
    int peakSgprs() const { return peakSgprs_; }

private:
    Allocator const& vgprs_;
    Allocator const& sgprs_;
    std::set<PhysicalRegister> written_;
    std::vector<int> vgprPressure_, sgprPressure_;
    int peakVgprs_ = 0, peakSgprs_ = 0;
    int index_ = 0;
    bool checkReads_ = true;
};

} // namespace kiln::amdgcn
