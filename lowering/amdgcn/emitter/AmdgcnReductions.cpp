// AmdgcnReductions.cpp: the AMDGCN steps of a Reduce whose rows several workitems share
// (KernelWalker::reduceCooperatively, docs/codegen.md "Cooperative reductions"): an accumulator
// in VGPRs with the combine's identity (f64, f32 for 16-bit rows, i32 or i64), elements combined
// into it where their lane mask holds (v_cndmask, no exec changes), the butterfly over 32 lanes
// with ds_swizzle_b32 in its bit-mask mode (lane ^ distance; a 64-bit value as two dwords; wave64
// pairs its halves through LDS like two warps), and the partial values of a row's groups exchanged
// through a scratch area after the workgroup's other LDS.
#include "AmdgcnKernelWriter.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>
#include <limits>

namespace kiln::lowering::detail {

namespace {

// A mean combines as a sum (reduced() divides it).
BinaryOp combineOp(Combine combine) {
    return combine == Combine::Sum || combine == Combine::Mean ? BinaryOp::Add
           : combine == Combine::Max                           ? BinaryOp::Max
                                                               : BinaryOp::Min;
}

int dwords(DataType type) {
    return type == DataType::I32 || type == DataType::F32 ? 1 : 2;
}

} // namespace

std::int64_t AmdgcnKernelWriter::identity(Combine combine, DataType accType) {
    if (accType != DataType::F64 && accType != DataType::F32 && accType != DataType::I32 &&
        accType != DataType::I64)
        throw UserError(fmt::format("a reduction of {} is not written yet", name(accType)));
    if (combine == Combine::Sum || combine == Combine::Mean)
        return 0;
    if (accType == DataType::F64) // the bits of -inf and +inf
        return combine == Combine::Max ? static_cast<std::int64_t>(0xfff0000000000000ull)
                                       : 0x7ff0000000000000ll;
    if (accType == DataType::F32)
        return combine == Combine::Max ? 0xff800000ll : 0x7f800000ll;
    if (accType == DataType::I32)
        return combine == Combine::Max ? std::numeric_limits<std::int32_t>::min()
                                       : std::numeric_limits<std::int32_t>::max();
    return combine == Combine::Max ? std::numeric_limits<std::int64_t>::min()
                                   : std::numeric_limits<std::int64_t>::max();
}

SharedLayout AmdgcnKernelWriter::withScratch(SharedLayout layout, std::size_t scratchBytes) {
    if (scratchBytes > 0)
        layout.bytes = (layout.bytes + 15) / 16 * 16 + scratchBytes;
    return layout;
}

gcn::Value AmdgcnKernelWriter::combineIdentity(Combine combine, DataType type) {
    std::int64_t const bits = identity(combine, type);
    gcn::Value const acc = context_.allocateVector(type, dwords(type), "an accumulator");
    copy(acc, gcn::Value::literal(bits, type));
    return acc;
}

void AmdgcnKernelWriter::combineInto(Combine combine, gcn::Value const& acc, DataType accType,
                                     gcn::Value const& value, DataType valueType,
                                     std::vector<ExprPtr> const& conditions) {
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    gcn::Value next =
        gen.binary(combineOp(combine), acc, gen.convert(value, valueType, accType), accType);
    if (auto const m = mask(gen, conditions))
        next = gen.select(*m, next, acc, accType);
    copy(acc, b_.toVector(next, accType));
    flush();
}

gcn::Value AmdgcnKernelWriter::laneValue(gcn::Value const& value, DataType type,
                                         std::int64_t distance) {
    KILN_ASSERT(distance > 0 && distance < kLaneGroup, "lane distance {}", distance);
    int const n = dwords(type);
    gcn::Value const other = context_.allocateVector(type, n, "a lane's partial value");
    // Bit-mask mode (and_mask 0x1f, or_mask 0, xor_mask `distance`), which the assembler writes
    // as SWAP: the lanes `distance` apart swap values within each group of 32.
    std::string const swizzle = fmt::format("offset:swizzle(SWAP,{})", distance);
    for (int k = 0; k < n; ++k)
        b_.op("ds_swizzle_b32", {n == 1 ? other : other.sub(k)}, {n == 1 ? value : value.sub(k)},
              {swizzle});
    return other;
}

// A slot a constant number of slots from the last one computed since the write is that address
// plus the ds instruction's offset: a row's groups' values are read without an address each
// (whose registers would stay live until the operation ends: 32 of them spilled past 128 VGPRs).
std::pair<gcn::Value, int> AmdgcnKernelWriter::scratchAddress(ExprPtr const& slot) {
    if (scratchBase_)
        if (auto const d = IndexFacts::difference(slot, scratchBase_->first);
            d && *d >= 0 && *d * 8 < 65536)
            return {scratchBase_->second, static_cast<int>(*d * 8)};
    std::size_t const offset = shared_.bytes - reductionScratchBytes(graph_, shape_);
    ExprPtr const at = simplify(slot * literal(8) + literal(static_cast<std::int64_t>(offset)));
    gcn::ExpressionGenerator gen(b_, leaves());
    gcn::Value const wide = gen.convert(gen.generate(at), resultType(*at), DataType::I64);
    gcn::Value const address = b_.toVector(gcn::Builder::low(wide), DataType::I32);
    scratchBase_.emplace(slot, address);
    return {address, 0};
}

void AmdgcnKernelWriter::writeScratch(gcn::Value const& acc, DataType type, ExprPtr const& slot) {
    scratchBase_.reset(); // the reads that follow start from their own first slot
    auto const [address, offset] = scratchAddress(slot);
    memory_.storeLds(address, acc, dwords(type) * 4, offset);
    scratchBase_.reset();
    flush();
}

gcn::Value AmdgcnKernelWriter::readScratch(DataType type, ExprPtr const& slot) {
    auto const [address, offset] = scratchAddress(slot);
    gcn::Value const v = memory_.loadLds(address, dwords(type) * 4, offset).as(type);
    flush();
    return v;
}

std::vector<std::string> AmdgcnKernelWriter::deviceCoherent() const {
    if (context_.target().isCdna3())
        return {"sc0", "sc1"}; // past this XCD's L2 too
    if (context_.target().isGfx11())
        return {"glc", "dlc"};
    return {"glc"};
}

gcn::Value AmdgcnKernelWriter::workspaceAddress(ExprPtr const& offset) {
    gcn::ExpressionGenerator gen(b_, leaves());
    gcn::Value const base = arguments_->load(kWorkspaceParameter, out_).as(DataType::I64);
    ExprPtr const at = simplify(offset);
    gcn::Value const o = gen.convert(gen.generate(at), resultType(*at), DataType::I64);
    gcn::Value const sum =
        b_.toVector(gen.binary(BinaryOp::Add, base, o, DataType::I64), DataType::I64);
    flush();
    return sum;
}

// Written through to where every workgroup reads (deviceCoherent()), by the lanes where the
// conditions hold; the barrier of arriveLast() waits for the stores to complete.
void AmdgcnKernelWriter::writeWorkspace(gcn::Value const& acc, DataType type, ExprPtr const& offset,
                                        std::vector<ExprPtr> const& conditions) {
    gcn::Value const address = workspaceAddress(offset);
    gcn::ExpressionGenerator gen(b_, leaves());
    std::optional<gcn::Value> saved;
    if (auto const m = mask(gen, conditions))
        saved = saveExec(*m);
    std::string const m =
        context_.target().mnemonic(gcn::memoryMnemonic("global", false, dwords(type) * 4, false));
    b_.add(gcn::Instruction::op(m, {}, {address, acc, gcn::Value::special(gcn::Special::Off)},
                                deviceCoherent()));
    if (saved)
        setExec(*saved);
    flush();
}

// Workitem 0 counts the workgroup in with an atomic that returns the count before (the
// release before it: CDNA 3 writes its L2 back for the other XCDs), writes whether it was the
// last into the LDS scratch and, if so, sets the counter back to 0. After a barrier every other
// workgroup ends; the last one invalidates its caches (acquire) before it reads.
void AmdgcnKernelWriter::arriveLast(ExprPtr const& offset, std::int64_t parts) {
    bool const cdna3 = context_.target().isCdna3(), gfx11 = context_.target().isGfx11();
    std::optional<int> const vs =
        context_.target().hasVscnt() ? std::optional<int>(0) : std::nullopt;
    barrier();
    gcn::Value const counter = workspaceAddress(offset);
    gcn::ExpressionGenerator gen(b_, leaves());
    ExprPtr const first =
        binary(BinaryOp::Equal, simplify(substitute(linearWorkitem(shape_), known())), literal(0));
    gcn::Value const saved = saveExec(*mask(gen, {first}));
    if (cdna3)
        b_.op("buffer_wbl2", {}, {}, {"sc1"});
    b_.add(gcn::Instruction::wait(gcn::WaitCount{0, 0, std::nullopt, vs}, "release"));
    gcn::Value const one = b_.toVector(gcn::Value::literal(1), DataType::I32);
    gcn::Value const before = context_.allocateVector(DataType::I32, 1, "the count before");
    b_.op(gfx11 ? "global_atomic_add_u32" : "global_atomic_add", {before},
          {counter, one, gcn::Value::special(gcn::Special::Off)},
          cdna3 ? std::vector<std::string>{"sc0", "sc1"} : std::vector<std::string>{"glc"});
    gcn::Value const isLast =
        gen.binary(BinaryOp::Equal, before, gcn::Value::literal(parts - 1), DataType::I32);
    gcn::Value const flag = b_.toVector(
        gen.select(isLast, gcn::Value::literal(1), gcn::Value::literal(0), DataType::I32),
        DataType::I32);
    auto const [slot, at] = scratchAddress(literal(0));
    scratchBase_.reset();
    memory_.storeLds(slot, flag, 4, at);
    flush();
    andExec(saved, isLast);
    writeWorkspace(b_.toVector(gcn::Value::literal(0), DataType::I32), DataType::I32, offset, {});
    setExec(saved);
    flush();
    barrier();
    auto const [again, at2] = scratchAddress(literal(0));
    scratchBase_.reset();
    gcn::Value const seen = memory_.loadLds(again, 4, at2);
    gcn::Value const uniformSeen = context_.allocateScalar(DataType::I32, 1, "the last-part flag");
    b_.op("v_readfirstlane_b32", {uniformSeen}, {seen});
    std::string const goOn = context_.newLabel("last_part");
    b_.op("s_cmp_lg_u32", {}, {uniformSeen, gcn::Value::literal(0)});
    b_.op("s_cbranch_scc1", {}, {gcn::Value::label(goOn)});
    b_.op("s_endpgm", {}, {});
    b_.add(gcn::Instruction::label(goOn));
    if (cdna3)
        b_.op("buffer_inv", {}, {}, {"sc1"});
    else if (gfx11) {
        b_.op("buffer_gl0_inv", {}, {});
        b_.op("buffer_gl1_inv", {}, {});
    } else
        b_.op("buffer_wbinvl1_vol", {}, {});
    flush();
}

gcn::Value AmdgcnKernelWriter::readWorkspace(DataType type, ExprPtr const& offset) {
    gcn::Value const address = workspaceAddress(offset);
    std::string const m =
        context_.target().mnemonic(gcn::memoryMnemonic("global", true, dwords(type) * 4, false));
    gcn::Value const v = context_.allocateVector(type, dwords(type), "a part's value");
    b_.add(gcn::Instruction::op(m, {v}, {address, gcn::Value::special(gcn::Special::Off)},
                                deviceCoherent()));
    flush();
    return v;
}

void AmdgcnKernelWriter::setReduced(Held& held, std::size_t c, gcn::Value const& acc,
                                    Reduction const& r) {
    gcn::ExpressionGenerator gen(b_, leaves());
    held.registers[c] = b_.toVector(gen.convert(acc, r.accumulator, held.type), held.type);
    flush();
}

} // namespace kiln::lowering::detail
