// PtxReductions.cpp: the PTX steps of a Reduce whose rows several workitems share
// (KernelWalker::reduceCooperatively, docs/codegen.md "Cooperative reductions"): an accumulator
// with the combine's identity, elements combined into it under their conditions' predicate,
// the butterfly over a warp's lanes with shfl.sync.bfly (a 64-bit value as two 32-bit halves),
// and the partial values of a row's warps exchanged through a scratch area of kiln_shared.
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

namespace {

std::string_view combineName(Combine combine) {
    switch (combine) {
    case Combine::Sum:
    case Combine::Mean: // the walker divides the sum afterwards
        return "add";
    case Combine::Max:
        return "max";
    case Combine::Min:
        return "min";
    }
    return "add";
}

bool wide(PtxType t) {
    return t == PtxType::F64 || t == PtxType::S64 || t == PtxType::U64;
}

} // namespace

std::string PtxCodegen::combineIdentity(Combine combine, DataType type) {
    PtxType const t = registerType(type);
    std::string identity;
    if (combine == Combine::Sum || combine == Combine::Mean)
        identity = zero(t);
    else if (t == PtxType::F64)
        identity = combine == Combine::Max ? "0dFFF0000000000000" : "0d7FF0000000000000";
    else if (t == PtxType::F32)
        identity = combine == Combine::Max ? "0fFF800000" : "0f7F800000";
    else if (t == PtxType::S32)
        identity = combine == Combine::Max ? "-2147483648" : "2147483647";
    else // the same as reduceRows: one above the least i64 for a max
        identity = combine == Combine::Max ? "-9223372036854775807" : "9223372036854775807";
    std::string const r = writer_.newRegister(t);
    writer_.instruction(fmt::format("mov{} {}, {}", ptxName(t), r, identity));
    return r;
}

void PtxCodegen::combineInto(Combine combine, std::string const& acc, DataType accType,
                             std::string const& value, DataType valueType,
                             std::vector<ExprPtr> const& conditions) {
    writer_.pushScope();
    std::string const v = writer_.convert(value, valueType, accType);
    std::string const p = writer_.emitConditions(conditions, bindings());
    writer_.instruction(fmt::format("{}{}{} {}, {}, {}", p.empty() ? "" : "@" + p + " ",
                                    combineName(combine), ptxName(registerType(accType)), acc, acc,
                                    v));
    writer_.popScope();
}

std::string PtxCodegen::laneValue(std::string const& value, DataType type, std::int64_t distance) {
    PtxType const t = registerType(type);
    std::string const other = writer_.newRegister(t);
    auto const shuffle = [&](std::string const& to, std::string const& from) {
        writer_.instruction(
            fmt::format("shfl.sync.bfly.b32 {}, {}, {}, 31, -1", to, from, distance));
    };
    if (wide(t)) {
        std::array<std::string, 4> half;
        for (auto& h : half)
            h = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("mov.b64 {{{}, {}}}, {}", half[0], half[1], value));
        shuffle(half[2], half[0]);
        shuffle(half[3], half[1]);
        writer_.instruction(fmt::format("mov.b64 {}, {{{}, {}}}", other, half[2], half[3]));
    } else {
        shuffle(other, value);
    }
    return other;
}

// The scratch follows everything else in kiln_shared; it is laid out when the first exchange
// is written (the walk reaches the Reduce after the staged tiles have their places).
std::string PtxCodegen::scratchAddress(ExprPtr const& slot) {
    if (!scratchOffset_) {
        scratchOffset_ = (sharedBytes_ + 15) / 16 * 16;
        sharedBytes_ = *scratchOffset_ + reductionScratchBytes(graph_, shape_);
        requireShared(1, static_cast<std::int64_t>(sharedBytes_));
    }
    std::string const wideOffset = writer_.emitIndex(
        simplify(slot * literal(8) + literal(static_cast<std::int64_t>(*scratchOffset_))),
        bindings());
    std::string const base = writer_.newRegister(PtxType::B32),
                      offset = writer_.newRegister(PtxType::B32),
                      address = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.u32 {}, kiln_shared", base));
    writer_.instruction(fmt::format("cvt.u32.u64 {}, {}", offset, wideOffset));
    writer_.instruction(fmt::format("add.u32 {}, {}, {}", address, base, offset));
    return address;
}

void PtxCodegen::writeScratch(std::string const& acc, DataType type, ExprPtr const& slot) {
    PtxType const t = registerType(type);
    writer_.instruction(
        fmt::format("st.shared{} [{}], {}", wide(t) ? ".b64" : ".b32", scratchAddress(slot), acc));
}

std::string PtxCodegen::readScratch(DataType type, ExprPtr const& slot) {
    PtxType const t = registerType(type);
    std::string const r = writer_.newRegister(t);
    writer_.instruction(
        fmt::format("ld.shared{} {}, [{}]", wide(t) ? ".b64" : ".b32", r, scratchAddress(slot)));
    return r;
}

std::string PtxCodegen::workspaceAddress(ExprPtr const& offset) {
    std::string const address = writer_.newRegister(PtxType::S64);
    writer_.instruction(fmt::format("add.s64 {}, {}, {}", address,
                                    pointers_.at(kWorkspaceParameter),
                                    writer_.emitIndex(simplify(offset), bindings())));
    return address;
}

// The write, then a release fence: the counter's atomic (arriveLast()) follows every write of the
// workgroup that the barrier before it orders, and the fence makes them visible at the GPU's
// scope before it, as CUDA's threadFenceReduction sample does.
void PtxCodegen::writeWorkspace(std::string const& acc, DataType type, ExprPtr const& offset,
                                std::vector<ExprPtr> const& conditions) {
    writer_.pushScope();
    std::string const address = workspaceAddress(offset);
    std::string const p = writer_.emitConditions(conditions, bindings());
    std::string const guard = p.empty() ? "" : "@" + p + " ";
    writer_.instruction(fmt::format("{}st.global{} [{}], {}", guard,
                                    wide(registerType(type)) ? ".b64" : ".b32", address, acc));
    writer_.instruction(guard + "fence.acq_rel.gpu");
    writer_.popScope();
}

// Workitem 0 counts the workgroup in (an acquire-release atomic at the GPU's scope) and tells the
// others through the scratch whether it was the last; the last sets the counter back to 0. Every
// other workgroup ends here; the last one's workitems fence (acquire) before they read.
void PtxCodegen::arriveLast(ExprPtr const& offset, std::int64_t parts) {
    barrier();
    std::string const flag = scratchAddress(literal(0));
    std::string const skip = writer_.newLabel("arrived");
    writer_.pushScope();
    std::string const first = writer_.emitConditions(
        {binary(BinaryOp::Equal, simplify(substitute(linearWorkitem(shape_), known())),
                literal(0))},
        bindings());
    writer_.instruction(fmt::format("@!{} bra {}", first, skip));
    std::string const counter = workspaceAddress(offset);
    std::string const before = writer_.newRegister(PtxType::B32),
                      last = writer_.newRegister(PtxType::Pred),
                      bit = writer_.newRegister(PtxType::B32);
    writer_.instruction("fence.acq_rel.gpu");
    writer_.instruction(
        fmt::format("atom.acq_rel.gpu.global.add.u32 {}, [{}], 1", before, counter));
    writer_.instruction(fmt::format("setp.eq.u32 {}, {}, {}", last, before, parts - 1));
    writer_.instruction(fmt::format("selp.b32 {}, 1, 0, {}", bit, last));
    writer_.instruction(fmt::format("st.shared.b32 [{}], {}", flag, bit));
    writer_.instruction(fmt::format("@{} st.relaxed.gpu.global.u32 [{}], 0", last, counter));
    writer_.label(skip);
    writer_.popScope();
    barrier();
    std::string const seen = writer_.newRegister(PtxType::B32),
                      notLast = writer_.newRegister(PtxType::Pred);
    writer_.instruction(fmt::format("ld.shared.b32 {}, [{}]", seen, flag));
    writer_.instruction(fmt::format("setp.eq.u32 {}, {}, 0", notLast, seen));
    if (exitLabel_.empty())
        exitLabel_ = writer_.newLabel("exit");
    writer_.instruction(fmt::format("@{} bra.uni {}", notLast, exitLabel_));
    writer_.instruction("fence.acq_rel.gpu");
}

// Relaxed at the GPU's scope: read where the other workgroups' writes are, not from a line this
// multiprocessor's L1 may hold.
std::string PtxCodegen::readWorkspace(DataType type, ExprPtr const& offset) {
    PtxType const t = registerType(type);
    std::string const r = writer_.newRegister(t);
    writer_.instruction(fmt::format("ld.relaxed.gpu.global{} {}, [{}]", wide(t) ? ".b64" : ".b32",
                                    r, workspaceAddress(offset)));
    return r;
}

void PtxCodegen::setReduced(Held& held, std::size_t c, std::string const& acc, Reduction const& r) {
    writer_.instruction(fmt::format("mov{} {}, {}", ptxName(registerType(held.type)),
                                    held.registers[c],
                                    writer_.convert(acc, r.accumulator, held.type)));
}

} // namespace kiln::lowering::detail
