#include "kiln/lowering/PtxWriter.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/lowering/Codegen.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <utility>

namespace kiln::lowering {

std::string_view ptxName(PtxType type) {
    switch (type) {
    case PtxType::Pred:
        return ".pred";
    case PtxType::B16:
        return ".b16";
    case PtxType::B32:
        return ".b32";
    case PtxType::S32:
        return ".s32";
    case PtxType::S64:
        return ".s64";
    case PtxType::U64:
        return ".u64";
    case PtxType::F32:
        return ".f32";
    case PtxType::F64:
        return ".f64";
    }
    return ".b32";
}

PtxType registerType(DataType type) {
    switch (type) {
    case DataType::Bool:
        return PtxType::Pred;
    case DataType::I32:
        return PtxType::S32;
    case DataType::I64:
        return PtxType::S64;
    case DataType::F16:
    case DataType::BF16:
    case DataType::F32:
        return PtxType::F32;
    case DataType::F64:
        return PtxType::F64;
    }
    return PtxType::S64;
}

std::string_view memoryType(DataType type) {
    switch (type) {
    case DataType::Bool:
        return ".u8";
    case DataType::I32:
        return ".s32";
    case DataType::I64:
        return ".s64";
    case DataType::F16:
    case DataType::BF16:
        return ".b16";
    case DataType::F32:
        return ".f32";
    case DataType::F64:
        return ".f64";
    }
    return ".b32";
}

namespace {

char const* prefix(PtxType type) {
    switch (type) {
    case PtxType::Pred:
        return "%p";
    case PtxType::B16:
        return "%h";
    case PtxType::B32:
        return "%b";
    case PtxType::S32:
        return "%r";
    case PtxType::S64:
        return "%rd";
    case PtxType::U64:
        return "%ud";
    case PtxType::F32:
        return "%f";
    case PtxType::F64:
        return "%fd";
    }
    return "%x";
}

// The type arithmetic and comparisons of `lhs` and `rhs` run in (weak literals adapt).
DataType operandType(ExprPtr const& lhs, ExprPtr const& rhs) {
    return resultType(*binary(BinaryOp::Add, lhs, rhs));
}

bool isComparison(BinaryOp op) {
    return op >= BinaryOp::Equal && op <= BinaryOp::GreaterEqual;
}

std::string_view comparison(BinaryOp op, bool floating) {
    switch (op) {
    case BinaryOp::Equal:
        return "eq";
    case BinaryOp::NotEqual:
        return floating ? "neu" : "ne";
    case BinaryOp::Less:
        return "lt";
    case BinaryOp::LessEqual:
        return "le";
    case BinaryOp::Greater:
        return "gt";
    default:
        return "ge";
    }
}

bool isImmediate(std::string const& operand) {
    return !operand.empty() && operand[0] != '%';
}

// `e` as a floating-point literal times another expression: the literal and the other.
std::optional<std::pair<double, ExprPtr>> literalTimes(ExprPtr const& e) {
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b || b->op != BinaryOp::Multiply)
        return std::nullopt;
    for (auto const& [c, other] : {std::pair{b->lhs, b->rhs}, {b->rhs, b->lhs}})
        if (auto const* l = std::get_if<expr::Literal>(c.get()); l && isFloat(l->value.type))
            return std::pair{l->value.asDouble(), other};
    return std::nullopt;
}

} // namespace

PtxWriter::PtxWriter(KernelGraph const& graph, IndexFacts const& facts)
    : graph_(graph)
    , facts_(facts) {
    addresses_.emplace_back();
    scopes_.emplace_back();
}

std::string PtxWriter::newRegister(PtxType type) {
    return fmt::format("{}{}", prefix(type), counts_[type]++);
}

void PtxWriter::instruction(std::string const& text) {
    if (++instructions_ > kMaxKernelInstructions)
        throw UserError(fmt::format("the kernel passes {} PTX instructions: the schedule writes "
                                    "out too much code (an unrolled loop over a tile too large)",
                                    kMaxKernelInstructions));
    body_ += "    " + text + ";\n";
}

std::string PtxWriter::cut(std::size_t mark) {
    KILN_ASSERT(mark <= body_.size(), "cut at {} past the body's end", mark);
    std::string text = body_.substr(mark);
    body_.resize(mark);
    return text;
}

void PtxWriter::label(std::string const& name) {
    body_ += name + ":\n";
}

std::string PtxWriter::newLabel(std::string_view hint) {
    return fmt::format("${}_{}", hint, labels_++);
}

void PtxWriter::comment(std::string const& text) {
    body_ += "    // " + text + "\n";
}

void PtxWriter::bindArgument(std::string const& name, std::string reg) {
    arguments_[name] = std::move(reg);
}

void PtxWriter::rememberAddress(Id tensor, ExprPtr offset, std::string reg) {
    addresses_.back().push_back({tensor, std::move(offset), std::move(reg)});
}

std::vector<PtxWriter::Address> PtxWriter::recentAddresses(Id tensor, std::size_t count) const {
    std::vector<Address> out;
    for (auto scope = addresses_.rbegin(); scope != addresses_.rend() && out.size() < count;
         ++scope)
        for (auto a = scope->rbegin(); a != scope->rend() && out.size() < count; ++a)
            if (a->tensor == tensor)
                out.push_back(*a);
    return out;
}

void PtxWriter::pushScope() {
    addresses_.emplace_back();
    scopes_.emplace_back();
}

void PtxWriter::popScope() {
    KILN_ASSERT(scopes_.size() > 1, "popScope without pushScope");
    scopes_.pop_back();
    addresses_.pop_back();
}

void PtxWriter::forgetExpressions() {
    for (auto& scope : scopes_)
        scope.clear();
    for (auto& addresses : addresses_)
        addresses.clear();
}

std::string PtxWriter::declarations() const {
    std::string out;
    for (auto const& [type, count] : counts_)
        out += fmt::format("    .reg {} {}<{}>;\n", ptxName(type), prefix(type), count);
    return out;
}

std::string PtxWriter::immediate(Value v, DataType type) {
    v = convertValue(type, v);
    switch (registerType(type)) {
    case PtxType::F32: {
        auto const f = static_cast<float>(v.f);
        return fmt::format("0f{:08X}", std::bit_cast<std::uint32_t>(f));
    }
    case PtxType::F64:
        return fmt::format("0d{:016X}", std::bit_cast<std::uint64_t>(v.f));
    case PtxType::Pred: {
        std::string const p = newRegister(PtxType::Pred);
        instruction(fmt::format("setp.ne.s32 {}, {}, 0", p, v.i != 0 ? 1 : 0));
        return p;
    }
    default:
        return fmt::format("{}", v.i);
    }
}

std::string PtxWriter::emitIndex(ExprPtr const& e, PtxBindings const& bindings) {
    return emit(e, DataType::I64, bindings);
}

std::string PtxWriter::emitConditions(std::vector<ExprPtr> const& conditions,
                                      PtxBindings const& bindings) {
    std::string result;
    std::vector<std::string> seen;
    for (auto const& c : conditions) {
        std::string const p = emit(c, DataType::Bool, bindings);
        if (std::find(seen.begin(), seen.end(), p) != seen.end())
            continue;
        seen.push_back(p);
        if (result.empty()) {
            result = p;
            continue;
        }
        std::string const both = newRegister(PtxType::Pred);
        instruction(fmt::format("and.pred {}, {}, {}", both, result, p));
        result = both;
    }
    return result;
}

std::string PtxWriter::emit(ExprPtr const& e, DataType want, PtxBindings const& bindings,
                            Precision precision) {
    struct Restore {
        Precision& at;
        Precision saved;
        ~Restore() { at = saved; }
    } const restore{precision_, std::exchange(precision_, precision)};
    return emit(e, want, bindings);
}

std::string PtxWriter::emit(ExprPtr const& e, DataType want, PtxBindings const& bindings) {
    if (auto const* l = std::get_if<expr::Literal>(e.get()))
        return immediate(l->value, want);
    // A subexpression computed approximately is not the exact one.
    std::string const key = fmt::format("{}|{}{}", toString(e), name(want),
                                        precision_ == Precision::Approximate ? "|approx" : "");
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
        if (auto found = it->find(key); found != it->end())
            return found->second;
    DataType const natural = resultType(*e);
    std::string value = convert(emitNode(e, natural, bindings), natural, want);
    scopes_.back().emplace(key, value);
    return value;
}

std::string PtxWriter::convert(std::string const& value, DataType from, DataType to) {
    if (from == to)
        return value;
    PtxType const f = registerType(from), t = registerType(to);
    auto materialized = [&](std::string const& v, PtxType type) {
        if (!isImmediate(v))
            return v;
        std::string const r = newRegister(type);
        instruction(fmt::format("mov{} {}, {}", ptxName(type), r, v));
        return r;
    };
    std::string const in = materialized(value, f);
    if (to == DataType::F16 || to == DataType::BF16) {
        // Round to the 16-bit type, and keep it in an f32 register.
        std::string const source = convert(in, from, DataType::F32);
        std::string const h = newRegister(PtxType::B16), r = newRegister(PtxType::F32);
        if (to == DataType::F16) {
            instruction(fmt::format("cvt.rn.f16.f32 {}, {}", h, source));
            instruction(fmt::format("cvt.f32.f16 {}, {}", r, h));
        } else {
            std::string const w = newRegister(PtxType::B32);
            instruction(fmt::format("cvt.rn.bf16.f32 {}, {}", h, source));
            instruction(fmt::format("mov.b32 {}, {{0, {}}}", w, h));
            instruction(fmt::format("mov.b32 {}, {}", r, w));
        }
        return r;
    }
    if (f == t)
        return in; // f16/bf16 already live in f32 registers
    std::string const r = newRegister(t);
    if (f == PtxType::Pred) {
        std::string const one = t == PtxType::F32   ? "0f3F800000"
                                : t == PtxType::F64 ? "0d3FF0000000000000"
                                                    : "1";
        std::string const zero = t == PtxType::F32   ? "0f00000000"
                                 : t == PtxType::F64 ? "0d0000000000000000"
                                                     : "0";
        instruction(fmt::format("selp{} {}, {}, {}, {}", ptxName(t), r, one, zero, in));
    } else if (t == PtxType::Pred) {
        bool const floating = f == PtxType::F32 || f == PtxType::F64;
        instruction(fmt::format("setp.{}{} {}, {}, {}", floating ? "neu" : "ne", ptxName(f), r, in,
                                floating && f == PtxType::F32 ? "0f00000000"
                                : floating                    ? "0d0000000000000000"
                                                              : "0"));
    } else {
        bool const fromFloat = f == PtxType::F32 || f == PtxType::F64;
        bool const toFloat = t == PtxType::F32 || t == PtxType::F64;
        std::string_view const rounding = fromFloat && !toFloat                    ? ".rzi"
                                          : toFloat && !fromFloat                  ? ".rn"
                                          : f == PtxType::F64 && t == PtxType::F32 ? ".rn"
                                                                                   : "";
        instruction(fmt::format("cvt{}{}{} {}, {}", rounding, ptxName(t), ptxName(f), r, in));
    }
    return r;
}

std::string PtxWriter::emitNode(ExprPtr const& e, DataType type, PtxBindings const& bindings) {
    using namespace expr;
    auto const& coords = graph_.coordinates;
    if (auto const* a = std::get_if<Argument>(e.get())) {
        auto it = arguments_.find(a->name);
        if (it == arguments_.end())
            throw UserError(fmt::format("the kernel has no argument '{}'", a->name));
        return it->second;
    }
    if (auto const* s = std::get_if<DimensionSize>(e.get())) {
        auto const& size = coords.node(s->dimension).size;
        if (!size)
            throw UserError(fmt::format("dimension #{} has no size", s->dimension));
        return emit(size, type, bindings);
    }
    if (auto const* s = std::get_if<DimensionStride>(e.get())) {
        auto const& stride = coords.node(s->dimension).stride;
        if (!stride)
            throw UserError(fmt::format("dimension #{} has no stride", s->dimension));
        return emit(stride, type, bindings);
    }
    if (auto const* i = std::get_if<Index>(e.get())) {
        std::string r = bindings.index ? bindings.index(i->dimension) : std::string();
        if (r.empty())
            throw UserError(fmt::format("the index of #{} ({}) is not known where the kernel "
                                        "reads it",
                                        i->dimension, name(coords.node(i->dimension).kind)));
        return r;
    }
    if (auto const* d = std::get_if<DataValue>(e.get())) {
        std::string r = bindings.dataValue ? bindings.dataValue(d->dimension, d->type) : "";
        if (r.empty())
            throw UserError(
                fmt::format("value#{} is not available where the kernel reads it", d->dimension));
        return r;
    }
    if (std::get_if<Tag>(e.get()))
        throw UserError(fmt::format("'{}' is a tag; translate the Command first", toString(e)));
    if (auto const* c = std::get_if<Convert>(e.get()))
        return emit(c->arg, c->type, bindings);
    if (auto const* s = std::get_if<Select>(e.get())) {
        std::string const p = emit(s->condition, DataType::Bool, bindings);
        std::string const x = emit(s->ifTrue, type, bindings), y = emit(s->ifFalse, type, bindings);
        PtxType const t = registerType(type);
        std::string const r = newRegister(t);
        instruction(fmt::format("selp{} {}, {}, {}, {}", t == PtxType::Pred ? ".b32" : ptxName(t),
                                r, x, y, p));
        return r;
    }
    if (auto const* u = std::get_if<Unary>(e.get())) {
        if (ExprPtr const written = expansion(u->op, u->arg))
            return emit(written, type, bindings);
        PtxType const t = registerType(type);
        // An approximate exp of c * y: 2^((c log2(e)) y), one multiply (foldFactors() leaves
        // one literal factor in a product); of an argument whose literals take log2(e)
        // (scaledByLiteral()), none.
        if (u->op == UnaryOp::Exp && precision_ == Precision::Approximate &&
            type == DataType::F32) {
            if (auto const scaled = literalTimes(u->arg)) {
                std::string const y = emit(scaled->second, type, bindings);
                std::string const s = newRegister(t), r = newRegister(t);
                instruction(
                    fmt::format("mul.f32 {}, {}, {}", s, y,
                                immediate(Value::real(scaled->first * 1.4426950408889634), type)));
                instruction(fmt::format("ex2.approx.ftz.f32 {}, {}", r, s));
                return r;
            }
            if (ExprPtr const inLiterals = scaledByLiteral(u->arg, 1.4426950408889634)) {
                std::string const s = emit(inLiterals, type, bindings), r = newRegister(t);
                instruction(fmt::format("ex2.approx.ftz.f32 {}, {}", r, s));
                return r;
            }
        }
        std::string const x = emit(u->arg, type, bindings);
        std::string const r = newRegister(t);
        bool const floating = t == PtxType::F32 || t == PtxType::F64;
        auto needF32 = [&](char const* what) {
            if (t != PtxType::F32)
                throw UserError(
                    fmt::format("{} of {} is not supported inside kernels yet", what, name(type)));
        };
        switch (u->op) {
        case UnaryOp::Negate:
            instruction(fmt::format("neg{} {}, {}", ptxName(t), r, x));
            break;
        case UnaryOp::Abs:
            instruction(fmt::format("abs{} {}, {}", ptxName(t), r, x));
            break;
        case UnaryOp::LogicalNot:
            instruction(fmt::format("not.pred {}, {}", r, x));
            break;
        case UnaryOp::BitwiseNot:
            if (floating)
                throw UserError("~ needs an integer");
            instruction(fmt::format("not.b{} {}, {}", t == PtxType::S32 ? 32 : 64, r, x));
            break;
        case UnaryOp::Sqrt:
            needF32("sqrt");
            instruction(fmt::format("sqrt.rn.f32 {}, {}", r, x));
            break;
        case UnaryOp::Exp: {
            // Approximate: results below 2^-126 flushed to zero, which spares ptxas's scaling
            // of subnormal results.
            needF32("exp");
            std::string const s = newRegister(PtxType::F32);
            instruction(fmt::format("mul.f32 {}, {}, 0f3FB8AA3B", s, x)); // log2(e)
            instruction(fmt::format("ex2.approx{}.f32 {}, {}",
                                    precision_ == Precision::Approximate ? ".ftz" : "", r, s));
            break;
        }
        case UnaryOp::Log: {
            needF32("log");
            std::string const s = newRegister(PtxType::F32);
            instruction(fmt::format("lg2.approx.f32 {}, {}", s, x));
            instruction(fmt::format("mul.f32 {}, {}, 0f3F317218", r, s)); // ln(2)
            break;
        }
        case UnaryOp::Tanh: {
            // Near zero, the odd series (error below 2e-9 relative for |x| < 0.125); elsewhere
            // sign(x) * (1 - 2 / (exp(2|x|) + 1)), which loses no precision there.
            needF32("tanh");
            if (precision_ == Precision::Approximate) { // relative error 2^-11 (PTX ISA)
                instruction(fmt::format("tanh.approx.f32 {}, {}", r, x));
                break;
            }
            std::string const a = newRegister(PtxType::F32), s = newRegister(PtxType::F32),
                              ex = newRegister(PtxType::F32), d = newRegister(PtxType::F32),
                              q = newRegister(PtxType::F32), far = newRegister(PtxType::F32),
                              x2 = newRegister(PtxType::F32), poly = newRegister(PtxType::F32),
                              near = newRegister(PtxType::F32);
            std::string const small = newRegister(PtxType::Pred);
            instruction(fmt::format("abs.f32 {}, {}", a, x));
            instruction(fmt::format("mul.f32 {}, {}, 0f4038AA3B", s, a)); // 2 log2(e)
            instruction(fmt::format("ex2.approx.f32 {}, {}", ex, s));
            instruction(fmt::format("add.f32 {}, {}, 0f3F800000", d, ex));
            instruction(fmt::format("rcp.rn.f32 {}, {}", q, d));
            instruction(fmt::format("fma.rn.f32 {}, {}, 0fC0000000, 0f3F800000", far, q));
            instruction(fmt::format("copysign.f32 {}, {}, {}", far, x, far));
            instruction(fmt::format("mul.f32 {}, {}, {}", x2, x, x));
            instruction(fmt::format("fma.rn.f32 {}, {}, 0fBD5D0DD1, 0f3E088889", poly, x2));
            instruction(fmt::format("fma.rn.f32 {}, {}, {}, 0fBEAAAAAB", poly, poly, x2));
            instruction(fmt::format("mul.f32 {}, {}, {}", poly, poly, x2));
            instruction(fmt::format("fma.rn.f32 {}, {}, {}, {}", near, poly, x, x));
            instruction(fmt::format("setp.lt.f32 {}, {}, 0f3E000000", small, a));
            instruction(fmt::format("selp.f32 {}, {}, {}, {}", r, near, far, small));
            break;
        }
        default: // a function with an expansion, written out above
            KILN_ASSERT(false, "{} has neither PTX instructions nor an expansion", name(u->op));
        }
        return r;
    }
    auto const& b = std::get<Binary>(*e);
    if (b.op == BinaryOp::LogicalAnd || b.op == BinaryOp::LogicalOr) {
        std::string const x = emit(b.lhs, DataType::Bool, bindings),
                          y = emit(b.rhs, DataType::Bool, bindings);
        std::string const r = newRegister(PtxType::Pred);
        instruction(fmt::format("{}.pred {}, {}, {}", b.op == BinaryOp::LogicalAnd ? "and" : "or",
                                r, x, y));
        return r;
    }
    DataType const operands = operandType(b.lhs, b.rhs);
    if (isComparison(b.op)) {
        std::string const x = emit(b.lhs, operands, bindings), y = emit(b.rhs, operands, bindings);
        PtxType const t = registerType(operands);
        bool const floating = t == PtxType::F32 || t == PtxType::F64;
        std::string const r = newRegister(PtxType::Pred);
        if (t == PtxType::Pred)
            instruction(fmt::format("xor.pred {}, {}, {}", r, x, y)); // only == and != of bools
        else
            instruction(fmt::format("setp.{}{} {}, {}, {}", comparison(b.op, floating), ptxName(t),
                                    r, x, y));
        if (t == PtxType::Pred && b.op == BinaryOp::Equal) {
            std::string const n = newRegister(PtxType::Pred);
            instruction(fmt::format("not.pred {}, {}", n, r));
            return n;
        }
        return r;
    }
    if (isFloat(operands))
        return binaryFloat(b.op, emit(b.lhs, operands, bindings), emit(b.rhs, operands, bindings),
                           operands);
    return binaryInteger(b.op, b.lhs, b.rhs, operands, bindings);
}

std::string PtxWriter::binaryFloat(BinaryOp op, std::string const& a, std::string const& b,
                                   DataType type) {
    PtxType const t = registerType(type);
    std::string const r = newRegister(t);
    std::string_view const ty = ptxName(t);
    switch (op) {
    case BinaryOp::Add:
        instruction(fmt::format("add{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Subtract:
        instruction(fmt::format("sub{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Multiply:
        instruction(fmt::format("mul{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Divide:
        if (precision_ == Precision::Approximate && t == PtxType::F32) {
            // rcp.approx: 1 ulp; the quotient by a literal 1 is the reciprocal, by another
            // literal one more rounding; div.full: 2 ulp over the whole range.
            if (a == "0f3F800000") {
                instruction(fmt::format("rcp.approx.ftz.f32 {}, {}", r, b));
            } else if (isImmediate(a)) {
                std::string const q = newRegister(t);
                instruction(fmt::format("rcp.approx.ftz.f32 {}, {}", q, b));
                instruction(fmt::format("mul.f32 {}, {}, {}", r, q, a));
            } else {
                instruction(fmt::format("div.full.f32 {}, {}, {}", r, a, b));
            }
            break;
        }
        instruction(fmt::format("div.rn{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Min:
        instruction(fmt::format("min{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Max:
        instruction(fmt::format("max{} {}, {}, {}", ty, r, a, b));
        break;
    default:
        throw UserError(fmt::format("'{}' of floating-point values is not supported inside "
                                    "kernels",
                                    name(op)));
    }
    return r;
}

namespace {

std::optional<std::int64_t> integerImmediate(std::string const& operand) {
    std::int64_t v = 0;
    char const* end = operand.data() + operand.size();
    auto const [at, error] = std::from_chars(operand.data(), end, v);
    if (error != std::errc() || at != end)
        return std::nullopt;
    return v;
}

} // namespace

// An integer operation whose operands came out as immediates (an index bound to a constant
// element number, say) is computed here rather than emitted as `mul.lo.s64 %rd1, 0, -64`; so is
// one with an identity operand (x + 0, x * 1, x * 0). Operations that fail (division by zero,
// 64-bit overflow) are left to the instruction.
std::optional<std::string> PtxWriter::foldImmediates(BinaryOp op, std::string const& a,
                                                     std::string const& b, DataType type) {
    auto const x = integerImmediate(a), y = integerImmediate(b);
    if (x && y) {
        try {
            return std::to_string(apply(op, Value::integer(*x, type), Value::integer(*y, type)).i);
        } catch (UserError const&) {
            return std::nullopt;
        }
    }
    bool const commutes = op == BinaryOp::Add || op == BinaryOp::Multiply;
    if ((op == BinaryOp::Add || op == BinaryOp::Subtract) && y == 0)
        return a;
    if (commutes && x == (op == BinaryOp::Add ? 0 : 1))
        return b;
    if (op == BinaryOp::Multiply && y == 1)
        return a;
    if (op == BinaryOp::Multiply && (x == 0 || y == 0))
        return std::string("0");
    return std::nullopt;
}

std::string PtxWriter::binaryInteger(BinaryOp op, ExprPtr const& lhs, ExprPtr const& rhs,
                                     DataType type, PtxBindings const& bindings) {
    PtxType const t = registerType(type);
    int const bits = t == PtxType::S32 ? 32 : 64;
    std::string const a = emit(lhs, type, bindings), b = emit(rhs, type, bindings);
    if (auto folded = foldImmediates(op, a, b, type))
        return *folded;
    std::string const r = newRegister(t);
    std::string_view const ty = ptxName(t);
    bool const unsignedOk = facts_.nonNegative(lhs) && facts_.nonNegative(rhs);
    auto const divisor = literalInt(rhs);
    bool const powerOfTwo =
        divisor && *divisor > 0 && std::has_single_bit(static_cast<std::uint64_t>(*divisor));
    switch (op) {
    case BinaryOp::Add:
        instruction(fmt::format("add{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Subtract:
        instruction(fmt::format("sub{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Multiply:
        instruction(fmt::format("mul.lo{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Divide:
    case BinaryOp::Modulo:
    case BinaryOp::CeilDivide: {
        std::string numerator = a;
        if (op == BinaryOp::CeilDivide) {
            if (!unsignedOk)
                throw UserError("ceildiv of values that may be negative is not supported inside "
                                "kernels");
            numerator = newRegister(t);
            instruction(fmt::format("add{} {}, {}, {}", ty, numerator, a, b));
            instruction(fmt::format("sub{} {}, {}, 1", ty, numerator, numerator));
        }
        bool const modulo = op == BinaryOp::Modulo;
        if (unsignedOk && powerOfTwo) {
            int const shift = std::countr_zero(static_cast<std::uint64_t>(*divisor));
            if (modulo)
                instruction(fmt::format("and.b{} {}, {}, {}", bits, r, numerator, *divisor - 1));
            else
                instruction(fmt::format("shr.u{} {}, {}, {}", bits, r, numerator, shift));
        } else {
            instruction(fmt::format("{}.{}{} {}, {}, {}", modulo ? "rem" : "div",
                                    unsignedOk ? 'u' : 's', bits, r, numerator, b));
        }
        break;
    }
    case BinaryOp::Min:
        instruction(fmt::format("min{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::Max:
        instruction(fmt::format("max{} {}, {}, {}", ty, r, a, b));
        break;
    case BinaryOp::ShiftLeft:
    case BinaryOp::ShiftRight: {
        std::string amount = b;
        if (!isImmediate(b)) {
            amount = newRegister(PtxType::B32);
            instruction(fmt::format("cvt.u32{} {}, {}", ty, amount, b));
        }
        instruction(fmt::format("{}{} {}, {}, {}", op == BinaryOp::ShiftLeft ? "shl.b" : "shr.s",
                                bits, r, a, amount));
        break;
    }
    case BinaryOp::BitwiseAnd:
        instruction(fmt::format("and.b{} {}, {}, {}", bits, r, a, b));
        break;
    case BinaryOp::BitwiseOr:
        instruction(fmt::format("or.b{} {}, {}, {}", bits, r, a, b));
        break;
    case BinaryOp::BitwiseXor:
        instruction(fmt::format("xor.b{} {}, {}, {}", bits, r, a, b));
        break;
    default:
        throw UserError(fmt::format("'{}' is not supported inside kernels", name(op)));
    }
    return r;
}

} // namespace kiln::lowering
