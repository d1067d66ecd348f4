// A Multiply on AMD's matrix cores: operand fragments read from the staged LDS tiles,
// v_mfma_f32_16x16x16 (f16 or bf16 inputs, f32 accumulators in VGPRs) into the accumulators.
//
// The accumulators must be laid out as the MFMA's C/D fragments (rules/gemm-wave-tiles.rules.json
// does so; FragmentLayout.h checks it, over lanes (x, y) of wave 0, x < 16, y < 4, lane x + 16 y):
// every register at its lane-0 place plus (4y, x), grouped into fragments of four at rows R,
// R + 1, R + 2, R + 3 of one column C. Then lane (x, y) holds D[R + 4y + i][C + x] in register i
// of the fragment, which is v_mfma_f32_16x16x16's C/D layout; its A operand holds
// A[R + x][k0 + 4y + j] and its B operand B[k0 + 4y + j][C + x] in half j of two packed dwords.
// Anything else (other operand types, tiles not staged in LDS, a wave32 or MFMA-less target)
// runs the contraction with v_fma_f32 on the same layout (the walker's SIMT Multiply).
//
// The four registers of a fragment must be consecutive VGPRs: hold() gives every value that
// accumulates a Multiply the MFMA will write (the product, or the X of a fused X = X + product)
// its fragments as aligned 4-register ranges before anything is written to it.
//
// Operand fragments: four 16-bit elements consecutive and 8-byte aligned in LDS (a tile staged
// K-contiguous: A row-major, B transposed) are one ds_read_b64; otherwise four ds_read_u16 are
// packed in pairs with v_lshl_or_b32 (bit operations, so bf16 passes unchanged).
#include "AmdgcnKernelWriter.h"
#include "Contraction.h"
#include "OperationOrder.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>
#include <set>

namespace kiln::lowering::detail {

namespace {

constexpr std::int64_t kLaneColumns = 16, kLaneRowGroups = 4, kFragment = 4, kMfmaK = 16;

} // namespace

std::optional<FragmentLayout>
AmdgcnKernelWriter::mfmaLayout(Contraction const& c,
                               std::vector<IndexSolution> const& elements) const {
    gcn::Target const& target = context_.target();
    if (!target.arch().has(arch::Capability::HasMFMA) || target.waveSize() != 64)
        return std::nullopt;
    // Lane (x, y), x < 16 and y < 4, holds rows 4y..4y+3 of column x of each 16 x 16 slab; a
    // fragment's four registers are four consecutive rows of one column.
    return fragmentLayout(
        c, elements, shape_, facts_,
        {{kLaneColumns, kLaneRowGroups}, {0, 1}, {4, 0}, {Place{0, 0}, {1, 0}, {2, 0}, {3, 0}}});
}

void AmdgcnKernelWriter::reserveMfmaAccumulators() {
    for (Id op : graph_.control.nodes()) {
        auto const& o = graph_.control.node(op);
        if (o.kind != OperationKind::Multiply)
            continue;
        Id const product = graph_.mapping.get(op, role::dest);
        Contraction c;
        try {
            c = contractionOf(graph_, op, o);
        } catch (UserError const&) {
            continue; // multiply() says why
        }
        mfmaAccumulators_.emplace(product, c);
        for (Id next : graph_.control.nodes())
            if (Id const sum = fusableAccumulator(graph_, op, next))
                mfmaAccumulators_.emplace(sum, c);
    }
}

void AmdgcnKernelWriter::reserveFragments(Id d, Held& held) {
    auto const it = mfmaAccumulators_.find(d);
    if (it == mfmaAccumulators_.end() || held.type != DataType::F32)
        return;
    auto const layout = mfmaLayout(it->second, held.elements);
    if (!layout)
        return;
    for (auto const& f : layout->fragments) {
        gcn::Value const range =
            context_.allocateVector(DataType::F32, kFragment, "an MFMA accumulator fragment");
        for (std::size_t i = 0; i < f.registers.size(); ++i)
            held.registers[f.registers[i]] = range.sub(static_cast<int>(i));
        fragments_[{d, f.registers[0]}] = range;
    }
}

std::optional<MfmaPlan> AmdgcnKernelWriter::mfmaPlan(Contraction const& c, Id accumulator,
                                                     Held const& acc) const {
    if (acc.type != DataType::F32 || c.inner % kMfmaK != 0)
        return std::nullopt;
    auto const staged = stagedOperands(c);
    if (!staged)
        return std::nullopt;
    auto layout = mfmaLayout(c, acc.elements);
    if (!layout)
        return std::nullopt;
    MfmaPlan plan{*staged, std::move(*layout), {}};
    // The accumulators must be the consecutive VGPRs reserveFragments gave them.
    for (auto const& f : plan.layout.fragments) {
        auto const range = fragments_.find({accumulator, f.registers[0]});
        if (range == fragments_.end())
            return std::nullopt;
        for (std::size_t i = 0; i < f.registers.size(); ++i)
            if (!range->second.sub(static_cast<int>(i))
                     .sameRegisters(acc.registers[f.registers[i]]))
                return std::nullopt;
        plan.ranges.push_back(range->second);
    }
    // Every operand read lies inside its staged tile (checked at the first K step; the others
    // differ by constants the tile's K extent bounds).
    ExprPtr const X = index(*shape_.workitems[0]);
    for (ExprPtr const& r : plan.layout.rowBases)
        if (!mfmaOperandOffsets(plan.lhsShared, c.rowAxis, simplify(r + X), c.lhsK, 0))
            return std::nullopt;
    for (ExprPtr const& col : plan.layout.colBases)
        if (!mfmaOperandOffsets(plan.rhsShared, c.colAxis, simplify(col + X), c.rhsK, 0))
            return std::nullopt;
    return plan;
}

// The four elements of a lane's operand fragment at K index k0 + 4y + j, j < 4, packed in two
// dwords (element j in half j % 2 of dword j / 2).
std::optional<std::vector<ExprPtr>> AmdgcnKernelWriter::mfmaOperandOffsets(Id shared, Id along,
                                                                           ExprPtr const& where,
                                                                           Id kAxis,
                                                                           std::int64_t k0) const {
    ExprPtr const Y = index(*shape_.workitems[1]);
    std::vector<ExprPtr> offsets;
    for (std::int64_t j = 0; j < kFragment; ++j) {
        auto const offset = stagedIndex(shared, along, where, kAxis,
                                        simplify(literal(k0) + literal(4) * Y + literal(j)));
        if (!offset)
            return std::nullopt;
        offsets.push_back(*offset);
    }
    return offsets;
}

gcn::Value AmdgcnKernelWriter::mfmaOperand(Id shared, Id along, ExprPtr const& where, Id kAxis,
                                           std::int64_t k0, SharedBases& bases) {
    auto const found = mfmaOperandOffsets(shared, along, where, kAxis, k0);
    KILN_ASSERT(found, "an MFMA operand read of Shared #{} the plan checked may leave it", shared);
    std::vector<ExprPtr> const& offsets = *found;
    bool consecutive = facts_.powerOfTwoDivisor(offsets[0]) >= kFragment;
    for (std::size_t j = 1; j < offsets.size() && consecutive; ++j) {
        auto const d = IndexFacts::difference(offsets[j], offsets[0]);
        consecutive = d && *d == static_cast<std::int64_t>(j);
    }
    if (consecutive) {
        auto const [address, offset] = ldsAddress(shared, offsets[0], bases);
        return memory_.loadLds(address, 8, offset);
    }
    std::vector<gcn::Value> halves;
    for (ExprPtr const& o : offsets) {
        auto const [address, offset] = ldsAddress(shared, o, bases);
        halves.push_back(memory_.loadLds(address, 2, offset));
    }
    gcn::Value const packed = context_.allocateVector(DataType::I64, 2, "an MFMA operand");
    for (int d = 0; d < 2; ++d)
        b_.op("v_lshl_or_b32", {packed.sub(d)},
              {halves[static_cast<std::size_t>(2 * d + 1)], gcn::Value::literal(16),
               halves[static_cast<std::size_t>(2 * d)]});
    return packed;
}

std::string AmdgcnKernelWriter::mfmaMnemonic(DataType type) const {
    bool const cdna3 = context_.target().isCdna3();
    if (type == DataType::BF16)
        return cdna3 ? "v_mfma_f32_16x16x16_bf16" : "v_mfma_f32_16x16x16bf16_1k";
    return cdna3 ? "v_mfma_f32_16x16x16_f16" : "v_mfma_f32_16x16x16f16";
}

void AmdgcnKernelWriter::multiplyOnMatrixCores(MfmaPlan const& plan, Contraction const& c) {
    ExprPtr const X = index(*shape_.workitems[0]);
    std::string const mnemonic = mfmaMnemonic(plan.type);
    SharedBases bases;
    for (std::int64_t k0 = 0; k0 < c.inner; k0 += kMfmaK) {
        std::vector<gcn::Value> a, b;
        for (ExprPtr const& r : plan.layout.rowBases)
            a.push_back(mfmaOperand(plan.lhsShared, c.rowAxis, simplify(r + X), c.lhsK, k0, bases));
        for (ExprPtr const& col : plan.layout.colBases)
            b.push_back(
                mfmaOperand(plan.rhsShared, c.colAxis, simplify(col + X), c.rhsK, k0, bases));
        for (std::size_t f = 0; f < plan.layout.fragments.size(); ++f) {
            auto const& fragment = plan.layout.fragments[f];
            gcn::Value const& d = plan.ranges[f];
            b_.op(mnemonic, {d}, {a[fragment.rowSlab], b[fragment.colSlab], d});
        }
        flush(); // the operands of this K step are done
        memo_.clear();
    }
    mfmaSinceDrain_ = true;
}

} // namespace kiln::lowering::detail
