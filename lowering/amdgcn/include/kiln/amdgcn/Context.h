// Context.h: generating one kernel for one AMD target.
//
// A Context owns what a kernel's code generation shares: the target, the register allocators
// (VGPR, SGPR, AGPR), the observers, the scheduled instructions, and a counter for unique
// labels. Instructions reach the kernel only through schedule(): every observer first modifies
// the instruction (waits, nops), then observes it. The scheduled kernel keeps physical register
// names only, so streams give their registers back as soon as they are scheduled.
#pragma once

#include "kiln/amdgcn/Allocator.h"
#include "kiln/amdgcn/HazardObserver.h"
#include "kiln/amdgcn/LivenessObserver.h"
#include "kiln/amdgcn/Target.h"
#include "kiln/amdgcn/WaitcntObserver.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::amdgcn {

/// A sequence of instructions generated together, not yet scheduled.
using Stream = std::vector<Instruction>;

/// How a Context checks what it schedules.
struct ContextOptions {
    /// Reads of registers nothing wrote are internal errors (off for hand-built streams).
    bool checkReads = true;
    /// A kernel's instructions, at most (a UserError as it passes them): code generation sets
    /// lowering::kMaxKernelInstructions, so that a schedule that writes out an unrolled loop over
    /// a huge tile stops at once instead of after minutes.
    std::size_t maxInstructions = SIZE_MAX;
};

class Context {
public:
    /// A kernel named `kernelName` for `target`, with the wait-count, hazard and liveness
    /// observers.
    Context(Target target, std::string kernelName, ContextOptions options = {});
    Context(Context const&) = delete;
    Context& operator=(Context const&) = delete;

    Target const& target() const { return target_; }
    std::string const& kernelName() const { return kernelName_; }

    Allocator& vgprs() { return vgprs_; }
    Allocator& sgprs() { return sgprs_; }
    Allocator& agprs() { return agprs_; }
    Allocator const& vgprs() const { return vgprs_; }
    Allocator const& sgprs() const { return sgprs_; }
    Allocator const& agprs() const { return agprs_; }

    /// `count` VGPRs (aligned as the target needs for tuples) holding `type`.
    Value allocateVector(DataType type, int count, std::string_view purpose);
    /// `count` SGPRs (pairs even, larger ranges at multiples of 4).
    Value allocateScalar(DataType type, int count, std::string_view purpose);
    /// SGPRs for one lane mask (a pair in wave64, one in wave32).
    Value allocateMask(std::string_view purpose);
    /// vcc in wave64, vcc_lo in wave32.
    Value vcc() const;
    /// exec in wave64, exec_lo in wave32.
    Value exec() const;

    /// Adds an observer after the default ones.
    void addObserver(std::unique_ptr<Observer> observer);
    /// What scheduling `instruction` now would need, from every observer.
    PeekResult peek(Instruction const& instruction) const;
    /// Modifies and observes `instruction` and appends it to the kernel.
    void schedule(Instruction instruction);
    /// Schedules a whole stream in order.
    void schedule(Stream const& stream);

    /// Everything scheduled so far.
    std::vector<Instruction> const& scheduled() const { return scheduled_; }
    /// Replaces the scheduled kernel with a rewritten one, for passes over the whole schedule
    /// that add nothing the observers must see (branch relaxation: scalar instructions on a
    /// register pair reserved for them).
    void replaceScheduled(std::vector<Instruction> instructions) {
        scheduled_ = std::move(instructions);
    }
    /// The scheduled instructions as assembly text, one line each.
    std::string text() const;

    WaitcntObserver const& waitcnt() const { return *waitcnt_; }
    HazardObserver const& hazards() const { return *hazards_; }
    LivenessObserver& liveness() { return *liveness_; }
    LivenessObserver const& liveness() const { return *liveness_; }

    /// A label unique in this kernel: ".L<kernel>_<stem>_<n>".
    std::string newLabel(std::string_view stem);

private:
    Target target_;
    std::string kernelName_;
    Allocator vgprs_, sgprs_, agprs_;
    WaitcntObserver* waitcnt_ = nullptr;
    HazardObserver* hazards_ = nullptr;
    LivenessObserver* liveness_ = nullptr;
    std::vector<std::unique_ptr<Observer>> observers_;
    std::vector<Instruction> scheduled_;
    std::size_t maxInstructions_;
    int labels_ = 0;
};

} // namespace kiln::amdgcn
