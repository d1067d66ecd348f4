// A Multiply on AMD's matrix cores: operand fragments read from the staged LDS tiles,
// v_mfma_f32_16x16x16 (f16 or bf16 inputs, f32 accumulators in VGPRs) into the accumulators.
//
// The graph decides who holds which accumulator (rules/gemm-wave-tiles.rules.json lays a wave's
// tile out as the MFMA's C/D fragments); code generation does not trust that, it checks it. Each
// accumulator's place in the result is evaluated for every lane (x, y) of wave 0 (x < 16,
// y < 4, lane x + 16 y): the layout is the MFMA's when every register sits at its lane-0 place
// plus (4y, x), and the registers group into fragments of four at rows R, R + 1, R + 2, R + 3 of
// one column C. Then lane (x, y) holds D[R + 4y + i][C + x] in register i of the fragment, which
// is v_mfma_f32_16x16x16's C/D layout; its A operand holds A[R + x][k0 + 4y + j] and its B
// operand B[k0 + 4y + j][C + x] in half j of two packed dwords. Anything else (other operand
// types, tiles not staged in LDS, a wave32 or MFMA-less target) runs the contraction with
// v_fma_f32 on the same layout (AmdgcnWorkgroup.cpp).
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
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>
#include <set>

namespace kiln::lowering::detail {

namespace {

constexpr std::int64_t kLaneColumns = 16, kLaneRowGroups = 4, kFragment = 4, kMfmaK = 16;

} // namespace

std::optional<MfmaLayout>
AmdgcnKernelWriter::mfmaLayout(Contraction const& c,
                               std::vector<IndexSolution> const& elements) const {
    gcn::Target const& target = context_.target();
    if (!target.arch().has(arch::Capability::HasMFMA) || target.waveSize() != 64 ||
        shape_.block[0] != kLaneColumns || shape_.block[1] != kLaneRowGroups ||
        !shape_.workitems[0] || !shape_.workitems[1] || elements.empty() ||
        elements.size() % kFragment != 0)
        return std::nullopt;
    Id const x = *shape_.workitems[0], y = *shape_.workitems[1];
    LaneEnvironment env;
    for (auto const& d : shape_.workgroups)
        if (d)
            env.indices[*d] = 0;
    if (shape_.workitems[2])
        env.indices[*shape_.workitems[2]] = 0;
    // Each element's row and column; an element without them is not an accumulator of `c`.
    std::vector<std::pair<ExprPtr, ExprPtr>> where;
    for (IndexSolution const& e : elements) {
        auto const row = e.indices.find(c.destRow), col = e.indices.find(c.destCol);
        if (row == e.indices.end() || col == e.indices.end())
            return std::nullopt;
        where.emplace_back(row->second, col->second);
    }
    auto place = [&](std::size_t e, std::int64_t column, std::int64_t rows) -> Place {
        env.indices[x] = column;
        env.indices[y] = rows;
        return {evaluateInt(*where[e].first, env), evaluateInt(*where[e].second, env)};
    };
    std::map<Place, std::size_t> at;
    try {
        for (std::size_t e = 0; e < elements.size(); ++e) {
            Place const p = place(e, 0, 0);
            for (std::int64_t rows = 0; rows < kLaneRowGroups; ++rows)
                for (std::int64_t column = 0; column < kLaneColumns; ++column)
                    if (place(e, column, rows) != Place{p.first + 4 * rows, p.second + column})
                        return std::nullopt;
            if (!at.emplace(p, e).second)
                return std::nullopt;
        }
    } catch (UserError const&) {
        return std::nullopt;
    }

    // Fragments of four consecutive rows of one column; slabs of 16 rows and 16 columns.
    auto const grouped = groupFragments(at, {Place{0, 0}, {1, 0}, {2, 0}, {3, 0}});
    if (!grouped)
        return std::nullopt;
    MfmaLayout layout;
    layout.fragments = grouped->fragments;

    // The slabs' first row and column as expressions of the wave, at lane (0, 0).
    std::map<Id, ExprPtr> const lane0{{x, literal(0)}, {y, literal(0)}};
    for (std::size_t e : grouped->rows)
        layout.rowBases.push_back(facts_.reduce(simplify(substitute(where[e].first, lane0))));
    for (std::size_t e : grouped->cols)
        layout.colBases.push_back(facts_.reduce(simplify(substitute(where[e].second, lane0))));
    return layout;
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
    MfmaPlan plan;
    for (auto [operand, shared] : {std::pair{c.lhs, &plan.lhsShared}, {c.rhs, &plan.rhsShared}}) {
        auto const view = views_.find(operand);
        if (view == views_.end() ||
            graph_.control.node(view->second).kind != OperationKind::LoadShared)
            return std::nullopt;
        *shared = graph_.mapping.get(view->second, role::source);
    }
    plan.type = graph_.coordinates.node(plan.lhsShared).dtype.value_or(DataType::F32);
    if ((plan.type != DataType::F16 && plan.type != DataType::BF16) ||
        graph_.coordinates.node(plan.rhsShared).dtype.value_or(DataType::F32) != plan.type)
        return std::nullopt;
    auto layout = mfmaLayout(c, acc.elements);
    if (!layout)
        return std::nullopt;
    // The accumulators must be the consecutive VGPRs reserveFragments gave them.
    for (auto const& f : layout->fragments) {
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
    for (ExprPtr const& r : layout->rowBases)
        if (!mfmaOperandOffsets(plan.lhsShared, c.rowAxis, simplify(r + X), c.lhsK, 0))
            return std::nullopt;
    for (ExprPtr const& col : layout->colBases)
        if (!mfmaOperandOffsets(plan.rhsShared, c.colAxis, simplify(col + X), c.rhsK, 0))
            return std::nullopt;
    plan.layout = std::move(*layout);
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
        auto k = known();
        k[along] = where;
        k[kAxis] = simplify(literal(k0) + literal(4) * Y + literal(j));
        auto const solution = solveIndices(graph_, k, {shared}, facts_);
        if (!solution.conditions.empty())
            return std::nullopt;
        offsets.push_back(facts_.reduce(solution.at(shared)));
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
    bool const cdna3 = context_.target().isGfx942();
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
