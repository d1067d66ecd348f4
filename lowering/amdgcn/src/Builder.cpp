// Builder.cpp: mnemonic translation, result registers and VALU operand legalization.
#include "kiln/amdgcn/Builder.h"

#include "kiln/graph/Error.h"

#include <algorithm>

namespace kiln::amdgcn {

Instruction& Builder::op(std::string_view mnemonic, std::vector<Value> dsts,
                         std::vector<Value> srcs, std::vector<std::string> modifiers,
                         std::string comment) {
    out_.push_back(Instruction::op(target().mnemonic(mnemonic), std::move(dsts), std::move(srcs),
                                   std::move(modifiers), std::move(comment)));
    return out_.back();
}

Instruction& Builder::add(Instruction instruction) {
    out_.push_back(std::move(instruction));
    return out_.back();
}

Value Builder::newVector(DataType type, std::string_view purpose) {
    if (type == DataType::Bool)
        return newMask(purpose);
    return context_.allocateVector(type, isWide(type) ? 2 : 1, purpose);
}

Value Builder::newScalar(DataType type, std::string_view purpose) {
    if (type == DataType::Bool)
        return newMask(purpose);
    return context_.allocateScalar(type, isWide(type) ? 2 : 1, purpose);
}

Value Builder::newMask(std::string_view purpose) {
    return context_.allocateMask(purpose);
}

Value Builder::low(Value const& v) {
    if (v.isLiteral())
        return Value::literal(static_cast<std::int32_t>(v.literalValue() & 0xffffffff),
                              DataType::I32);
    if (v.count() == 1)
        return v;
    return v.sub(0);
}

Value Builder::high(Value const& v) {
    if (v.isLiteral())
        return Value::literal(static_cast<std::int32_t>(v.literalValue() >> 32), DataType::I32);
    KILN_ASSERT(v.count() >= 2, "high half of {}", v.str());
    return v.sub(1);
}

Value Builder::toVector(Value const& v, DataType type) {
    if (v.isVector())
        return v.as(type);
    KILN_ASSERT(type != DataType::Bool, "a lane mask ({}) cannot move to VGPRs", v.str());
    Value out = newVector(type);
    if (isWide(type)) {
        op("v_mov_b32", {out.sub(0)}, {low(v)});
        op("v_mov_b32", {out.sub(1)}, {high(v)});
    } else {
        op("v_mov_b32", {out}, {v});
    }
    return out;
}

Value Builder::toScalar(Value const& v, DataType type) {
    if (v.isScalar() || (v.isLiteral() && v.isInlineConstant() && !isWide(type)))
        return v.as(type);
    KILN_ASSERT(!v.isVector(), "{} is per lane; it cannot move to SGPRs", v.str());
    Value out = newScalar(type);
    if (isWide(type))
        op("s_mov_b64", {out},
           {v.isInlineConstant() ? v : Value::literal(v.literalValue(), DataType::I64)});
    else
        op("s_mov_b32", {out}, {v});
    return out;
}

std::vector<Value> Builder::legalize(std::vector<Value> srcs, bool literalAllowed) {
    std::vector<Value> bus; // distinct SGPRs / literals so far
    int const limit = target().constantBusLimit();
    for (Value& v : srcs) {
        bool const onBus = v.isScalar() || (v.isLiteral() && !v.isInlineConstant());
        if (!onBus)
            continue;
        if (v.isLiteral() && (!literalAllowed || isWide(v.type()))) {
            // A literal is 32 bits: wide ones always go through registers.
            v = toVector(v, isWide(v.type())
                                ? v.type()
                                : (v.type() == DataType::F32 ? DataType::F32 : DataType::I32));
            continue;
        }
        bool const seen = std::any_of(bus.begin(), bus.end(), [&](Value const& b) {
            return (b.isScalar() && v.isScalar() && b.sameRegisters(v)) ||
                   (b.isLiteral() && v.isLiteral() && b.literalValue() == v.literalValue());
        });
        if (seen)
            continue;
        if (static_cast<int>(bus.size()) >= limit) {
            v = toVector(v, v.type());
            continue;
        }
        bus.push_back(v);
    }
    return srcs;
}

} // namespace kiln::amdgcn
