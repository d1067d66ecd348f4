// Register.h: the operands of AMDGCN instructions: registers, literals, labels.
//
// A Value names what an instruction reads or writes: a range of vector (VGPR), scalar (SGPR) or
// accumulation (AGPR) registers, a special register (vcc, exec, m0, scc), a literal or a label.
// Registers come from an Allocation, which the Allocator hands out and takes back when the last
// Value holding it is gone: a register's lifetime is the lifetime of the Values that name it, so
// an instruction waiting in a stream keeps its registers until it is scheduled.
#pragma once

#include "kiln/graph/DataType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::amdgcn {

/// Which register file (or which kind of non-register operand) a Value is.
enum class RegisterKind : std::uint8_t { Vector, Scalar, Accumulator, Special, Literal, Label };

/// Registers with a name of their own.
enum class Special : std::uint8_t { Vcc, VccLo, Exec, ExecLo, M0, Scc, Off, Null };

/// "v", "s", "a", "special", "literal", "label".
std::string_view name(RegisterKind kind);
/// The assembler's spelling: "vcc", "exec_lo", "m0", "off", "null", ...
std::string_view name(Special special);

class AllocatorState;

/// Physical registers handed out by an Allocator; given back when destroyed.
class Allocation {
public:
    Allocation(std::shared_ptr<AllocatorState> owner, int first, int count);
    ~Allocation();
    Allocation(Allocation const&) = delete;
    Allocation& operator=(Allocation const&) = delete;

    /// The first register's index.
    int first() const { return first_; }
    /// How many consecutive registers.
    int count() const { return count_; }

private:
    std::shared_ptr<AllocatorState> owner_;
    int first_;
    int count_;
};

/// One physical register, for observers: file and index.
struct PhysicalRegister {
    RegisterKind kind = RegisterKind::Vector;
    int index = 0; ///< register number, or the Special enumerator for special registers
    bool operator==(PhysicalRegister const&) const = default;
    auto operator<=>(PhysicalRegister const&) const = default;
};

/// An instruction operand.
class Value {
public:
    /// `count` registers of `kind` from `first` on, not owned (hardware-initialized registers
    /// such as v0 or s[0:1], and the physical copies of scheduled instructions).
    static Value physical(RegisterKind kind, int first, int count = 1,
                          DataType type = DataType::I32);
    /// Registers owned through `allocation`.
    static Value allocated(RegisterKind kind, std::shared_ptr<Allocation const> allocation,
                           DataType type);
    /// A special register.
    static Value special(Special which, DataType type = DataType::I64);
    /// An integer literal (printed in decimal when it is an inline constant, else hex).
    static Value literal(std::int64_t value, DataType type = DataType::I32);
    /// An f32 literal, printed as the assembler prints it (1.0, 0.5, or the bits in hex).
    static Value literalF32(float value);
    /// A label or symbol.
    static Value label(std::string name);

    RegisterKind kind() const { return kind_; }
    bool isRegister() const;
    bool isVector() const { return kind_ == RegisterKind::Vector; }
    bool isScalar() const { return kind_ == RegisterKind::Scalar; }
    bool isLiteral() const { return kind_ == RegisterKind::Literal; }
    bool isSpecial(Special which) const {
        return kind_ == RegisterKind::Special && special_ == which;
    }
    /// What the registers hold (i64 in a pair, f32 in one, bool as a lane mask).
    DataType type() const { return type_; }
    /// The same registers viewed as another type.
    Value as(DataType type) const;

    /// First register index (registers only).
    int first() const;
    /// Number of registers (1 for non-registers).
    int count() const { return count_; }
    /// Registers [offset, offset + count) of this range; keeps the allocation alive.
    Value sub(int offset, int count = 1) const;
    /// The literal's bits (literals only).
    std::int64_t literalValue() const { return literal_; }
    /// Whether the literal is an inline constant of the AMDGCN encodings (no literal dword).
    bool isInlineConstant() const;
    /// The same registers with the VOP3 negation modifier ("-v[2:3]"), for f32/f64 sources.
    Value negated() const;
    /// The same operand without ownership of its registers.
    Value released() const;
    /// Every physical register it names (none for literals and labels).
    std::vector<PhysicalRegister> registers() const;

    /// The assembler's spelling: "v5", "v[4:5]", "s[0:1]", "a3", "vcc", "1.0", "0x1f", "L1".
    std::string str() const;

    bool sameRegisters(Value const& other) const;

private:
    RegisterKind kind_ = RegisterKind::Literal;
    DataType type_ = DataType::I32;
    std::shared_ptr<Allocation const> allocation_;
    int first_ = 0;
    int count_ = 1;
    Special special_ = Special::Vcc;
    std::int64_t literal_ = 0;
    bool floatLiteral_ = false;
    bool negated_ = false;
    std::string label_;
};

} // namespace kiln::amdgcn
