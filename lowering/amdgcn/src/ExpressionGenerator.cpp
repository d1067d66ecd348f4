// ExpressionGenerator.cpp: the expression visitor, conversions and the arithmetic per type.
// Over 800 lines on purpose: one visitor over every expression kind, whose arithmetic per type
// (i32, i64 on the scalar and the vector unit, f16/bf16 through f32, f32, f64) reads best in one
// place; division by constants and by run-time values already has its own files.
#include "kiln/amdgcn/ExpressionGenerator.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/ExpressionText.h"

#include <bit>
#include <cmath>

namespace kiln::amdgcn {

namespace {

bool isComparison(BinaryOp op) {
    return op == BinaryOp::Equal || op == BinaryOp::NotEqual || op == BinaryOp::Less ||
           op == BinaryOp::LessEqual || op == BinaryOp::Greater || op == BinaryOp::GreaterEqual;
}

bool isHalf(DataType t) {
    return t == DataType::F16 || t == DataType::BF16;
}

/// The type registers hold for `t`: f16 and bf16 are computed in f32.
DataType computeType(DataType t) {
    return isHalf(t) ? DataType::F32 : t;
}

kiln::Value decode(Value const& v, DataType type) {
    std::int64_t const bits = v.literalValue();
    switch (type) {
    case DataType::F32:
    case DataType::F16:
    case DataType::BF16:
        return kiln::Value::real(std::bit_cast<float>(static_cast<std::uint32_t>(bits)), type);
    case DataType::F64:
        return kiln::Value::real(std::bit_cast<double>(static_cast<std::uint64_t>(bits)), type);
    case DataType::Bool:
        return kiln::Value::boolean(bits != 0);
    default:
        return kiln::Value::integer(bits, type);
    }
}

Value encode(kiln::Value const& v, DataType type) {
    switch (type) {
    case DataType::F32:
    case DataType::F16:
    case DataType::BF16:
        return Value::literalF32(static_cast<float>(roundTo(type, v.asDouble())));
    case DataType::F64:
        return Value::literal(std::bit_cast<std::int64_t>(v.asDouble()), DataType::F64);
    case DataType::Bool:
        return Value::literal(v.asBool() ? -1 : 0, DataType::Bool);
    case DataType::I32:
        return Value::literal(static_cast<std::int32_t>(v.asInt()), DataType::I32);
    default:
        return Value::literal(v.asInt(), type);
    }
}

std::string_view typeSuffix(DataType t) {
    switch (computeType(t)) {
    case DataType::I32:
        return "i32";
    case DataType::I64:
        return "i64";
    case DataType::F32:
        return "f32";
    case DataType::F64:
        return "f64";
    default:
        return "?";
    }
}

DataType commonType(ExprPtr const& a, ExprPtr const& b) {
    DataType const ta = resultType(*a);
    DataType const tb = resultType(*b);
    if (ta == DataType::Bool && tb == DataType::Bool)
        return DataType::Bool;
    return resultType(Expression{expr::Binary{BinaryOp::Add, a, b}});
}

} // namespace

ExpressionGenerator::ExpressionGenerator(Builder& builder, Leaves leaves)
    : b_(builder)
    , leaves_(std::move(leaves)) {}

namespace {
// Whether `e` reads no data value: its value depends on indices, sizes and arguments only.
bool reusable(Expression const& e) {
    return std::visit(
        [](auto const& node) -> bool {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Unary> || std::is_same_v<T, expr::Convert>)
                return reusable(*node.arg);
            else if constexpr (std::is_same_v<T, expr::Binary>)
                return reusable(*node.lhs) && reusable(*node.rhs);
            else if constexpr (std::is_same_v<T, expr::Select>)
                return reusable(*node.condition) && reusable(*node.ifTrue) &&
                       reusable(*node.ifFalse);
            else
                return !std::is_same_v<T, expr::DataValue> && !std::is_same_v<T, expr::Tag>;
        },
        static_cast<Expression::variant const&>(e));
}
} // namespace

Value ExpressionGenerator::generate(ExprPtr const& e) {
    KILN_ASSERT(e != nullptr, "null expression");
    bool const leaf =
        std::holds_alternative<expr::Literal>(*e) || std::holds_alternative<expr::Argument>(*e) ||
        std::holds_alternative<expr::Index>(*e) || std::holds_alternative<expr::DataValue>(*e);
    if (!memo_ || leaf || !reusable(*e))
        return generateNode(e);
    std::string key = toString(e) + (precision_ == Precision::Approximate ? "|approx" : "");
    if (auto it = memo_->find(key); it != memo_->end())
        return it->second;
    Value v = generateNode(e);
    memo_->emplace(std::move(key), v);
    return v;
}

Value ExpressionGenerator::generateNode(ExprPtr const& e) {
    return std::visit(
        [&](auto const& node) -> Value {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Literal>) {
                return encode(node.value, node.value.type);
            } else if constexpr (std::is_same_v<T, expr::Argument>) {
                return leaves_.argument(node);
            } else if constexpr (std::is_same_v<T, expr::Tag>) {
                fail("tag '{}' reached code generation: translate replaces tags with values",
                     node.name);
            } else if constexpr (std::is_same_v<T, expr::DimensionSize>) {
                return leaves_.size(node.dimension);
            } else if constexpr (std::is_same_v<T, expr::DimensionStride>) {
                return leaves_.stride(node.dimension);
            } else if constexpr (std::is_same_v<T, expr::Index>) {
                return leaves_.index(node.dimension);
            } else if constexpr (std::is_same_v<T, expr::DataValue>) {
                return leaves_.data(node.dimension, node.type);
            } else if constexpr (std::is_same_v<T, expr::Unary>) {
                if (ExprPtr const written = expansion(node.op, node.arg))
                    return generate(written);
                DataType const type = resultType(*e);
                // An approximate exp whose argument takes log2 e into its literals: v_exp_f32 of
                // it, without the multiply by log2 e (unary()).
                if (node.op == UnaryOp::Exp && type == DataType::F32 &&
                    precision_ == Precision::Approximate)
                    if (ExprPtr const scaled = scaledByLiteral(node.arg, 1.4426950408889634))
                        return vop("v_exp_f32", DataType::F32,
                                   {b_.toVector(generate(scaled), DataType::F32)}, true);
                DataType const from = resultType(*node.arg);
                Value const a = generate(node.arg);
                DataType const operand = node.op == UnaryOp::LogicalNot ? DataType::Bool : type;
                return unary(node.op, convert(a, from, operand), operand);
            } else if constexpr (std::is_same_v<T, expr::Binary>) {
                bool const logical =
                    node.op == BinaryOp::LogicalAnd || node.op == BinaryOp::LogicalOr;
                DataType const operand = logical                 ? DataType::Bool
                                         : isComparison(node.op) ? commonType(node.lhs, node.rhs)
                                                                 : resultType(*e);
                Value const a = convert(generate(node.lhs), resultType(*node.lhs), operand);
                Value const c = convert(generate(node.rhs), resultType(*node.rhs), operand);
                return binary(node.op, a, c, operand);
            } else if constexpr (std::is_same_v<T, expr::Select>) {
                DataType const type = resultType(*e);
                Value const mask =
                    convert(generate(node.condition), resultType(*node.condition), DataType::Bool);
                Value const t = convert(generate(node.ifTrue), resultType(*node.ifTrue), type);
                Value const f = convert(generate(node.ifFalse), resultType(*node.ifFalse), type);
                return select(mask, t, f, type);
            } else {
                static_assert(std::is_same_v<T, expr::Convert>);
                return convert(generate(node.arg), resultType(*node.arg), node.type);
            }
        },
        static_cast<Expression::variant const&>(*e));
}

Value ExpressionGenerator::vop(std::string_view mnemonic, DataType type, std::vector<Value> srcs,
                               bool compact, bool commutative) {
    if (compact && commutative && srcs.size() == 2 && !srcs[1].isVector() && srcs[0].isVector())
        std::swap(srcs[0], srcs[1]);
    bool const literalOk =
        b_.target().isGfx11() || (compact && (srcs.size() < 2 || srcs[1].isVector()));
    srcs = b_.legalize(std::move(srcs), literalOk);
    Value out = b_.newVector(type);
    b_.op(mnemonic, {out}, std::move(srcs));
    return out;
}

Value ExpressionGenerator::literalOf(Value const& v, DataType type) const {
    return v.isLiteral() ? v.as(type) : v;
}

// ---- conversions ----

Value ExpressionGenerator::convert(Value const& v, DataType from, DataType to) {
    if (from == to)
        return v;
    if (v.isLiteral())
        return encode(convertValue(to, decode(v, from)), to);
    DataType const cf = computeType(from);
    DataType const ct = computeType(to);
    if (to == DataType::Bool) {
        Value const zero =
            cf == DataType::F64 ? Value::literal(0, DataType::F64) : Value::literal(0, cf);
        return compare(BinaryOp::NotEqual, v, zero, from);
    }
    if (from == DataType::Bool) {
        Value const one = ct == DataType::F32 ? Value::literalF32(1.0f)
                          : ct == DataType::F64
                              ? Value::literal(std::bit_cast<std::int64_t>(1.0), DataType::F64)
                              : Value::literal(1, ct);
        return select(v, one, Value::literal(0, ct), to);
    }
    if (cf == ct) // f16/bf16 <-> f32 and between the halves: round to the narrower
        return isHalf(to) ? roundHalf(v, to) : v.as(to);
    if (isHalf(to))
        return roundHalf(convert(v, from, DataType::F32), to);

    Value const x = b_.toVector(v, cf);
    switch (cf) {
    case DataType::I32:
        if (ct == DataType::I64) {
            Value out = b_.newVector(DataType::I64);
            b_.op("v_mov_b32", {out.sub(0)}, {x});
            b_.op("v_ashrrev_i32", {out.sub(1)}, {Value::literal(31), x});
            return out;
        }
        if (ct == DataType::F32)
            return vop("v_cvt_f32_i32", ct, {x}, true);
        return vop("v_cvt_f64_i32", ct, {x}, true);
    case DataType::I64: {
        if (ct == DataType::I32)
            return x.sub(0).as(DataType::I32);
        // hi * 2^32 + unsigned lo, in f64; f32 rounds from there.
        Value const hi = vop("v_cvt_f64_i32", DataType::F64, {x.sub(1)}, true);
        Value const scaled = vop("v_ldexp_f64", DataType::F64, {hi, Value::literal(32)}, false);
        Value const lo = vop("v_cvt_f64_u32", DataType::F64, {x.sub(0)}, true);
        Value const sum = vop("v_add_f64", DataType::F64, {scaled, lo}, false);
        return ct == DataType::F64 ? sum : vop("v_cvt_f32_f64", ct, {sum}, true);
    }
    case DataType::F32:
        if (ct == DataType::I32)
            return vop("v_cvt_i32_f32", ct, {x}, true);
        if (ct == DataType::F64)
            return vop("v_cvt_f64_f32", ct, {x}, true);
        return convert(vop("v_cvt_f64_f32", DataType::F64, {x}, true), DataType::F64, to);
    case DataType::F64:
        if (ct == DataType::I32)
            return vop("v_cvt_i32_f64", ct, {x}, true);
        if (ct == DataType::F32)
            return vop("v_cvt_f32_f64", ct, {x}, true);
        {
            // i64: t = trunc(x); hi = floor(t / 2^32); lo = t - hi * 2^32 (exact in f64).
            Value const t = vop("v_trunc_f64", DataType::F64, {x}, true);
            Value const down = vop("v_ldexp_f64", DataType::F64, {t, Value::literal(-32)}, false);
            Value const hiF = vop("v_floor_f64", DataType::F64, {down}, true);
            Value const back = vop("v_ldexp_f64", DataType::F64, {hiF, Value::literal(32)}, false);
            Value const loF = vop("v_add_f64", DataType::F64, {t, back.negated()}, false);
            Value out = b_.newVector(DataType::I64);
            b_.op("v_cvt_u32_f64", {out.sub(0)}, {loF});
            b_.op("v_cvt_i32_f64", {out.sub(1)}, {hiF});
            return out;
        }
    default:
        break;
    }
    fail("cannot convert {} to {} in AMDGCN code", name(from), name(to));
}

Value ExpressionGenerator::roundHalf(Value const& v, DataType type) {
    if (v.isLiteral())
        return encode(decode(v, DataType::F32), type);
    Value const x = b_.toVector(v, DataType::F32);
    if (type == DataType::F16) {
        Value const h = vop("v_cvt_f16_f32", DataType::F32, {x}, true);
        return vop("v_cvt_f32_f16", DataType::F32, {h}, true).as(type);
    }
    // bf16: round to nearest even on the top 16 bits: x + 0x7fff + bit 16 of x, then clear.
    Value const lsb =
        vop("v_bfe_u32", DataType::I32, {x, Value::literal(16), Value::literal(1)}, false);
    Value const sum = vop("v_add_u32", DataType::I32, {x, lsb}, true, true);
    Value const biased = vop("v_add_u32", DataType::I32, {Value::literal(0x7fff), sum}, true, true);
    return vop("v_and_b32", DataType::I32, {Value::literal(0xffff0000LL), biased}, true, true)
        .as(type);
}

// ---- selection and comparison ----

Value ExpressionGenerator::select(Value const& mask, Value const& ifTrue, Value const& ifFalse,
                                  DataType type) {
    if (mask.isLiteral())
        return mask.literalValue() != 0 ? ifTrue : ifFalse;
    if (type == DataType::Bool) {
        // (mask & t) | (~mask & f) on lane masks.
        std::string const w = b_.target().waveSize() == 64 ? "b64" : "b32";
        Value const a = b_.newMask();
        b_.op("s_and_" + w, {a}, {mask, ifTrue});
        Value const c = b_.newMask();
        b_.op("s_andn2_" + w, {c}, {ifFalse, mask});
        Value out = b_.newMask();
        b_.op("s_or_" + w, {out}, {a, c});
        return out;
    }
    DataType const ct = computeType(type);
    Value out = b_.newVector(ct);
    auto half = [&](Value const& d, Value f, Value t) {
        // The mask takes the constant bus: SGPR operands move to VGPRs first (a legalize of
        // all three might pick the mask, which cannot move).
        if (f.isScalar())
            f = b_.toVector(f, DataType::I32);
        if (t.isScalar())
            t = b_.toVector(t, DataType::I32);
        std::vector<Value> srcs =
            b_.legalize({std::move(f), std::move(t), mask}, b_.target().isGfx11());
        b_.op("v_cndmask_b32_e64", {d}, std::move(srcs));
    };
    if (isWide(ct)) {
        half(out.sub(0), Builder::low(ifFalse), Builder::low(ifTrue));
        half(out.sub(1), Builder::high(ifFalse), Builder::high(ifTrue));
    } else {
        half(out, ifFalse, ifTrue);
    }
    return out.as(type);
}

Value ExpressionGenerator::compare(BinaryOp op, Value const& a, Value const& b, DataType type) {
    DataType const ct = computeType(type);
    if (ct == DataType::Bool) {
        std::string const w = b_.target().waveSize() == 64 ? "b64" : "b32";
        KILN_ASSERT(op == BinaryOp::Equal || op == BinaryOp::NotEqual, "ordering booleans");
        Value out = b_.newMask();
        b_.op(op == BinaryOp::Equal ? "s_xnor_" + w : "s_xor_" + w, {out}, {a, b});
        return out;
    }
    bool const isFloat = ct == DataType::F32 || ct == DataType::F64;
    std::string_view cond;
    switch (op) {
    case BinaryOp::Equal:
        cond = "eq";
        break;
    case BinaryOp::NotEqual:
        cond = isFloat ? "neq" : "ne";
        break;
    case BinaryOp::Less:
        cond = "lt";
        break;
    case BinaryOp::LessEqual:
        cond = "le";
        break;
    case BinaryOp::Greater:
        cond = "gt";
        break;
    default:
        cond = "ge";
        break;
    }
    std::vector<Value> srcs = {literalOf(a, ct), literalOf(b, ct)};
    if (isWide(ct)) // 64-bit literals go through registers
        for (Value& v : srcs)
            if (v.isLiteral() && !v.isInlineConstant())
                v = b_.toVector(v, ct);
    srcs = b_.legalize(std::move(srcs), b_.target().isGfx11());
    Value out = b_.newMask("a comparison");
    b_.op("v_cmp_" + std::string(cond) + "_" + std::string(typeSuffix(ct)) + "_e64", {out},
          std::move(srcs));
    return out;
}

// ---- unary ----

Value ExpressionGenerator::unary(UnaryOp op, Value const& a, DataType type) {
    if (a.isLiteral())
        return encode(apply(op, decode(a, type)), type);
    DataType const ct = computeType(type);
    if (op == UnaryOp::LogicalNot) {
        Value out = b_.newMask();
        b_.op(b_.target().waveSize() == 64 ? "s_not_b64" : "s_not_b32", {out}, {a});
        return out;
    }
    Value const x = b_.toVector(a, ct);
    auto done = [&](Value v) { return isHalf(type) ? roundHalf(v, type) : v.as(type); };
    switch (ct) {
    case DataType::I32:
        switch (op) {
        case UnaryOp::Negate:
            return vop("v_sub_u32", ct, {Value::literal(0), x}, true);
        case UnaryOp::BitwiseNot:
            return vop("v_not_b32", ct, {x}, true);
        case UnaryOp::Abs: {
            Value const n = vop("v_sub_u32", ct, {Value::literal(0), x}, true);
            return vop("v_max_i32", ct, {x, n}, true, true);
        }
        default:
            return convert(unary(op, convert(x, ct, DataType::F32), DataType::F32), DataType::F32,
                           ct);
        }
    case DataType::I64:
        switch (op) {
        case UnaryOp::Negate:
            return sub64(Value::literal(0, DataType::I64), x);
        case UnaryOp::BitwiseNot: {
            Value out = b_.newVector(ct);
            b_.op("v_not_b32", {out.sub(0)}, {x.sub(0)});
            b_.op("v_not_b32", {out.sub(1)}, {x.sub(1)});
            return out;
        }
        case UnaryOp::Abs: {
            Value const n = sub64(Value::literal(0, DataType::I64), x);
            Value const negative = compare(BinaryOp::Less, x, Value::literal(0, ct), ct);
            return select(negative, n, x, ct);
        }
        default:
            return convert(unary(op, convert(x, ct, DataType::F64), DataType::F64), DataType::F64,
                           ct);
        }
    case DataType::F32:
        switch (op) {
        case UnaryOp::Negate:
            return done(vop("v_xor_b32", ct, {Value::literal(0x80000000LL), x}, true, true));
        case UnaryOp::Abs:
            return done(vop("v_and_b32", ct, {Value::literal(0x7fffffff), x}, true, true));
        case UnaryOp::Exp: { // 2^(x log2 e)
            Value const t = vop("v_mul_f32", ct, {Value::literalF32(1.44269504f), x}, true, true);
            return done(vop("v_exp_f32", ct, {t}, true));
        }
        case UnaryOp::Log: { // log2(x) ln 2
            Value const t = vop("v_log_f32", ct, {x}, true);
            return done(vop("v_mul_f32", ct, {Value::literalF32(0.693147182f), t}, true, true));
        }
        case UnaryOp::Sqrt:
            return done(vop("v_sqrt_f32", ct, {x}, true));
        case UnaryOp::Tanh: {
            // Away from 0, sign(x) (1 - 2 / (exp(2|x|) + 1)), which keeps its relative error
            // near +-1 (a GELU's 1 + tanh) and loses nothing to cancellation; near 0, Exact:
            // the odd series to x^7 below 0.125 (error below 2e-9 relative); Approximate: x
            // below 2^-5 (error below x^2 / 3 < 2^-11, the bound of PTX's tanh.approx.f32).
            bool const approximate = precision_ == Precision::Approximate;
            Value const magnitude =
                vop("v_and_b32", ct, {Value::literal(0x7fffffff), x}, true, true);
            Value const s =
                vop("v_mul_f32", ct, {Value::literalF32(2.88539008f), magnitude}, true, true);
            Value const e = vop("v_exp_f32", ct, {s}, true);
            Value const d = vop("v_add_f32", ct, {Value::literalF32(1.0f), e}, true, true);
            Value const q = vop("v_rcp_f32", ct, {d}, true);
            Value const one =
                vop("v_fma_f32", ct, {q, Value::literalF32(-2.0f), Value::literalF32(1.0f)}, false);
            Value const far = vop("v_bfi_b32", ct, {Value::literal(0x7fffffff), one, x}, false);
            Value near = x;
            if (!approximate) {
                auto const constant = [](std::uint32_t bits) {
                    return Value::literalF32(std::bit_cast<float>(bits));
                };
                Value const x2 = vop("v_mul_f32", ct, {x, x}, true, true);
                // One literal an instruction (GFX11's VOP3 takes no second).
                Value const c7 = b_.toVector(constant(0xBD5D0DD1), ct);
                Value p = vop("v_fma_f32", ct, {x2, c7, constant(0x3E088889)}, false);
                p = vop("v_fma_f32", ct, {p, x2, constant(0xBEAAAAAB)}, false);
                p = vop("v_mul_f32", ct, {p, x2}, true, true);
                near = vop("v_fma_f32", ct, {p, x, x}, false);
            }
            Value const small = compare(BinaryOp::Less, magnitude,
                                        Value::literalF32(approximate ? 0.03125f : 0.125f), ct);
            return done(select(small, near, far, ct));
        }
        default:
            break;
        }
        break;
    case DataType::F64:
        switch (op) {
        case UnaryOp::Negate: {
            Value out = b_.newVector(ct);
            b_.op("v_mov_b32", {out.sub(0)}, {x.sub(0)});
            b_.op("v_xor_b32", {out.sub(1)}, {Value::literal(0x80000000LL), x.sub(1)});
            return out;
        }
        case UnaryOp::Abs: {
            Value out = b_.newVector(ct);
            b_.op("v_mov_b32", {out.sub(0)}, {x.sub(0)});
            b_.op("v_and_b32", {out.sub(1)}, {Value::literal(0x7fffffff), x.sub(1)});
            return out;
        }
        case UnaryOp::Sqrt:
            return vop("v_sqrt_f64", ct, {x}, true);
        default:
            // exp, log and tanh of f64 are computed in f32 precision.
            return convert(unary(op, convert(x, ct, DataType::F32), DataType::F32), DataType::F32,
                           ct);
        }
    default:
        break;
    }
    fail("{} of {} is not supported by the AMDGCN backend", name(op), name(type));
}

// ---- binary ----

Value ExpressionGenerator::binary(BinaryOp op, Value const& a, Value const& b, DataType type) {
    if (a.isLiteral() && b.isLiteral()) {
        kiln::Value const r = apply(op, decode(a, type), decode(b, type));
        return encode(r, isComparison(op) || op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr
                             ? DataType::Bool
                             : type);
    }
    if (op == BinaryOp::Gcd)
        fail("gcd is not supported in AMDGCN kernels (only at translate and launch time)");
    if (op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr) {
        std::string const w = b_.target().waveSize() == 64 ? "b64" : "b32";
        Value out = b_.newMask();
        b_.op((op == BinaryOp::LogicalAnd ? "s_and_" : "s_or_") + w, {out}, {a, b});
        return out;
    }
    if (isComparison(op))
        return compare(op, a, b, type);
    DataType const ct = computeType(type);
    if (ct == DataType::I32 || ct == DataType::I64) {
        bool const uniform = !a.isVector() && !b.isVector();
        bool const scalarOp = op == BinaryOp::Add || op == BinaryOp::Subtract ||
                              op == BinaryOp::Multiply || op == BinaryOp::ShiftLeft ||
                              op == BinaryOp::ShiftRight || op == BinaryOp::BitwiseAnd ||
                              op == BinaryOp::BitwiseOr || op == BinaryOp::BitwiseXor ||
                              (ct == DataType::I32 && (op == BinaryOp::Min || op == BinaryOp::Max));
        if (uniform && scalarOp)
            return scalarInteger(op, literalOf(a, ct), literalOf(b, ct), ct);
        return ct == DataType::I32 ? vectorInteger32(op, literalOf(a, ct), literalOf(b, ct))
                                   : vectorInteger64(op, literalOf(a, ct), literalOf(b, ct));
    }
    Value const r = vectorFloat(op, literalOf(a, ct), literalOf(b, ct), ct);
    return isHalf(type) ? roundHalf(r, type) : r;
}

Value ExpressionGenerator::scalarInteger(BinaryOp op, Value const& a, Value const& b,
                                         DataType type) {
    bool const wide = type == DataType::I64;
    // 64-bit SALU operands: inline constants or SGPRs (a literal would be 32 bits).
    Value const x = wide && a.isLiteral() && !a.isInlineConstant() ? b_.toScalar(a, type) : a;
    Value const y = wide && b.isLiteral() && !b.isInlineConstant() ? b_.toScalar(b, type) : b;
    Value out = b_.newScalar(type);
    if (!wide) {
        // SOP2 takes one literal; a second goes through an SGPR.
        Value const y32 = x.isLiteral() && y.isLiteral() ? b_.toScalar(y, type) : y;
        std::string_view m;
        switch (op) {
        case BinaryOp::Add:
            m = "s_add_u32";
            break;
        case BinaryOp::Subtract:
            m = "s_sub_u32";
            break;
        case BinaryOp::Multiply:
            m = "s_mul_i32";
            break;
        case BinaryOp::ShiftLeft:
            m = "s_lshl_b32";
            break;
        case BinaryOp::ShiftRight:
            m = "s_ashr_i32";
            break;
        case BinaryOp::BitwiseAnd:
            m = "s_and_b32";
            break;
        case BinaryOp::BitwiseOr:
            m = "s_or_b32";
            break;
        case BinaryOp::BitwiseXor:
            m = "s_xor_b32";
            break;
        case BinaryOp::Min:
            m = "s_min_i32";
            break;
        default:
            m = "s_max_i32";
            break;
        }
        b_.op(m, {out}, {x, y32});
        return out;
    }
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Subtract: {
        bool const add = op == BinaryOp::Add;
        // The carry travels in SCC: nothing may come between the two halves.
        b_.op(add ? "s_add_u32" : "s_sub_u32", {out.sub(0)}, {Builder::low(x), Builder::low(y)})
            .beginsLock();
        b_.op(add ? "s_addc_u32" : "s_subb_u32", {out.sub(1)}, {Builder::high(x), Builder::high(y)})
            .endsLock();
        return out;
    }
    case BinaryOp::Multiply: {
        Value const hi0 = b_.newScalar(DataType::I32);
        b_.op("s_mul_hi_u32", {hi0}, {Builder::low(x), Builder::low(y)});
        Value const c1 = b_.newScalar(DataType::I32);
        b_.op("s_mul_i32", {c1}, {Builder::low(x), Builder::high(y)});
        Value const c2 = b_.newScalar(DataType::I32);
        b_.op("s_mul_i32", {c2}, {Builder::high(x), Builder::low(y)});
        Value const s1 = b_.newScalar(DataType::I32);
        b_.op("s_add_u32", {s1}, {hi0, c1});
        b_.op("s_add_u32", {out.sub(1)}, {s1, c2});
        b_.op("s_mul_i32", {out.sub(0)}, {Builder::low(x), Builder::low(y)});
        return out;
    }
    case BinaryOp::ShiftLeft:
        b_.op("s_lshl_b64", {out}, {x, Builder::low(y)});
        return out;
    case BinaryOp::ShiftRight:
        b_.op("s_ashr_i64", {out}, {x, Builder::low(y)});
        return out;
    case BinaryOp::BitwiseAnd:
        b_.op("s_and_b64", {out}, {x, y});
        return out;
    case BinaryOp::BitwiseOr:
        b_.op("s_or_b64", {out}, {x, y});
        return out;
    default:
        b_.op("s_xor_b64", {out}, {x, y});
        return out;
    }
}

Value ExpressionGenerator::vectorInteger32(BinaryOp op, Value const& a, Value const& b) {
    DataType const t = DataType::I32;
    switch (op) {
    case BinaryOp::Add:
        return vop("v_add_u32", t, {a, b}, true, true);
    case BinaryOp::Subtract:
        return vop("v_sub_u32", t, {a, b}, true);
    case BinaryOp::Multiply:
        return vop("v_mul_lo_u32", t, {a, b}, false);
    case BinaryOp::ShiftLeft:
        return vop("v_lshlrev_b32", t, {b, a}, true);
    case BinaryOp::ShiftRight:
        return vop("v_ashrrev_i32", t, {b, a}, true);
    case BinaryOp::BitwiseAnd:
        return vop("v_and_b32", t, {a, b}, true, true);
    case BinaryOp::BitwiseOr:
        return vop("v_or_b32", t, {a, b}, true, true);
    case BinaryOp::BitwiseXor:
        return vop("v_xor_b32", t, {a, b}, true, true);
    case BinaryOp::Min:
        return vop("v_min_i32", t, {a, b}, true, true);
    case BinaryOp::Max:
        return vop("v_max_i32", t, {a, b}, true, true);
    case BinaryOp::Divide:
    case BinaryOp::Modulo:
    case BinaryOp::CeilDivide:
        return divide32(op, a, b);
    default:
        break;
    }
    fail("{} of i32 is not supported by the AMDGCN backend", name(op));
}

Value ExpressionGenerator::add64(Value const& a, Value const& b) {
    // VOP3b with the carry in an SGPR mask (no vcc, so streams interleave); on GFX9 the carry-in
    // takes the constant bus, so the addends of the high half must be VGPRs or inline constants.
    auto operand = [&](Value const& v) {
        return (v.isScalar() || (v.isLiteral() && !v.isInlineConstant())) ? b_.toVector(v, v.type())
                                                                          : v;
    };
    Value out = b_.newVector(DataType::I64);
    Value const carry = b_.newMask("a carry");
    b_.op("v_add_co_u32", {out.sub(0), carry},
          {operand(Builder::low(a)), operand(Builder::low(b))});
    b_.op("v_addc_co_u32", {out.sub(1), carry},
          {operand(Builder::high(a)), operand(Builder::high(b)), carry});
    return out;
}

Value ExpressionGenerator::sub64(Value const& a, Value const& b) {
    auto operand = [&](Value const& v) {
        return (v.isScalar() || (v.isLiteral() && !v.isInlineConstant())) ? b_.toVector(v, v.type())
                                                                          : v;
    };
    Value out = b_.newVector(DataType::I64);
    Value const borrow = b_.newMask("a borrow");
    b_.op("v_sub_co_u32", {out.sub(0), borrow},
          {operand(Builder::low(a)), operand(Builder::low(b))});
    b_.op("v_subb_co_u32", {out.sub(1), borrow},
          {operand(Builder::high(a)), operand(Builder::high(b)), borrow});
    return out;
}

Value ExpressionGenerator::vectorInteger64(BinaryOp op, Value const& a, Value const& b) {
    DataType const t = DataType::I64;
    auto wideOperand = [&](Value const& v) {
        return v.isLiteral() && !v.isInlineConstant() ? b_.toVector(v, t) : v;
    };
    switch (op) {
    case BinaryOp::Add:
        return add64(a, b);
    case BinaryOp::Subtract:
        return sub64(a, b);
    case BinaryOp::Multiply: {
        // lo = al*bl; hi = mulhi(al, bl) + al*bh + ah*bl
        Value const al = Builder::low(a), ah = Builder::high(a);
        Value const bl = Builder::low(b), bh = Builder::high(b);
        Value out = b_.newVector(t);
        Value const hi0 = vop("v_mul_hi_u32", DataType::I32, {al, bl}, false);
        Value const c1 = vop("v_mul_lo_u32", DataType::I32, {al, bh}, false);
        Value const c2 = vop("v_mul_lo_u32", DataType::I32, {ah, bl}, false);
        Value const s = vop("v_add_u32", DataType::I32, {hi0, c1}, true, true);
        b_.op("v_add_u32", {out.sub(1)}, b_.legalize({s, c2}, true));
        b_.op("v_mul_lo_u32", {out.sub(0)}, b_.legalize({al, bl}, b_.target().isGfx11()));
        return out;
    }
    case BinaryOp::ShiftLeft:
    case BinaryOp::ShiftRight: {
        Value out = b_.newVector(t);
        b_.op(op == BinaryOp::ShiftLeft ? "v_lshlrev_b64" : "v_ashrrev_i64", {out},
              b_.legalize({Builder::low(b), wideOperand(a)}, b_.target().isGfx11()));
        return out;
    }
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor: {
        std::string_view const m = op == BinaryOp::BitwiseAnd  ? "v_and_b32"
                                   : op == BinaryOp::BitwiseOr ? "v_or_b32"
                                                               : "v_xor_b32";
        Value const lo = vop(m, DataType::I32, {Builder::low(a), Builder::low(b)}, true, true);
        Value const hi = vop(m, DataType::I32, {Builder::high(a), Builder::high(b)}, true, true);
        Value out = b_.newVector(t);
        b_.op("v_mov_b32", {out.sub(0)}, {lo});
        b_.op("v_mov_b32", {out.sub(1)}, {hi});
        return out;
    }
    case BinaryOp::Min:
    case BinaryOp::Max: {
        Value const less = compare(BinaryOp::Less, a, b, t);
        return op == BinaryOp::Min ? select(less, a, b, t) : select(less, b, a, t);
    }
    case BinaryOp::Divide:
    case BinaryOp::Modulo:
    case BinaryOp::CeilDivide:
        if (b.isLiteral())
            return divideByConstant64(op, a, b.literalValue());
        return divide64(op, a, b);
    default:
        break;
    }
    fail("{} of i64 is not supported by the AMDGCN backend", name(op));
}

Value ExpressionGenerator::vectorFloat(BinaryOp op, Value const& a, Value const& b, DataType t) {
    bool const f64 = t == DataType::F64;
    std::string const s = f64 ? "_f64" : "_f32";
    auto wide = [&](Value const& v) {
        return f64 && v.isLiteral() && !v.isInlineConstant() ? b_.toVector(v, t) : v;
    };
    switch (op) {
    case BinaryOp::Add:
        return vop("v_add" + s, t, {wide(a), wide(b)}, !f64, true);
    case BinaryOp::Subtract:
        if (f64) {
            Value const y = b_.toVector(b, t);
            return vop("v_add_f64", t, {wide(a), y.negated()}, false);
        }
        return vop("v_sub_f32", t, {a, b}, true);
    case BinaryOp::Multiply:
        return vop("v_mul" + s, t, {wide(a), wide(b)}, !f64, true);
    case BinaryOp::Min:
        return vop("v_min" + s, t, {wide(a), wide(b)}, !f64, true);
    case BinaryOp::Max:
        return vop("v_max" + s, t, {wide(a), wide(b)}, !f64, true);
    case BinaryOp::Divide:
        if (precision_ == Precision::Approximate && !f64) { // v_rcp_f32: 1 ulp
            Value const r = vop("v_rcp_f32", t, {b}, true);
            if (a.isLiteral() && decode(a, t).asDouble() == 1.0)
                return r;
            return vop("v_mul_f32", t, {a, r}, true, true);
        }
        return divideFloat(a, b, t);
    case BinaryOp::CeilDivide: {
        Value const q = divideFloat(a, b, t);
        return vop("v_ceil" + s, t, {q}, true);
    }
    case BinaryOp::Modulo: { // C fmod: a - trunc(a / b) * b
        Value const q = divideFloat(a, b, t);
        Value const tq = vop("v_trunc" + s, t, {q}, true);
        Value const x = b_.toVector(a, t);
        Value const y = b_.toVector(b, t);
        return vop("v_fma" + s, t, {tq.negated(), y, x}, false);
    }
    default:
        break;
    }
    fail("{} of {} is not supported by the AMDGCN backend", name(op), name(t));
}

// i64 division by a run-time value: the quotient of the magnitudes from a correctly rounded f64
// division, truncated, then corrected by one either way, which is exact while the magnitudes
// are below 2^53 (every tensor index and size); then C's signs (the remainder takes the
// dividend's), and ceildiv rounding a positive inexact quotient up.
Value ExpressionGenerator::divide64(BinaryOp op, Value const& a, Value const& b) {
    DataType const t = DataType::I64;
    Value const zero = Value::literal(0, t);
    Value const one = Value::literal(1, t);
    Value const negativeA = compare(BinaryOp::Less, a, zero, t);
    Value const negativeB = compare(BinaryOp::Less, b, zero, t);
    Value const ua = select(negativeA, binary(BinaryOp::Subtract, zero, a, t), a, t);
    Value const ub = select(negativeB, binary(BinaryOp::Subtract, zero, b, t), b, t);
    Value const estimate =
        divideFloat(convert(ua, t, DataType::F64), convert(ub, t, DataType::F64), DataType::F64);
    Value q = convert(estimate, DataType::F64, t);
    Value r = binary(BinaryOp::Subtract, ua, binary(BinaryOp::Multiply, q, ub, t), t);
    Value const over = compare(BinaryOp::Less, r, zero, t);
    q = select(over, binary(BinaryOp::Subtract, q, one, t), q, t);
    r = select(over, binary(BinaryOp::Add, r, ub, t), r, t);
    Value const under = compare(BinaryOp::GreaterEqual, r, ub, t);
    q = select(under, binary(BinaryOp::Add, q, one, t), q, t);
    r = select(under, binary(BinaryOp::Subtract, r, ub, t), r, t);
    if (op == BinaryOp::Modulo)
        return select(negativeA, binary(BinaryOp::Subtract, zero, r, t), r, t);
    Value const negative = compare(BinaryOp::NotEqual, negativeA, negativeB, DataType::Bool);
    Value const quotient = select(negative, binary(BinaryOp::Subtract, zero, q, t), q, t);
    if (op == BinaryOp::Divide)
        return quotient;
    Value const inexact = compare(BinaryOp::NotEqual, r, zero, t);
    Value const up = select(negative, Value::literal(0, DataType::Bool), inexact, DataType::Bool);
    return select(up, binary(BinaryOp::Add, quotient, one, t), quotient, t);
}

Value ExpressionGenerator::divideFloat(Value const& a, Value const& b, DataType t) {
    // The IEEE-correct sequence of the ISA guides: scale, reciprocal, two Newton-Raphson steps,
    // v_div_fmas (which reads vcc from the second v_div_scale), v_div_fixup.
    bool const f64 = t == DataType::F64;
    std::string const s = f64 ? "_f64" : "_f32";
    Value const n = b_.toVector(a, t);
    Value const d = b_.toVector(b, t);
    Value const vcc = b_.context().vcc();
    Value const one = f64 ? Value::literal(std::bit_cast<std::int64_t>(1.0), DataType::F64)
                          : Value::literalF32(1.0f);
    Value const dScaled = b_.newVector(t);
    Value const scratchMask = b_.newMask();
    b_.op("v_div_scale" + s, {dScaled, scratchMask}, {d, d, n});
    Value const r = vop("v_rcp" + s, t, {dScaled}, true);
    Value const e = vop("v_fma" + s, t, {dScaled.negated(), r, one}, false);
    Value const r1 = vop("v_fma" + s, t, {e, r, r}, false);
    Value const nScaled = b_.newVector(t);
    // vcc from here to v_div_fmas: no other stream may write it in between.
    b_.op("v_div_scale" + s, {nScaled, vcc}, {n, d, n}).beginsLock();
    Value const q = vop("v_mul" + s, t, {nScaled, r1}, !f64, true);
    Value const rem = vop("v_fma" + s, t, {dScaled.negated(), q, nScaled}, false);
    Value const q1 = vop("v_fma" + s, t, {rem, r1, q}, false);
    Value const rem1 = vop("v_fma" + s, t, {dScaled.negated(), q1, nScaled}, false);
    Value const fmas = b_.newVector(t);
    b_.op("v_div_fmas" + s, {fmas}, {rem1, r1, q1}).readsImplicitly(vcc).endsLock();
    return vop("v_div_fixup" + s, t, {fmas, d, n}, false);
}

} // namespace kiln::amdgcn
