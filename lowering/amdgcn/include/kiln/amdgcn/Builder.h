// Builder.h: appends instructions to a stream with the target's spelling and operand rules.
//
// Every instruction generator (expressions, memory, arguments, kernels) writes through a
// Builder: it translates GFX9 mnemonics to the target's (GFX11 renames), allocates result
// registers from the Context, splits 64-bit values into halves, and legalizes VALU sources:
// at most the target's constant-bus limit of SGPRs and literals per instruction, and no
// non-inline literal where the encoding has no room for one (VOP3 on GFX9).
#pragma once

#include "kiln/amdgcn/Context.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::amdgcn {

class Builder {
public:
    Builder(Context& context, Stream& out)
        : context_(context)
        , out_(out) {}

    Context& context() { return context_; }
    Target const& target() const { return context_.target(); }
    Stream& stream() { return out_; }

    /// Appends `mnemonic` (the GFX9 spelling; translated for the target) and returns it.
    Instruction& op(std::string_view mnemonic, std::vector<Value> dsts, std::vector<Value> srcs,
                    std::vector<std::string> modifiers = {}, std::string comment = {});
    /// Appends a ready-made instruction.
    Instruction& add(Instruction instruction);

    /// Registers for one value of `type` in VGPRs (2 for 64-bit types; f16/bf16 live in f32).
    Value newVector(DataType type, std::string_view purpose = "a temporary");
    /// Registers for one value of `type` in SGPRs.
    Value newScalar(DataType type, std::string_view purpose = "a temporary");
    /// SGPRs for one lane mask.
    Value newMask(std::string_view purpose = "a lane mask");

    /// `v` in VGPRs: itself when it already is, else a copy (v_mov_b32 per dword).
    Value toVector(Value const& v, DataType type);
    /// `v` in SGPRs or as an inline constant (s_mov for other literals).
    Value toScalar(Value const& v, DataType type);
    /// The low / high dword of a 64-bit value (registers, or the literal's halves).
    static Value low(Value const& v);
    static Value high(Value const& v);

    /// Sources for one VALU instruction: moves SGPRs and literals beyond the constant-bus limit,
    /// and every non-inline literal when `literalAllowed` is false, into VGPRs.
    std::vector<Value> legalize(std::vector<Value> srcs, bool literalAllowed);

private:
    Context& context_;
    Stream& out_;
};

/// Whether values of `type` take two registers.
inline bool isWide(DataType type) {
    return type == DataType::I64 || type == DataType::F64;
}

} // namespace kiln::amdgcn
