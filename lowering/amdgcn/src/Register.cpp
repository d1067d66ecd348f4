// Register.cpp: operands and their spelling; the allocator.
#include "kiln/amdgcn/Register.h"

#include "kiln/amdgcn/Allocator.h"

#include <bit>
#include <cstring>
#include <fmt/format.h>

namespace kiln::amdgcn {

std::string_view name(RegisterKind kind) {
    switch (kind) {
    case RegisterKind::Vector:
        return "v";
    case RegisterKind::Scalar:
        return "s";
    case RegisterKind::Accumulator:
        return "a";
    case RegisterKind::Special:
        return "special";
    case RegisterKind::Literal:
        return "literal";
    case RegisterKind::Label:
        return "label";
    }
    return "?";
}

std::string_view name(Special special) {
    switch (special) {
    case Special::Vcc:
        return "vcc";
    case Special::VccLo:
        return "vcc_lo";
    case Special::Exec:
        return "exec";
    case Special::ExecLo:
        return "exec_lo";
    case Special::M0:
        return "m0";
    case Special::Scc:
        return "scc";
    case Special::Off:
        return "off";
    case Special::Null:
        return "null";
    }
    return "?";
}

// ---- Allocation and allocator ----

AllocatorState::AllocatorState(RegisterKind kind_, int size_, std::string target_)
    : kind(kind_)
    , size(size_)
    , target(std::move(target_))
    , used(static_cast<std::size_t>(size_), 0) {}

void AllocatorState::release(int first, int count) {
    for (int r = first; r < first + count; ++r)
        used[static_cast<std::size_t>(r)] = 0;
}

Allocation::Allocation(std::shared_ptr<AllocatorState> owner, int first, int count)
    : owner_(std::move(owner))
    , first_(first)
    , count_(count) {}

Allocation::~Allocation() {
    if (owner_)
        owner_->release(first_, count_);
}

Allocator::Allocator(RegisterKind kind, int size, std::string target)
    : state_(std::make_shared<AllocatorState>(kind, size, std::move(target))) {}

int Allocator::inUse() const {
    int n = 0;
    for (char u : state_->used)
        n += u ? 1 : 0;
    return n;
}

Value Allocator::allocate(DataType type, int count, int alignment, std::string_view purpose) {
    KILN_ASSERT(count > 0 && alignment > 0, "allocate({}, {})", count, alignment);
    AllocatorState& s = *state_;
    int largestFree = 0;
    int run = 0;
    for (int r = 0; r < s.size; ++r) {
        run = s.used[static_cast<std::size_t>(r)] ? 0 : run + 1;
        largestFree = std::max(largestFree, run);
    }
    for (int first = 0; first + count <= s.size; first += alignment) {
        bool free = true;
        for (int r = first; r < first + count && free; ++r)
            free = !s.used[static_cast<std::size_t>(r)];
        if (!free)
            continue;
        for (int r = first; r < first + count; ++r)
            s.used[static_cast<std::size_t>(r)] = 1;
        s.highWater = std::max(s.highWater, first + count);
        return Value::allocated(s.kind, std::make_shared<Allocation>(state_, first, count), type);
    }
    throw OutOfRegisters(fmt::format(
        "out of {}GPRs on {}: {} needs {} register(s) aligned to {}, but {} of the {} are in use "
        "(largest free run: {}); use a smaller tile or fewer values in flight",
        s.kind == RegisterKind::Vector ? "V" : (s.kind == RegisterKind::Scalar ? "S" : "A"),
        s.target, purpose, count, alignment, inUse(), s.size, largestFree));
}

Value Allocator::reserve(int first, int count, DataType type) {
    AllocatorState& s = *state_;
    KILN_ASSERT(first >= 0 && first + count <= s.size, "reserve {}+{} of {}", first, count, s.size);
    for (int r = first; r < first + count; ++r) {
        KILN_ASSERT(!s.used[static_cast<std::size_t>(r)], "register {}{} reserved twice",
                    name(s.kind), r);
        s.used[static_cast<std::size_t>(r)] = 1;
    }
    s.highWater = std::max(s.highWater, first + count);
    // Never given back: the Allocation has no owner to return to.
    return Value::allocated(s.kind, std::make_shared<Allocation>(nullptr, first, count), type);
}

// ---- Value ----

Value Value::physical(RegisterKind kind, int first, int count, DataType type) {
    Value v;
    v.kind_ = kind;
    v.first_ = first;
    v.count_ = count;
    v.type_ = type;
    return v;
}

Value Value::allocated(RegisterKind kind, std::shared_ptr<Allocation const> allocation,
                       DataType type) {
    Value v;
    v.kind_ = kind;
    v.first_ = allocation->first();
    v.count_ = allocation->count();
    v.type_ = type;
    v.allocation_ = std::move(allocation);
    return v;
}

Value Value::special(Special which, DataType type) {
    Value v;
    v.kind_ = RegisterKind::Special;
    v.special_ = which;
    v.type_ = type;
    v.count_ = (which == Special::Vcc || which == Special::Exec) ? 2 : 1;
    return v;
}

Value Value::literal(std::int64_t value, DataType type) {
    Value v;
    v.kind_ = RegisterKind::Literal;
    v.literal_ = value;
    v.type_ = type;
    return v;
}

Value Value::literalF32(float value) {
    Value v;
    v.kind_ = RegisterKind::Literal;
    v.literal_ = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(value));
    v.type_ = DataType::F32;
    v.floatLiteral_ = true;
    return v;
}

Value Value::label(std::string name) {
    Value v;
    v.kind_ = RegisterKind::Label;
    v.label_ = std::move(name);
    return v;
}

bool Value::isRegister() const {
    return kind_ == RegisterKind::Vector || kind_ == RegisterKind::Scalar ||
           kind_ == RegisterKind::Accumulator || kind_ == RegisterKind::Special;
}

Value Value::as(DataType type) const {
    Value v = *this;
    v.type_ = type;
    return v;
}

int Value::first() const {
    KILN_ASSERT(kind_ == RegisterKind::Vector || kind_ == RegisterKind::Scalar ||
                    kind_ == RegisterKind::Accumulator,
                "first() of {}", str());
    return first_;
}

Value Value::sub(int offset, int count) const {
    KILN_ASSERT(offset >= 0 && offset + count <= count_, "sub({}, {}) of {}", offset, count, str());
    if (kind_ == RegisterKind::Special) {
        KILN_ASSERT(offset == 0 || count == 1, "sub of {}", str());
        Value v = *this;
        if (count == 1)
            v.special_ = special_ == Special::Vcc ? Special::VccLo : Special::ExecLo;
        v.count_ = count;
        v.type_ = DataType::I32;
        return v;
    }
    Value v = *this;
    v.first_ = first_ + offset;
    v.count_ = count;
    if (count == 1 && (type_ == DataType::I64 || type_ == DataType::F64))
        v.type_ = DataType::I32;
    return v;
}

namespace {
// The f32 inline constants of the encodings (0.0 is printed as the integer 0).
constexpr std::uint32_t kInlineFloats[] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000,
                                           0x40000000, 0xc0000000, 0x40800000, 0xc0800000};
constexpr char const* kInlineFloatText[] = {"0.5", "-0.5", "1.0", "-1.0",
                                            "2.0", "-2.0", "4.0", "-4.0"};
} // namespace

namespace {
// The f64 inline constants, as bit patterns.
constexpr std::uint64_t kInlineDoubles[] = {
    0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000, 0xbff0000000000000,
    0x4000000000000000, 0xc000000000000000, 0x4010000000000000, 0xc010000000000000};
int inlineDouble(std::int64_t bits) {
    for (std::size_t k = 0; k < std::size(kInlineDoubles); ++k)
        if (static_cast<std::uint64_t>(bits) == kInlineDoubles[k])
            return static_cast<int>(k);
    return -1;
}
} // namespace

bool Value::isInlineConstant() const {
    if (kind_ != RegisterKind::Literal)
        return false;
    if (literal_ >= -16 && literal_ <= 64)
        return true;
    if (type_ == DataType::F64 && inlineDouble(literal_) >= 0)
        return true;
    if (floatLiteral_) {
        for (std::uint32_t bits : kInlineFloats)
            if (static_cast<std::uint32_t>(literal_) == bits)
                return true;
    }
    return false;
}

Value Value::negated() const {
    KILN_ASSERT(isRegister(), "negation modifier on {}", str());
    Value v = *this;
    v.negated_ = !negated_;
    return v;
}

Value Value::released() const {
    Value v = *this;
    v.allocation_.reset();
    return v;
}

std::vector<PhysicalRegister> Value::registers() const {
    std::vector<PhysicalRegister> out;
    switch (kind_) {
    case RegisterKind::Vector:
    case RegisterKind::Scalar:
    case RegisterKind::Accumulator:
        for (int r = first_; r < first_ + count_; ++r)
            out.push_back({kind_, r});
        break;
    case RegisterKind::Special:
        // vcc is the pair vcc_lo:vcc_hi, exec likewise: both halves are named so that a write of
        // vcc is seen by a read of vcc_lo.
        if (special_ == Special::Vcc || special_ == Special::VccLo) {
            out.push_back({kind_, static_cast<int>(Special::VccLo)});
            if (special_ == Special::Vcc)
                out.push_back({kind_, static_cast<int>(Special::Vcc)});
        } else if (special_ == Special::Exec || special_ == Special::ExecLo) {
            out.push_back({kind_, static_cast<int>(Special::ExecLo)});
            if (special_ == Special::Exec)
                out.push_back({kind_, static_cast<int>(Special::Exec)});
        } else if (special_ != Special::Off && special_ != Special::Null) {
            out.push_back({kind_, static_cast<int>(special_)});
        }
        break;
    case RegisterKind::Literal:
    case RegisterKind::Label:
        break;
    }
    return out;
}

std::string Value::str() const {
    if (negated_) {
        Value plain = *this;
        plain.negated_ = false;
        return "-" + plain.str();
    }
    switch (kind_) {
    case RegisterKind::Vector:
    case RegisterKind::Scalar:
    case RegisterKind::Accumulator:
        if (count_ == 1)
            return fmt::format("{}{}", name(kind_), first_);
        return fmt::format("{}[{}:{}]", name(kind_), first_, first_ + count_ - 1);
    case RegisterKind::Special:
        return std::string(name(special_));
    case RegisterKind::Literal:
        if (type_ == DataType::F64 && inlineDouble(literal_) >= 0)
            return kInlineFloatText[inlineDouble(literal_)];
        if (floatLiteral_) {
            for (std::size_t k = 0; k < std::size(kInlineFloats); ++k)
                if (static_cast<std::uint32_t>(literal_) == kInlineFloats[k])
                    return kInlineFloatText[k];
        }
        if (literal_ >= -16 && literal_ <= 64)
            return std::to_string(literal_);
        return fmt::format("0x{:x}", static_cast<std::uint64_t>(literal_) &
                                         (type_ == DataType::I64 || type_ == DataType::F64
                                              ? ~std::uint64_t{0}
                                              : std::uint64_t{0xffffffff}));
    case RegisterKind::Label:
        return label_;
    }
    return "?";
}

bool Value::sameRegisters(Value const& other) const {
    return registers() == other.registers() && !registers().empty();
}

} // namespace kiln::amdgcn
