// IntegerDivision.cpp: i32 and i64 division and modulo with C semantics (truncation).
#include "kiln/amdgcn/DivisionMagic.h"
#include "kiln/amdgcn/ExpressionGenerator.h"
#include "kiln/graph/Error.h"

namespace kiln::amdgcn {

namespace {
constexpr DataType I32 = DataType::I32;
constexpr DataType I64 = DataType::I64;
} // namespace

Value ExpressionGenerator::divide32(BinaryOp op, Value const& a, Value const& b) {
    if (b.isLiteral())
        return divideByConstant32(op, a, b.literalValue());
    if (op == BinaryOp::CeilDivide) {
        // q + (r != 0 && (a ^ b) >= 0)
        Value const q = divide32(BinaryOp::Divide, a, b);
        Value const r = divide32(BinaryOp::Modulo, a, b);
        Value const nonzero = compare(BinaryOp::NotEqual, r, Value::literal(0), I32);
        Value const signs = vop("v_xor_b32", I32, {a, b}, true, true);
        Value const same = compare(BinaryOp::GreaterEqual, signs, Value::literal(0), I32);
        Value const up = binary(BinaryOp::LogicalAnd, nonzero, same, DataType::Bool);
        Value const bump = select(up, Value::literal(1), Value::literal(0), I32);
        return vop("v_add_u32", I32, {q, bump}, true, true);
    }
    // |a| / |b| unsigned, then the sign: (q ^ s) - s with s = sign(a) ^ sign(b).
    Value const x = b_.toVector(a, I32);
    Value const y = b_.toVector(b, I32);
    Value const sa = vop("v_ashrrev_i32", I32, {Value::literal(31), x}, true);
    Value const sb = vop("v_ashrrev_i32", I32, {Value::literal(31), y}, true);
    Value const ua =
        vop("v_xor_b32", I32, {vop("v_add_u32", I32, {x, sa}, true, true), sa}, true, true);
    Value const ub =
        vop("v_xor_b32", I32, {vop("v_add_u32", I32, {y, sb}, true, true), sb}, true, true);
    Value remainder;
    Value const uq = unsignedDivide32(ua, ub, &remainder);
    if (op == BinaryOp::Modulo) { // the remainder takes the dividend's sign
        Value const t = vop("v_xor_b32", I32, {remainder, sa}, true, true);
        return vop("v_sub_u32", I32, {t, sa}, true);
    }
    Value const s = vop("v_xor_b32", I32, {sa, sb}, true, true);
    Value const t = vop("v_xor_b32", I32, {uq, s}, true, true);
    return vop("v_sub_u32", I32, {t, s}, true);
}

Value ExpressionGenerator::unsignedDivide32(Value const& n, Value const& d, Value* remainder) {
    // The reciprocal of d in 0.32 fixed point from the f32 reciprocal (scaled by 2^32 - 512 so it
    // never overshoots), one Newton-Raphson step in integers, the quotient estimate, then two
    // corrections: the estimate is at most two below the true quotient.
    Value const f = vop("v_cvt_f32_u32", DataType::F32, {d}, true);
    Value const r = vop("v_rcp_iflag_f32", DataType::F32, {f}, true);
    Value const scaled =
        vop("v_mul_f32", DataType::F32, {Value::literal(0x4f7ffffe, DataType::F32), r}, true, true);
    Value const z0 = vop("v_cvt_u32_f32", I32, {scaled}, true);
    Value const negD = vop("v_sub_u32", I32, {Value::literal(0), d}, true);
    Value const e = vop("v_mul_lo_u32", I32, {negD, z0}, false);
    Value const h = vop("v_mul_hi_u32", I32, {z0, e}, false);
    Value const z = vop("v_add_u32", I32, {z0, h}, true, true);
    Value q = vop("v_mul_hi_u32", I32, {n, z}, false);
    Value const p = vop("v_mul_lo_u32", I32, {q, d}, false);
    Value rem = vop("v_sub_u32", I32, {n, p}, true);
    for (int step = 0; step < 2; ++step) {
        Value const over = b_.newMask();
        b_.op("v_cmp_ge_u32_e64", {over}, {rem, d});
        Value const q1 = vop("v_add_u32", I32, {Value::literal(1), q}, true, true);
        Value const r1 = vop("v_sub_u32", I32, {rem, d}, true);
        q = select(over, q1, q, I32);
        rem = select(over, r1, rem, I32);
    }
    *remainder = rem;
    return q;
}

Value ExpressionGenerator::divideByConstant32(BinaryOp op, Value const& a, std::int64_t d) {
    if (d == 0)
        fail("division by the constant 0 in a kernel expression");
    Value const x = b_.toVector(a, I32);
    auto quotient = [&]() -> Value {
        if (d == 1)
            return x;
        if (d == -1)
            return vop("v_sub_u32", I32, {Value::literal(0), x}, true);
        if (int const k = powerOfTwo(d); k >= 0) {
            // (n + (n < 0 ? 2^k - 1 : 0)) >> k, negated for a negative divisor.
            Value const sign = vop("v_ashrrev_i32", I32, {Value::literal(31), x}, true);
            Value const bias = vop("v_lshrrev_b32", I32, {Value::literal(32 - k), sign}, true);
            Value const sum = vop("v_add_u32", I32, {x, bias}, true, true);
            Value const q = vop("v_ashrrev_i32", I32, {Value::literal(k), sum}, true);
            return d > 0 ? q : vop("v_sub_u32", I32, {Value::literal(0), q}, true);
        }
        SignedMagic const m = signedMagic(d, 32);
        Value q = vop("v_mul_hi_i32", I32, {x, Value::literal(m.multiplier, I32)}, false);
        if (m.addend > 0)
            q = vop("v_add_u32", I32, {q, x}, true, true);
        if (m.addend < 0)
            q = vop("v_sub_u32", I32, {q, x}, true);
        if (m.shift > 0)
            q = vop("v_ashrrev_i32", I32, {Value::literal(m.shift), q}, true);
        Value const up = vop("v_lshrrev_b32", I32, {Value::literal(31), q}, true);
        return vop("v_add_u32", I32, {q, up}, true, true);
    };
    Value const q = quotient();
    if (op == BinaryOp::Divide)
        return q;
    Value const product = vop("v_mul_lo_u32", I32, {q, Value::literal(d, I32)}, false);
    Value const r = vop("v_sub_u32", I32, {x, product}, true);
    if (op == BinaryOp::Modulo)
        return r;
    // CeilDivide: q + (r != 0 && sign(r) == sign(d)); r has the dividend's sign.
    Value const nonzero =
        compare(d > 0 ? BinaryOp::Greater : BinaryOp::Less, r, Value::literal(0), I32);
    Value const bump = select(nonzero, Value::literal(1), Value::literal(0), I32);
    return vop("v_add_u32", I32, {q, bump}, true, true);
}

Value ExpressionGenerator::mulhs64(Value const& a, std::int64_t m) {
    // The high 64 bits of the 128-bit product, from 32-bit pieces with v_mad_u64_u32
    // (a 64-bit accumulate), then the signed correction: - (a < 0 ? m : 0) - (m < 0 ? a : 0).
    Value const ml = b_.toScalar(Value::literal(m & 0xffffffff, I32), I32);
    Value const mh = b_.toScalar(Value::literal((m >> 32) & 0xffffffff, I32), I32);
    Value const al = Builder::low(a), ah = Builder::high(a);
    Value const zero = Value::literal(0, I64);
    auto mad = [&](Value const& x, Value const& y, Value const& c) {
        Value out = b_.newVector(I64);
        Value const carry = b_.newMask("a carry");
        b_.op("v_mad_u64_u32", {out, carry}, {x, y, c});
        return out;
    };
    Value const t0 = mad(al, ml, zero); // al*ml
    Value const hi0 = t0.sub(1);
    Value lowC = b_.newVector(I64); // hi0 as a 64-bit addend
    b_.op("v_mov_b32", {lowC.sub(0)}, {hi0});
    b_.op("v_mov_b32", {lowC.sub(1)}, {Value::literal(0)});
    Value const t1 = mad(al, mh, lowC); // al*mh + hi0
    Value midC = b_.newVector(I64);
    b_.op("v_mov_b32", {midC.sub(0)}, {t1.sub(0)});
    b_.op("v_mov_b32", {midC.sub(1)}, {Value::literal(0)});
    Value const t2 = mad(ah, ml, midC); // ah*ml + lo(t1)
    Value upper = b_.newVector(I64);    // hi(t1) + hi(t2), 33 bits
    b_.op("v_mov_b32", {upper.sub(0)}, {t1.sub(1)});
    b_.op("v_mov_b32", {upper.sub(1)}, {Value::literal(0)});
    Value hiT2 = b_.newVector(I64);
    b_.op("v_mov_b32", {hiT2.sub(0)}, {t2.sub(1)});
    b_.op("v_mov_b32", {hiT2.sub(1)}, {Value::literal(0)});
    Value const c = add64(upper, hiT2);
    Value result = mad(ah, mh, c); // unsigned high part
    // Signed corrections.
    Value const sign = vop("v_ashrrev_i32", I32, {Value::literal(31), ah}, true);
    Value maskedM = b_.newVector(I64);
    b_.op("v_and_b32", {maskedM.sub(0)}, {Value::literal(m & 0xffffffff, I32), sign});
    b_.op("v_and_b32", {maskedM.sub(1)}, {Value::literal((m >> 32) & 0xffffffff, I32), sign});
    result = sub64(result, maskedM);
    if (m < 0)
        result = sub64(result, a);
    return result;
}

Value ExpressionGenerator::divideByConstant64(BinaryOp op, Value const& a, std::int64_t d) {
    if (d == 0)
        fail("division by the constant 0 in a kernel expression");
    Value const x = b_.toVector(a, I64);
    auto shiftRight = [&](Value const& v, int k, bool arithmetic) {
        Value out = b_.newVector(I64);
        b_.op(arithmetic ? "v_ashrrev_i64" : "v_lshrrev_b64", {out}, {Value::literal(k), v});
        return out;
    };
    auto quotient = [&]() -> Value {
        if (d == 1)
            return x;
        if (d == -1)
            return sub64(Value::literal(0, I64), x);
        if (int const k = powerOfTwo(d); k >= 0) {
            Value const sign = shiftRight(x, 63, true);
            Value const bias = shiftRight(sign, 64 - k, false);
            Value const q = shiftRight(add64(x, bias), k, true);
            return d > 0 ? q : sub64(Value::literal(0, I64), q);
        }
        SignedMagic const m = signedMagic(d, 64);
        Value q = mulhs64(x, m.multiplier);
        if (m.addend > 0)
            q = add64(q, x);
        if (m.addend < 0)
            q = sub64(q, x);
        if (m.shift > 0)
            q = shiftRight(q, m.shift, true);
        return add64(q, shiftRight(q, 63, false));
    };
    Value const q = quotient();
    if (op == BinaryOp::Divide)
        return q;
    Value const product = binary(BinaryOp::Multiply, q, Value::literal(d, I64), I64);
    Value const r = sub64(x, product);
    if (op == BinaryOp::Modulo)
        return r;
    Value const nonzero =
        compare(d > 0 ? BinaryOp::Greater : BinaryOp::Less, r, Value::literal(0, I64), I64);
    Value const bump = select(nonzero, Value::literal(1, I64), Value::literal(0, I64), I64);
    return add64(q, bump);
}

} // namespace kiln::amdgcn
