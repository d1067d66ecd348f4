// A Multiply on the tensor cores: ldmatrix from the staged tiles, mma.sync.m16n8k16 into the
// accumulators.
//
// The graph decides who holds which accumulator (rules/gemm-warp-tiles.rules.json lays a warp's
// tile out as mma.sync's fragments); code generation does not trust that, it checks it. Each
// accumulator's place in the result is evaluated for every lane (x, y) of a warp: the layout is
// mma.sync's when every register sits at its lane-0 place plus (y, 2x), and the registers group
// into fragments of four at (R, C), (R, C + 1), (R + 8, C), (R + 8, C + 1). Anything else, or
// operands that are not 16-bit tiles staged in shared memory, or a target without mma.sync,
// runs the contraction with fma instead (PtxWorkgroup.cpp), on the same layout.
//
// Operand fragments come from shared memory with ldmatrix, .trans where the staged tile is
// contiguous along M (A) or N (B) rather than K. Each lane supplies the address of one 8-element
// row of one of the four 8 x 8 matrices; those addresses are the operand's coordinate
// transforms solved at the lane's row and K index, as for any other read.
#include "Contraction.h"
#include "PtxCodegen.h"
#include "kiln/graph/Evaluate.h"

namespace kiln::lowering::detail {

std::optional<MmaPlan> PtxCodegen::tensorCorePlan(Contraction const& c, Held const& acc) {
    if (!arch_.has(arch::Capability::HasMmaSync) || !arch_.has(arch::Capability::HasLdmatrix))
        return std::nullopt;
    if (acc.type != DataType::F32 || c.inner % 16 != 0 || shape_.block[0] != 4 ||
        shape_.block[1] != 8 || !shape_.workitems[0] || !shape_.workitems[1])
        return std::nullopt;
    MmaPlan plan;
    for (auto [operand, shared] : {std::pair{c.lhs, &plan.lhsShared}, {c.rhs, &plan.rhsShared}}) {
        auto const view = views_.find(operand);
        if (view == views_.end() ||
            graph_.control.node(view->second).kind != OperationKind::LoadShared)
            return std::nullopt;
        *shared = graph_.mapping.get(view->second, role::source);
    }
    plan.type = graph_.coordinates.node(plan.lhsShared).dtype.value_or(DataType::F32);
    if (!isHalf(plan.type) ||
        graph_.coordinates.node(plan.rhsShared).dtype.value_or(DataType::F32) != plan.type)
        return std::nullopt;

    // Every accumulator's place for every lane of warp 0 in workgroup 0.
    Id const x = *shape_.workitems[0], y = *shape_.workitems[1];
    LaneEnvironment env;
    for (auto const& d : shape_.workgroups)
        if (d)
            env.indices[*d] = 0;
    if (shape_.workitems[2])
        env.indices[*shape_.workitems[2]] = 0;
    auto place = [&](std::size_t e, std::int64_t row, std::int64_t pair) -> Place {
        env.indices[y] = row;
        env.indices[x] = pair;
        auto const& at = acc.elements[e];
        return {evaluateInt(*at.at(c.destRow), env), evaluateInt(*at.at(c.destCol), env)};
    };
    std::map<Place, std::size_t> at;
    try {
        for (std::size_t e = 0; e < acc.elements.size(); ++e) {
            Place const p = place(e, 0, 0);
            for (std::int64_t row = 0; row < 8; ++row)
                for (std::int64_t pair = 0; pair < 4; ++pair)
                    if (place(e, row, pair) != Place{p.first + row, p.second + 2 * pair})
                        return std::nullopt;
            if (!at.emplace(p, e).second)
                return std::nullopt;
        }
    } catch (UserError const&) {
        return std::nullopt;
    }

    // Fragments of four, slabs of 16 rows and 8 columns.
    auto const grouped = groupFragments(at, {Place{0, 0}, {0, 1}, {8, 0}, {8, 1}});
    if (!grouped)
        return std::nullopt;
    plan.fragments = grouped->fragments;

    // The slabs' first row and column as expressions of the warp, at lane (0, 0).
    std::map<Id, ExprPtr> const lane0{{x, literal(0)}, {y, literal(0)}};
    for (std::size_t e : grouped->rows)
        plan.rowBases.push_back(
            facts_.reduce(simplify(substitute(acc.elements[e].at(c.destRow), lane0))));
    for (std::size_t e : grouped->cols)
        plan.colBases.push_back(
            facts_.reduce(simplify(substitute(acc.elements[e].at(c.destCol), lane0))));

    // Which way each staged tile is contiguous.
    auto stride = [&](Id shared, Id along, Id kAxis, ExprPtr const& where, bool alongK) {
        auto const a = operandIndex(shared, along, where, kAxis, literal(0));
        auto const b =
            alongK ? operandIndex(shared, along, where, kAxis, literal(1))
                   : operandIndex(shared, along, simplify(where + literal(1)), kAxis, literal(0));
        return a && b ? IndexFacts::difference(*b, *a) : std::nullopt;
    };
    auto contiguousK = [&](Id shared, Id along, Id kAxis,
                           ExprPtr const& where) -> std::optional<bool> {
        if (stride(shared, along, kAxis, where, true) == 1)
            return true;
        if (stride(shared, along, kAxis, where, false) == 1)
            return false;
        return std::nullopt;
    };
    auto const lhsK = contiguousK(plan.lhsShared, c.rowAxis, c.lhsK, plan.rowBases.front());
    auto const rhsK = contiguousK(plan.rhsShared, c.colAxis, c.rhsK, plan.colBases.front());
    if (!lhsK || !rhsK)
        return std::nullopt;
    plan.lhsTransposed = !*lhsK;
    plan.rhsTransposed = !*rhsK;
    // B's slabs go two to an ldmatrix.x4 when they are 8 columns apart.
    plan.pairedColumns = plan.colBases.size() % 2 == 0;
    for (std::size_t j = 0; j + 1 < plan.colBases.size() && plan.pairedColumns; j += 2)
        plan.pairedColumns =
            IndexFacts::difference(plan.colBases[j + 1], plan.colBases[j]) == std::int64_t{8};
    return plan;
}

// The index of the staged tile `shared` at (`where` along `along`, `k` along `kAxis`), or
// nothing when the read might leave the tile.
std::optional<ExprPtr> PtxCodegen::operandIndex(Id shared, Id along, ExprPtr const& where, Id kAxis,
                                                ExprPtr const& k) {
    auto known = this->known();
    known[along] = where;
    known[kAxis] = k;
    auto const solution = solveIndices(graph_, known, {shared}, facts_);
    if (!solution.conditions.empty())
        return std::nullopt;
    return facts_.reduce(solution.at(shared));
}

void PtxCodegen::multiplyOnTensorCores(MmaPlan const& plan, Contraction const& c, Held& acc) {
    ExprPtr const X = index(*shape_.workitems[0]), Y = index(*shape_.workitems[1]);
    // Lane l = x + 4 y supplies the address of row l % 8 of matrix l / 8.
    ExprPtr const row8 = simplify(X + literal(4) * (Y % literal(2)));
    ExprPtr const matrixLow = simplify(Y / literal(2) % literal(2)), matrixHigh = Y / literal(4);
    std::string_view const type = plan.type == DataType::F16 ? "f16" : "bf16";
    SharedBases bases;
    auto address = [&](Id shared, Id along, ExprPtr const& where, Id kAxis, ExprPtr const& k) {
        auto const i = operandIndex(shared, along, simplify(where), kAxis, simplify(k));
        KILN_ASSERT(i, "an ldmatrix row lies outside the staged tile #{}", shared);
        ExprPtr const placed = facts_.reduce(shared_.place(shared, *i));
        if (facts_.powerOfTwoDivisor(placed) < 8)
            throw UserError(fmt::format("an ldmatrix row of Shared #{} may not be 16-byte "
                                        "aligned (at {})",
                                        shared, toString(placed)));
        return sharedAddress(shared, *i, bases);
    };
    auto ldmatrix = [&](int count, bool transposed, std::string const& from) {
        std::vector<std::string> regs;
        for (int i = 0; i < count; ++i)
            regs.push_back(writer_.newRegister(PtxType::B32));
        writer_.instruction(fmt::format("ldmatrix.sync.aligned.m8n8.x{}{}.shared.b16 {{{}}}, [{}]",
                                        count, transposed ? ".trans" : "", fmt::join(regs, ", "),
                                        from));
        return regs;
    };
    for (std::int64_t k0 = 0; k0 < c.inner; k0 += 16) {
        // A: matrices (rows 0-7, K 0-7), (rows 8-15, K 0-7), (rows 0-7, K 8-15), (8-15, 8-15).
        std::vector<std::vector<std::string>> a, b;
        for (ExprPtr const& r : plan.rowBases) {
            ExprPtr row = r + literal(8) * matrixLow + row8,
                    k = literal(k0) + literal(8) * matrixHigh;
            if (plan.lhsTransposed) {
                row = r + literal(8) * matrixLow;
                k = literal(k0) + literal(8) * matrixHigh + row8;
            }
            a.push_back(ldmatrix(4, plan.lhsTransposed,
                                 address(plan.lhsShared, c.rowAxis, row, c.lhsK, k)));
        }
        // B: matrices (K 0-7, columns 0-7), (K 8-15, columns 0-7), then the next 8 columns.
        std::size_t const step = plan.pairedColumns ? 2 : 1;
        for (std::size_t j = 0; j < plan.colBases.size(); j += step) {
            ExprPtr const slab = plan.pairedColumns ? literal(8) * matrixHigh : literal(0);
            ExprPtr col = plan.colBases[j] + slab + row8, k = literal(k0) + literal(8) * matrixLow;
            if (plan.rhsTransposed) {
                col = plan.colBases[j] + slab;
                k = literal(k0) + literal(8) * matrixLow + row8;
            }
            auto regs = ldmatrix(static_cast<int>(2 * step), plan.rhsTransposed,
                                 address(plan.rhsShared, c.colAxis, col, c.rhsK, k));
            b.push_back({regs[0], regs[1]});
            if (step == 2)
                b.push_back({regs[2], regs[3]});
        }
        for (auto const& f : plan.fragments) {
            std::vector<std::string> d;
            for (std::size_t r : f.registers)
                d.push_back(acc.registers[r]);
            writer_.instruction(fmt::format("mma.sync.aligned.m16n8k16.row.col.f32.{0}.{0}.f32 "
                                            "{{{1}}}, {{{2}}}, {{{3}}}, {{{1}}}",
                                            type, fmt::join(d, ", "), fmt::join(a[f.rowSlab], ", "),
                                            fmt::join(b[f.colSlab], ", ")));
        }
    }
}

} // namespace kiln::lowering::detail
