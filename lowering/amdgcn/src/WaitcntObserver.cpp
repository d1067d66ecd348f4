// WaitcntObserver.cpp: wait counts from outstanding memory operations.
#include "kiln/amdgcn/WaitcntObserver.h"

#include <algorithm>

namespace kiln::amdgcn {

namespace {
std::optional<int>& field(WaitCount& w, Counter c) {
    switch (c) {
    case Counter::Vm:
        return w.vmcnt;
    case Counter::Lgkm:
        return w.lgkmcnt;
    case Counter::Exp:
        return w.expcnt;
    case Counter::Vs:
        return w.vscnt;
    }
    return w.vmcnt;
}
std::optional<int> field(WaitCount const& w, Counter c) {
    return field(const_cast<WaitCount&>(w), c);
}
constexpr std::array<Counter, 4> kCounters{Counter::Vm, Counter::Lgkm, Counter::Exp, Counter::Vs};

bool overlaps(std::vector<PhysicalRegister> const& a, std::vector<PhysicalRegister> const& b) {
    for (PhysicalRegister const& x : a)
        if (std::find(b.begin(), b.end(), x) != b.end())
            return true;
    return false;
}
} // namespace

WaitcntObserver::WaitcntObserver(Target const& target)
    : target_(target) {}

int WaitcntObserver::maximum(Counter counter) const {
    switch (counter) {
    case Counter::Vm:
        return target_.vmcntMax();
    case Counter::Lgkm:
        return target_.lgkmcntMax();
    case Counter::Exp:
        return target_.expcntMax();
    case Counter::Vs:
        return target_.vscntMax();
    }
    return 0;
}

int WaitcntObserver::outstanding(Counter counter) const {
    return static_cast<int>(queues_[static_cast<std::size_t>(counter)].size());
}

std::vector<Counter> WaitcntObserver::countersOf(Instruction const& instruction) const {
    if (instruction.form() != Instruction::Form::Operation)
        return {};
    bool const gds = std::find(instruction.modifiers().begin(), instruction.modifiers().end(),
                               "gds") != instruction.modifiers().end();
    switch (instruction.instructionClass()) {
    case InstructionClass::VmemLoad:
    case InstructionClass::LdsDma:
        return {Counter::Vm};
    case InstructionClass::VmemStore:
        return {target_.hasVscnt() ? Counter::Vs : Counter::Vm};
    case InstructionClass::Smem:
        return {Counter::Lgkm};
    case InstructionClass::LdsLoad:
    case InstructionClass::LdsStore:
        if (gds)
            return {Counter::Lgkm, Counter::Exp};
        return {Counter::Lgkm};
    default:
        return {};
    }
}

WaitCount WaitcntObserver::needed(Instruction const& instruction) const {
    WaitCount wait;
    if (instruction.form() != Instruction::Form::Operation)
        return wait;
    std::vector<PhysicalRegister> touched = instruction.reads();
    for (PhysicalRegister const& r : instruction.writes())
        touched.push_back(r);
    bool const barrier = instruction.instructionClass() == InstructionClass::Barrier;

    for (Counter c : kCounters) {
        Queue const& queue = queues_[static_cast<std::size_t>(c)];
        if (queue.empty())
            continue;
        // The youngest outstanding operation this instruction depends on.
        std::optional<std::size_t> youngest;
        bool outOfOrder = false;
        for (std::size_t k = 0; k < queue.size(); ++k) {
            outOfOrder = outOfOrder || queue[k].outOfOrder;
            // Reads and writes of a register an outstanding load still writes (RAW and WAW).
            bool const dependent = overlaps(queue[k].writes, touched) ||
                                   (barrier && (queue[k].store || c == Counter::Lgkm));
            if (dependent)
                youngest = k;
        }
        if (!youngest)
            continue;
        // In-order completion: the operations younger than the one needed may stay outstanding.
        int const count = outOfOrder ? 0 : static_cast<int>(queue.size() - 1 - *youngest);
        std::optional<int>& slot = field(wait, c);
        slot = slot ? std::min(*slot, count) : count;
    }
    return wait;
}

std::int64_t WaitcntObserver::readyCycle(WaitCount const& wait) const {
    std::int64_t ready = cycle_;
    for (Counter c : kCounters) {
        std::optional<int> const n = field(wait, c);
        Queue const& queue = queues_[static_cast<std::size_t>(c)];
        if (!n || static_cast<int>(queue.size()) <= *n)
            continue;
        std::size_t const mustFinish = queue.size() - static_cast<std::size_t>(*n);
        for (std::size_t k = 0; k < mustFinish; ++k)
            ready = std::max(ready, queue[k].readyCycle);
    }
    return ready;
}

void WaitcntObserver::peek(Instruction const& instruction, PeekResult& result) const {
    WaitCount const wait = needed(instruction);
    result.wait = result.wait.combine(wait);
    result.stallCycles += static_cast<int>(readyCycle(wait) - cycle_);
}

void WaitcntObserver::modify(Instruction& instruction) const {
    instruction.addWait(needed(instruction));
}

void WaitcntObserver::apply(WaitCount const& wait) {
    for (Counter c : kCounters) {
        std::optional<int> const n = field(wait, c);
        if (!n)
            continue;
        Queue& queue = queues_[static_cast<std::size_t>(c)];
        bool const outOfOrder =
            std::any_of(queue.begin(), queue.end(), [](Pending const& p) { return p.outOfOrder; });
        // With an out-of-order operation outstanding only a wait for zero says which finished.
        if (outOfOrder && *n > 0)
            continue;
        while (static_cast<int>(queue.size()) > *n)
            queue.pop_front();
    }
}

void WaitcntObserver::observe(Instruction const& instruction) {
    // The wait in front of the instruction happens first, then the instruction issues.
    WaitCount const before = instruction.waitBefore();
    std::int64_t const ready = readyCycle(before);
    apply(before);
    cycle_ = std::max(cycle_, ready);
    if (instruction.form() == Instruction::Form::Wait) {
        std::int64_t const waited = readyCycle(instruction.waitCount());
        apply(instruction.waitCount());
        cycle_ = std::max(cycle_, waited) + 1;
        return;
    }
    cycle_ += instruction.nopsBefore();
    if (instruction.form() != Instruction::Form::Operation)
        return;
    std::string const& m = instruction.mnemonic();
    cycle_ += target_.issueCycles(m);
    for (Counter c : countersOf(instruction)) {
        Queue& queue = queues_[static_cast<std::size_t>(c)];
        Pending p;
        p.writes = instruction.writes();
        p.outOfOrder = instruction.instructionClass() == InstructionClass::Smem;
        p.store = instruction.instructionClass() == InstructionClass::VmemStore ||
                  instruction.instructionClass() == InstructionClass::LdsStore;
        p.readyCycle = cycle_ + target_.latency(m);
        queue.push_back(std::move(p));
        // The hardware stalls issue rather than count past the maximum: older ones are done.
        int const max = maximum(c);
        while (max > 0 && static_cast<int>(queue.size()) > max)
            queue.pop_front();
    }
}

} // namespace kiln::amdgcn
