// MemoryInstructions.h: loads and stores of global memory, buffers and LDS.
//
// Each call appends one instruction moving 1, 2, 4, 8, 12 or 16 bytes per lane, with the
// target's mnemonic (global_load_dwordx4 on GFX9 is global_load_b128 on GFX11) and an immediate
// offset folded into the encoding when it fits the instruction's range (arch-db), added to the
// address otherwise. Loads return fresh registers; the wait-count observer makes later readers
// wait. Global accesses take a 64-bit address in VGPRs, or a 32-bit VGPR offset from a base in
// an SGPR pair; buffer accesses a 128-bit descriptor in SGPRs; LDS a 32-bit VGPR address.
// Direct-to-LDS loads (buffer_load_dword ... lds) write LDS at M0 without passing through
// registers, where the target has them.
#pragma once

#include "kiln/amdgcn/Builder.h"

namespace kiln::amdgcn {

class MemoryInstructions {
public:
    explicit MemoryInstructions(Builder& builder)
        : b_(builder) {}

    /// Loads `bytes` from `address` (+ `offset`): `address` is a 64-bit VGPR address when `base`
    /// is empty, else a 32-bit VGPR byte offset from the SGPR pair `base`.
    Value loadGlobal(Value const& address, std::optional<Value> const& base, int bytes,
                     int offset = 0);
    /// Stores the low `bytes` of `data`.
    void storeGlobal(Value const& address, std::optional<Value> const& base, Value const& data,
                     int bytes, int offset = 0);

    /// Loads one element of `type` and returns it as expressions compute it: f16 and bf16
    /// widened to f32, i64 and f64 in a register pair.
    Value loadGlobalValue(Value const& address, std::optional<Value> const& base, DataType type,
                          int offset = 0);
    /// Stores one element of `type` from its computing form (f16/bf16 narrowed from f32).
    void storeGlobalValue(Value const& address, std::optional<Value> const& base,
                          Value const& value, DataType type, int offset = 0);

    /// A buffer descriptor for `numRecords` bytes at the 64-bit SGPR address `base` (CDNA).
    Value bufferDescriptor(Value const& base, Value const& numRecords);
    /// Buffer load with a VGPR byte offset; out-of-range lanes read 0.
    Value loadBuffer(Value const& descriptor, Value const& offset, int bytes, int immediate = 0);
    /// Buffer store; out-of-range lanes write nothing.
    void storeBuffer(Value const& descriptor, Value const& offset, Value const& data, int bytes,
                     int immediate = 0);
    /// One dword per lane from the buffer straight into LDS at `ldsBase` (an SGPR or literal
    /// byte address, put in M0) + lane * 4; a UserError on targets without direct-to-LDS.
    void loadBufferToLds(Value const& descriptor, Value const& offset, Value const& ldsBase);

    /// LDS load of `bytes` from the VGPR byte address.
    Value loadLds(Value const& address, int bytes, int offset = 0);
    /// LDS store.
    void storeLds(Value const& address, Value const& data, int bytes, int offset = 0);

private:
    std::vector<std::string> offsetModifier(std::string const& mnemonic, int offset, Value& address,
                                            bool lds);
    Builder& b_;
};

/// The GFX9 mnemonic of a global/buffer/LDS access of `bytes` ("global_load_dwordx4").
std::string memoryMnemonic(std::string_view prefix, bool load, int bytes, bool lds);

} // namespace kiln::amdgcn
