// Allocator.h: hands out the registers of one register file of one kernel.
//
// First fit over the file, with the alignment the encoding needs (even VGPR pairs on gfx90a and
// gfx942, even SGPR pairs, SGPR quads at multiples of 4). Registers come back when their
// Allocation is destroyed, so a register is reused as soon as nothing names it. The high-water
// mark is what the kernel descriptor declares. Running out is an OutOfRegisters error that says
// what wanted the registers, how many are in use and what the file holds: a schedule asked for
// more than the target has (too large a tile), not a bug in Kiln.
#pragma once

#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Error.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::amdgcn {

/// A kernel needs more registers than the target's file holds.
class OutOfRegisters : public UserError {
public:
    explicit OutOfRegisters(std::string message)
        : UserError(std::move(message)) {}
};

/// The shared state of an allocator; Allocations point at it.
class AllocatorState {
public:
    AllocatorState(RegisterKind kind, int size, std::string target);
    RegisterKind kind;
    int size;
    std::string target;
    std::vector<char> used;
    int highWater = 0;
    void release(int first, int count);
};

/// One register file of one kernel.
class Allocator {
public:
    /// A file of `size` registers of `kind` on `target` (for messages).
    Allocator(RegisterKind kind, int size, std::string target);

    /// `count` consecutive registers starting at a multiple of `alignment`, holding `type`;
    /// OutOfRegisters naming `purpose` when the file has no such run free.
    Value allocate(DataType type, int count, int alignment, std::string_view purpose);
    /// Marks registers the hardware initializes (v0, s[0:1], ...) as used for the whole kernel.
    Value reserve(int first, int count, DataType type = DataType::I32);

    /// One more than the highest register ever used (what the kernel descriptor declares).
    int highWater() const { return state_->highWater; }
    /// Registers in use now.
    int inUse() const;
    /// The file's size.
    int size() const { return state_->size; }
    RegisterKind kind() const { return state_->kind; }

private:
    std::shared_ptr<AllocatorState> state_;
};

} // namespace kiln::amdgcn
