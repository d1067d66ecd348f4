// What the workitems of a workgroup do together on AMD targets: loop, stage a tile through LDS,
// and multiply staged tiles. The same plan as the PTX backend's (PtxWorkgroup.cpp), in the AMD
// code generator's terms:
//
// - A ForLoop's counter is uniform: it lives in an SGPR pair, and the loop tests it with one
//   v_cmp over the active lanes, s_cmp and s_cbranch. The observers see the program in order, so
//   every counter is drained and five wait states pass before the loop starts and before the
//   branch back: no wait or hazard then spans the back edge. A loop counted by an Unroll
//   dimension is written out, one copy of the body per value of its counter.
// - A StoreShared's runs (the walker deals a workgroup's tile out to the workitems in runs of
//   up to 16 bytes, along the tile's last local index) are each loaded as a held value would be
//   (AmdgcnMemory.cpp: vector accesses, lane masks, zeros outside the tensor) and written to
//   LDS, the lanes without elements masked off.
// - A LoadShared is a view; a Multiply into a register tile runs the contraction fully
//   unrolled, reading each workitem's rows of A and columns of B from LDS (consecutive elements
//   in one ds_read, addresses a constant apart as the same register plus an offset) and issuing
//   one v_fma_f32 per accumulator; or, where the accumulators are laid out as MFMA fragments,
//   on the matrix cores (AmdgcnMatrixCores.cpp).
#include "AmdgcnKernelWriter.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering::detail {

void AmdgcnKernelWriter::setHeld(Held& held, std::size_t c, gcn::Value const& value) {
    if (value.isLiteral() && held.registers[c].isRegister() && !gcn::isWide(held.type))
        return copy(held.registers[c], value); // registers given in advance (MFMA fragments)
    gcn::Value const v = b_.toVector(value, held.type);
    // A value assigned again (in a loop) keeps its registers: the code is written once and
    // read by every iteration.
    if (held.registers[c].isRegister() && !held.registers[c].sameRegisters(v))
        copy(held.registers[c], v);
    else
        held.registers[c] = v;
}

bool AmdgcnKernelWriter::uniform(ExprPtr const& e) const {
    return std::visit(
        [this](auto const& node) -> bool {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Index>) {
                auto it = indices_.find(node.dimension);
                return it != indices_.end() && !it->second.isVector();
            } else if constexpr (std::is_same_v<T, expr::DataValue>) {
                return false;
            } else if constexpr (std::is_same_v<T, expr::Unary> ||
                                 std::is_same_v<T, expr::Convert>) {
                return uniform(node.arg);
            } else if constexpr (std::is_same_v<T, expr::Binary>) {
                return uniform(node.lhs) && uniform(node.rhs);
            } else if constexpr (std::is_same_v<T, expr::Select>) {
                return uniform(node.condition) && uniform(node.ifTrue) && uniform(node.ifFalse);
            } else {
                return true; // literals, arguments, sizes and strides
            }
        },
        *e);
}

void AmdgcnKernelWriter::drain() {
    b_.add(gcn::Instruction::wait(
        gcn::WaitCount{0, 0, 0,
                       context_.target().hasVscnt() ? std::optional<int>(0) : std::nullopt},
        "nothing outstanding across the loop's edges"));
    // Five wait states cover every rule but the MFMA ones, which need up to the observer's
    // horizon (19 after a 32x32 MFMA on gfx90a).
    int const states = mfmaSinceDrain_ ? std::max(5, context_.hazards().horizon()) : 5;
    mfmaSinceDrain_ = false;
    b_.add(gcn::Instruction::nop(states, "no hazard across the loop's edges"));
    flush();
}

// A counted loop's counter is uniform: entered and left with nothing outstanding (drain()), its
// condition one scalar compare and branch.
LoopLabels AmdgcnKernelWriter::beginLoop(ExprPtr const& condition) {
    if (!uniform(condition))
        throw UserError(fmt::format("the loop condition {} differs between workitems; only "
                                    "uniform loops are written for AMDGCN",
                                    toString(condition)));
    ++loopDepth_;
    drain();
    LoopLabels const labels{context_.newLabel("loop"), context_.newLabel("done")};
    b_.add(gcn::Instruction::label(labels.top));
    {
        gcn::ExpressionGenerator gen(b_, leaves());
        gcn::Value const go = gen.generate(simplify(condition));
        if (go.isLiteral()) {
            if (go.literalValue() == 0)
                b_.op("s_branch", {}, {gcn::Value::label(labels.done)});
        } else {
            std::string const w = context_.target().waveSize() == 64 ? "u64" : "u32";
            b_.op("s_cmp_eq_" + w, {}, {go, gcn::Value::literal(0)});
            b_.op("s_cbranch_scc1", {}, {gcn::Value::label(labels.done)});
        }
    }
    flush();
    return labels;
}

void AmdgcnKernelWriter::endLoop(LoopLabels const& labels) {
    drain();
    b_.op("s_branch", {}, {gcn::Value::label(labels.top)});
    b_.add(gcn::Instruction::label(labels.done));
    flush();
    --loopDepth_;
}

std::string AmdgcnKernelWriter::beginUnrolled() {
    return context_.newLabel("unrolled");
}

// The counter's register holds `value` in the copy. A guard waits for nothing outstanding
// across its branch.
void AmdgcnKernelWriter::beginCopy(Id counter, std::int64_t value, ExprPtr const& condition,
                                   std::string const& done) {
    copy(indices_.at(counter), gcn::Value::literal(value));
    if (literalInt(condition))
        return;
    if (!uniform(condition))
        throw UserError(fmt::format("the unrolled loop's condition {} differs between "
                                    "workitems; only uniform loops are written for AMDGCN",
                                    toString(condition)));
    drain();
    gcn::ExpressionGenerator gen(b_, leaves());
    std::string const w = context_.target().waveSize() == 64 ? "u64" : "u32";
    b_.op("s_cmp_eq_" + w, {}, {gen.generate(condition), gcn::Value::literal(0)});
    b_.op("s_cbranch_scc1", {}, {gcn::Value::label(done)});
    flush();
    guardedCopies_.insert(done);
}

void AmdgcnKernelWriter::endCopy(Id) {}

void AmdgcnKernelWriter::endUnrolled(std::string const& done) {
    if (guardedCopies_.erase(done))
        drain();
    b_.add(gcn::Instruction::label(done));
    flush();
}

// The 32-bit LDS byte address of element `index` of `shared`: an address already in a VGPR
// plus a constant offset where one is a constant number of elements away.
std::pair<gcn::Value, int> AmdgcnKernelWriter::ldsAddress(Id shared, ExprPtr const& index,
                                                          SharedBases& bases) {
    int const bytes = sizeInBytes(graph_.coordinates.node(shared).dtype.value_or(DataType::F32));
    if (auto const near = nearbyBase(bases, index))
        return {near->first, static_cast<int>(near->second * bytes)};
    ExprPtr const at = simplify(index * literal(bytes) +
                                literal(static_cast<std::int64_t>(shared_.offsets.at(shared))));
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    gcn::Value const wide = gen.convert(gen.generate(at), resultType(*at), DataType::I64);
    gcn::Value const address = b_.toVector(gcn::Builder::low(wide), DataType::I32);
    bases.emplace_back(index, address);
    return {address, 0};
}

// The elements of `shared` at each of `at` (indices from which its own index is solved), in
// their computing form (16-bit floats in f32); consecutive, aligned elements in one ds_read.
std::vector<gcn::Value> AmdgcnKernelWriter::readShared(Id shared,
                                                       std::vector<std::map<Id, ExprPtr>> const& at,
                                                       SharedBases& bases) {
    DataType const stored = graph_.coordinates.node(shared).dtype.value_or(DataType::F32);
    int const bytes = sizeInBytes(stored);
    std::vector<ExprPtr> const offsets = sharedIndices(shared, at);
    std::vector<gcn::Value> out(offsets.size());
    std::size_t const widest = static_cast<std::size_t>(16 / bytes);
    for (std::size_t start = 0; start < offsets.size();) {
        std::size_t const width = sharedReadWidth(offsets, start, widest, bytes, /*minBytes=*/4);
        auto const [address, offset] = ldsAddress(shared, offsets[start], bases);
        gcn::Value const raw =
            memory_.loadLds(address, static_cast<int>(width) * bytes, offset).as(stored);
        for (std::size_t k = 0; k < width; ++k)
            out[start + k] = unpack(raw, k, stored);
        start += width;
    }
    return out;
}

// One workitem's run, as a value this workitem holds: loaded with vector accesses and masks
// (move()), then written to LDS, the lanes without elements masked off; elements outside the
// tensor were loaded as zeros, so that a Multiply over a ragged K sums nothing for them.
void AmdgcnKernelWriter::stageRun(Staging const& staging, StagedRun const& run,
                                  SharedBases& bases) {
    DataType const stored = storedType(staging.memory), staged = staging.staged;
    int const stagedBytes = sizeInBytes(staged);
    std::int64_t const width = staging.width;
    auto const& places = run.places;
    std::vector<Id> targets = flattenAxes(graph_, staging.source);
    targets.push_back(staging.source);
    Held values;
    values.type = stored;
    for (auto const& k : run.at) {
        IndexSolution element = solveIndices(graph_, k, targets, facts_);
        element.conditions.insert(element.conditions.end(), run.tail.begin(), run.tail.end());
        values.elements.push_back(std::move(element));
    }
    values.registers.resize(values.elements.size());
    move(staging.source, values, staging.memory, /*isLoad=*/true);

    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    std::optional<gcn::Value> const some = mask(gen, run.tail);
    std::vector<gcn::Value> data;
    for (gcn::Value const& r : values.registers)
        data.push_back(b_.toVector(gen.convert(r, stored, staged), staged));
    bool consecutive = width * stagedBytes >= 4 && facts_.powerOfTwoDivisor(places[0]) >= width;
    for (std::int64_t v = 1; v < width && consecutive; ++v) {
        auto const d = IndexFacts::difference(places[static_cast<std::size_t>(v)], places[0]);
        consecutive = d && *d == v;
    }
    std::optional<gcn::Value> saved;
    if (some)
        saved = saveExec(*some);
    if (consecutive) {
        auto const [address, offset] = ldsAddress(staging.shared, places[0], bases);
        memory_.storeLds(address, pack(data, staged), static_cast<int>(width) * stagedBytes,
                         offset);
    } else {
        for (std::size_t v = 0; v < data.size(); ++v) {
            auto const [address, offset] = ldsAddress(staging.shared, places[v], bases);
            memory_.storeLds(address, narrow(data[v], staged), stagedBytes, offset);
        }
    }
    if (saved)
        setExec(*saved);
    flush();
    memo_.clear();
}

void AmdgcnKernelWriter::clearAccumulators(Held& acc) {
    for (std::size_t e = 0; e < acc.registers.size(); ++e)
        setHeld(acc, e, gcn::Value::literal(0, DataType::F32));
}

bool AmdgcnKernelWriter::multiplyOnMatrixUnits(Contraction const& c, Held& acc) {
    flush();
    auto const plan = mfmaPlan(c, currentId_, acc);
    if (plan)
        multiplyOnMatrixCores(*plan, c);
    return plan.has_value();
}

std::vector<gcn::Value>
AmdgcnKernelWriter::readOperand(Id view, Id operand, std::vector<std::map<Id, ExprPtr>> const& at,
                                SharedBases& bases) {
    if (graph_.control.node(view).kind == OperationKind::LoadShared)
        return readShared(graph_.mapping.get(view, role::source), at, bases);
    DataType const type = graph_.coordinates.node(operand).dtype.value_or(DataType::F32);
    std::vector<gcn::Value> out;
    for (auto const& k : at) {
        gcn::ExpressionGenerator gen(b_, leaves());
        out.push_back(b_.toVector(
            gen.convert(readInPlace(view, operand, k, {}), type, DataType::F32), DataType::F32));
    }
    return out;
}

void AmdgcnKernelWriter::fma(gcn::Value const& acc, gcn::Value const& a, gcn::Value const& b) {
    b_.op("v_fma_f32", {acc}, {a.as(DataType::F32), b.as(DataType::F32), acc});
}

} // namespace kiln::lowering::detail
