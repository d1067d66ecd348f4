// MemoryInstructions.cpp: global, buffer and LDS accesses.
#include "kiln/amdgcn/MemoryInstructions.h"

#include "kiln/graph/Error.h"

#include <fmt/format.h>

namespace kiln::amdgcn {

std::string memoryMnemonic(std::string_view prefix, bool load, int bytes, bool lds) {
    std::string const verb = lds ? (load ? "read" : "write") : (load ? "load" : "store");
    std::string size;
    if (lds) {
        switch (bytes) {
        case 1:
            size = load ? "u8" : "b8";
            break;
        case 2:
            size = load ? "u16" : "b16";
            break;
        default:
            size = "b" + std::to_string(bytes * 8);
            break;
        }
    } else {
        switch (bytes) {
        case 1:
            size = load ? "ubyte" : "byte";
            break;
        case 2:
            size = load ? "ushort" : "short";
            break;
        case 4:
            size = "dword";
            break;
        default:
            size = "dwordx" + std::to_string(bytes / 4);
            break;
        }
    }
    return fmt::format("{}_{}_{}", prefix, verb, size);
}

namespace {
void checkBytes(int bytes) {
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 12 && bytes != 16)
        fail("a memory access of {} bytes per lane; AMDGCN moves 1, 2, 4, 8, 12 or 16", bytes);
}
int dwords(int bytes) {
    return bytes <= 4 ? 1 : bytes / 4;
}
} // namespace

std::vector<std::string> MemoryInstructions::offsetModifier(std::string const& mnemonic, int offset,
                                                            Value& address, bool lds) {
    if (offset == 0)
        return {};
    std::int64_t lo = lds ? 0 : -4096;
    std::int64_t hi = lds ? 65535 : 4095;
    if (mnemonic.starts_with("buffer_"))
        lo = 0, hi = 4095;
    if (arch::Instruction const* row = b_.target().arch().findInstruction(mnemonic)) {
        if (row->offset) {
            lo = row->offset->min;
            hi = row->offset->max;
        }
    }
    if (offset >= lo && offset <= hi)
        return {fmt::format("offset:{}", offset)};
    // Out of the encoding's range: add it to the address instead.
    if (address.count() == 2) {
        Value sum = b_.newVector(DataType::I64, "an address");
        Value const carry = b_.newMask("a carry");
        Value const lit = b_.toVector(Value::literal(offset), DataType::I32);
        b_.op("v_add_co_u32", {sum.sub(0), carry}, {address.sub(0), lit});
        b_.op("v_addc_co_u32", {sum.sub(1), carry},
              {address.sub(1), Value::literal(offset < 0 ? -1 : 0), carry});
        address = sum;
    } else {
        Value sum = b_.newVector(DataType::I32, "an address");
        b_.op("v_add_u32", {sum}, {Value::literal(offset), address});
        address = sum;
    }
    return {};
}

Value MemoryInstructions::loadGlobal(Value const& address, std::optional<Value> const& base,
                                     int bytes, int offset) {
    checkBytes(bytes);
    std::string const m = b_.target().mnemonic(memoryMnemonic("global", true, bytes, false));
    Value addr = address;
    std::vector<std::string> mods = offsetModifier(m, offset, addr, false);
    Value out = b_.context().allocateVector(DataType::I32, dwords(bytes), "loaded data");
    b_.add(Instruction::op(m, {out}, {addr, base ? *base : Value::special(Special::Off)},
                           std::move(mods)));
    return out;
}

void MemoryInstructions::storeGlobal(Value const& address, std::optional<Value> const& base,
                                     Value const& data, int bytes, int offset) {
    checkBytes(bytes);
    std::string const m = b_.target().mnemonic(memoryMnemonic("global", false, bytes, false));
    Value addr = address;
    std::vector<std::string> mods = offsetModifier(m, offset, addr, false);
    Value const d = dwords(bytes) == data.count() ? data : data.sub(0, dwords(bytes));
    b_.add(Instruction::op(m, {}, {addr, d, base ? *base : Value::special(Special::Off)},
                           std::move(mods)));
}

Value MemoryInstructions::loadGlobalValue(Value const& address, std::optional<Value> const& base,
                                          DataType type, int offset) {
    int const bytes = type == DataType::Bool ? 1 : sizeInBytes(type);
    Value raw = loadGlobal(address, base, bytes, offset);
    switch (type) {
    case DataType::F16: {
        Value out = b_.newVector(DataType::F32, "a loaded f16");
        b_.op("v_cvt_f32_f16", {out}, {raw});
        return out.as(DataType::F16);
    }
    case DataType::BF16: {
        Value out = b_.newVector(DataType::F32, "a loaded bf16");
        b_.op("v_lshlrev_b32", {out}, {Value::literal(16), raw});
        return out.as(DataType::BF16);
    }
    case DataType::Bool: {
        Value mask = b_.newMask("a loaded bool");
        b_.op("v_cmp_ne_u32_e64", {mask}, {Value::literal(0), raw});
        return mask;
    }
    default:
        return raw.as(type);
    }
}

void MemoryInstructions::storeGlobalValue(Value const& address, std::optional<Value> const& base,
                                          Value const& value, DataType type, int offset) {
    int const bytes = type == DataType::Bool ? 1 : sizeInBytes(type);
    Value data = value;
    if (type == DataType::Bool) {
        data = b_.newVector(DataType::I32, "a stored bool");
        b_.op("v_cndmask_b32_e64", {data}, {Value::literal(0), Value::literal(1), value});
    } else if (!value.isVector()) {
        data = b_.toVector(value,
                           type == DataType::F16 || type == DataType::BF16 ? DataType::F32 : type);
    }
    if (type == DataType::F16) {
        Value narrow = b_.newVector(DataType::I32, "a stored f16");
        b_.op("v_cvt_f16_f32", {narrow}, {data});
        data = narrow;
    } else if (type == DataType::BF16) {
        // The value is already rounded to bf16 (its low 16 bits are zero).
        Value narrow = b_.newVector(DataType::I32, "a stored bf16");
        b_.op("v_lshrrev_b32", {narrow}, {Value::literal(16), data});
        data = narrow;
    }
    storeGlobal(address, base, data, bytes, offset);
}

Value MemoryInstructions::bufferDescriptor(Value const& base, Value const& numRecords) {
    if (b_.target().isGfx11())
        fail("buffer descriptors are generated for CDNA targets only (gfx90a, gfx942), not {}",
             b_.target().name());
    Value desc = b_.context().allocateScalar(DataType::I32, 4, "a buffer descriptor");
    b_.op("s_mov_b32", {desc.sub(0)}, {Builder::low(base)});
    b_.op("s_and_b32", {desc.sub(1)}, {Value::literal(0xffff), Builder::high(base)});
    b_.op("s_mov_b32", {desc.sub(2)}, {numRecords});
    // Word 3: DATA_FORMAT = 32 (bits 15-18 = 4), what LLVM's getDefaultRsrcDataFormat gives GFX9.
    b_.op("s_mov_b32", {desc.sub(3)}, {Value::literal(0x00020000)});
    return desc;
}

Value MemoryInstructions::loadBuffer(Value const& descriptor, Value const& offset, int bytes,
                                     int immediate) {
    checkBytes(bytes);
    std::string const m = b_.target().mnemonic(memoryMnemonic("buffer", true, bytes, false));
    Value addr = offset;
    std::vector<std::string> mods = {"offen"};
    for (std::string& s : offsetModifier(m, immediate, addr, false))
        mods.push_back(std::move(s));
    Value out = b_.context().allocateVector(DataType::I32, dwords(bytes), "loaded data");
    b_.add(Instruction::op(m, {out}, {addr, descriptor, Value::literal(0)}, std::move(mods)));
    return out;
}

void MemoryInstructions::storeBuffer(Value const& descriptor, Value const& offset,
                                     Value const& data, int bytes, int immediate) {
    checkBytes(bytes);
    std::string const m = b_.target().mnemonic(memoryMnemonic("buffer", false, bytes, false));
    Value addr = offset;
    std::vector<std::string> mods = {"offen"};
    for (std::string& s : offsetModifier(m, immediate, addr, false))
        mods.push_back(std::move(s));
    Value const d = dwords(bytes) == data.count() ? data : data.sub(0, dwords(bytes));
    b_.add(Instruction::op(m, {}, {d, addr, descriptor, Value::literal(0)}, std::move(mods)));
}

void MemoryInstructions::loadBufferToLds(Value const& descriptor, Value const& offset,
                                         Value const& ldsBase) {
    if (!b_.target().arch().has(arch::Capability::HasDirectToLds))
        fail("{} has no direct-to-LDS loads", b_.target().name());
    Value const m0 = Value::special(Special::M0, DataType::I32);
    b_.op("s_mov_b32", {m0}, {ldsBase});
    b_.add(Instruction::op("buffer_load_dword", {}, {offset, descriptor, Value::literal(0)},
                           {"offen", "lds"})
               .readsImplicitly(m0));
}

Value MemoryInstructions::loadLds(Value const& address, int bytes, int offset) {
    checkBytes(bytes);
    std::string const m = b_.target().mnemonic(memoryMnemonic("ds", true, bytes, true));
    Value addr = address;
    std::vector<std::string> mods = offsetModifier(m, offset, addr, true);
    Value out = b_.context().allocateVector(DataType::I32, dwords(bytes), "LDS data");
    b_.add(Instruction::op(m, {out}, {addr}, std::move(mods)));
    return out;
}

void MemoryInstructions::storeLds(Value const& address, Value const& data, int bytes, int offset) {
    checkBytes(bytes);
    std::string const m = b_.target().mnemonic(memoryMnemonic("ds", false, bytes, true));
    Value addr = address;
    std::vector<std::string> mods = offsetModifier(m, offset, addr, true);
    Value const d = dwords(bytes) == data.count() ? data : data.sub(0, dwords(bytes));
    b_.add(Instruction::op(m, {}, {addr, d}, std::move(mods)));
}

} // namespace kiln::amdgcn
