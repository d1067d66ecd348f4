// Context.cpp: allocation helpers, observers and the scheduled kernel.
#include "kiln/amdgcn/Context.h"

#include <fmt/format.h>

namespace kiln::amdgcn {

Context::Context(Target target, std::string kernelName, ContextOptions options)
    : target_(std::move(target))
    , kernelName_(std::move(kernelName))
    , vgprs_(RegisterKind::Vector, target_.vgprs(), target_.name())
    , sgprs_(RegisterKind::Scalar, target_.sgprs(), target_.name())
    , agprs_(RegisterKind::Accumulator, target_.agprs(), target_.name())
    , maxInstructions_(options.maxInstructions) {
    auto waitcnt = std::make_unique<WaitcntObserver>(target_);
    auto hazards = std::make_unique<HazardObserver>(target_);
    auto liveness = std::make_unique<LivenessObserver>(vgprs_, sgprs_);
    waitcnt_ = waitcnt.get();
    hazards_ = hazards.get();
    liveness_ = liveness.get();
    liveness_->checkReads(options.checkReads);
    // Waits first, so that the hazard observer counts an attached s_waitcnt as a wait state.
    observers_.push_back(std::move(waitcnt));
    observers_.push_back(std::move(hazards));
    observers_.push_back(std::move(liveness));
}

Value Context::allocateVector(DataType type, int count, std::string_view purpose) {
    // gfx90a and gfx942 need 64-bit and wider VGPR tuples at even registers.
    int const alignment = target_.isCdna() && count >= 2 ? 2 : 1;
    return vgprs_.allocate(type, count, alignment, purpose);
}

Value Context::allocateScalar(DataType type, int count, std::string_view purpose) {
    int const alignment = count >= 4 ? 4 : count;
    return sgprs_.allocate(type, count, alignment, purpose);
}

Value Context::allocateMask(std::string_view purpose) {
    return allocateScalar(DataType::Bool, target_.maskRegisters(), purpose);
}

Value Context::vcc() const {
    return target_.waveSize() == 64 ? Value::special(Special::Vcc, DataType::Bool)
                                    : Value::special(Special::VccLo, DataType::Bool);
}

Value Context::exec() const {
    return target_.waveSize() == 64 ? Value::special(Special::Exec, DataType::Bool)
                                    : Value::special(Special::ExecLo, DataType::Bool);
}

void Context::addObserver(std::unique_ptr<Observer> observer) {
    observers_.push_back(std::move(observer));
}

PeekResult Context::peek(Instruction const& instruction) const {
    PeekResult result;
    for (auto const& observer : observers_)
        observer->peek(instruction, result);
    return result;
}

void Context::schedule(Instruction instruction) {
    if (scheduled_.size() >= maxInstructions_)
        throw UserError(fmt::format("the kernel passes {} instructions: the schedule writes out "
                                    "too much code (an unrolled loop over a tile too large)",
                                    maxInstructions_));
    for (auto const& observer : observers_)
        observer->modify(instruction);
    for (auto const& observer : observers_)
        observer->observe(instruction);
    scheduled_.push_back(instruction.released());
}

void Context::schedule(Stream const& stream) {
    for (Instruction const& instruction : stream)
        schedule(instruction);
}

std::string Context::text() const {
    std::string out;
    for (Instruction const& instruction : scheduled_) {
        std::string const line = instruction.str();
        bool const indent = instruction.form() != Instruction::Form::Label &&
                            instruction.form() != Instruction::Form::Directive;
        std::size_t start = 0;
        while (start <= line.size()) {
            std::size_t end = line.find('\n', start);
            if (end == std::string::npos)
                end = line.size();
            out += (indent ? "  " : "") + line.substr(start, end - start) + "\n";
            start = end + 1;
        }
    }
    return out;
}

std::string Context::newLabel(std::string_view stem) {
    return fmt::format(".L{}_{}_{}", kernelName_, stem, labels_++);
}

} // namespace kiln::amdgcn
