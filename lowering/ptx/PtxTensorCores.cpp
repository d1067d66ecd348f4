// A Multiply on the tensor cores: ldmatrix from the staged tiles, mma.sync.m16n8k16 into the
// accumulators.
//
// The accumulators must be laid out as mma.sync's fragments (rules/gemm-warp-tiles.rules.json
// does so; FragmentLayout.h checks it): every register at its lane-0 place plus (y, 2x), grouped
// into fragments of four at (R, C), (R, C + 1), (R + 8, C), (R + 8, C + 1). Anything else, or
// operands that are not 16-bit tiles staged in shared memory, or a target without mma.sync,
// runs the contraction with fma instead (the walker's SIMT Multiply), on the same layout.
//
// Operand fragments come from shared memory with ldmatrix, .trans where the staged tile is
// contiguous along M (A) or N (B) rather than K. Each lane supplies the address of one 8-element
// row of one of the four 8 x 8 matrices; those addresses are the operand's coordinate
// transforms solved at the lane's row and K index, as for any other read.
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

std::optional<MmaPlan> PtxCodegen::tensorCorePlan(Contraction const& c, Held const& acc) {
    if (!arch_.has(arch::Capability::HasMmaSync) || !arch_.has(arch::Capability::HasLdmatrix))
        return std::nullopt;
    if (acc.type != DataType::F32 || c.inner % 16 != 0)
        return std::nullopt;
    auto const staged = stagedOperands(c);
    if (!staged)
        return std::nullopt;
    // Lane (x, y) of a warp, x < 4 and y < 8, holds row y and columns 2x, 2x + 1 of each 8 x 8
    // quarter; a fragment's four registers are at (R, C), (R, C + 1), (R + 8, C), (R + 8, C + 1):
    // slabs of 16 rows and 8 columns.
    auto layout = fragmentLayout(c, acc.elements, shape_, facts_,
                                 {{4, 8}, {0, 2}, {1, 0}, {Place{0, 0}, {0, 1}, {8, 0}, {8, 1}}});
    if (!layout)
        return std::nullopt;
    MmaPlan plan{*staged, std::move(*layout)};

    // Which way each staged tile is contiguous.
    auto stride = [&](Id shared, Id along, Id kAxis, ExprPtr const& where, bool alongK) {
        auto const a = stagedIndex(shared, along, where, kAxis, literal(0));
        auto const b =
            alongK ? stagedIndex(shared, along, where, kAxis, literal(1))
                   : stagedIndex(shared, along, simplify(where + literal(1)), kAxis, literal(0));
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
    auto const lhsK = contiguousK(plan.lhsShared, c.rowAxis, c.lhsK, plan.layout.rowBases.front());
    auto const rhsK = contiguousK(plan.rhsShared, c.colAxis, c.rhsK, plan.layout.colBases.front());
    if (!lhsK || !rhsK)
        return std::nullopt;
    plan.lhsTransposed = !*lhsK;
    plan.rhsTransposed = !*rhsK;
    // B's slabs go two to an ldmatrix.x4 when they are 8 columns apart.
    plan.pairedColumns = plan.layout.colBases.size() % 2 == 0;
    for (std::size_t j = 0; j + 1 < plan.layout.colBases.size() && plan.pairedColumns; j += 2)
        plan.pairedColumns = IndexFacts::difference(plan.layout.colBases[j + 1],
                                                    plan.layout.colBases[j]) == std::int64_t{8};
    return plan;
}

void PtxCodegen::multiplyOnTensorCores(MmaPlan const& plan, Contraction const& c, Held& acc) {
    ExprPtr const X = index(*shape_.workitems[0]), Y = index(*shape_.workitems[1]);
    // Lane l = x + 4 y supplies the address of row l % 8 of matrix l / 8.
    ExprPtr const row8 = simplify(X + literal(4) * (Y % literal(2)));
    ExprPtr const matrixLow = simplify(Y / literal(2) % literal(2)), matrixHigh = Y / literal(4);
    std::string_view const type = plan.type == DataType::F16 ? "f16" : "bf16";
    SharedBases bases;
    auto address = [&](Id shared, Id along, ExprPtr const& where, Id kAxis, ExprPtr const& k) {
        auto const i = stagedIndex(shared, along, simplify(where), kAxis, simplify(k));
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
        for (ExprPtr const& r : plan.layout.rowBases) {
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
        for (std::size_t j = 0; j < plan.layout.colBases.size(); j += step) {
            ExprPtr const slab = plan.pairedColumns ? literal(8) * matrixHigh : literal(0);
            ExprPtr col = plan.layout.colBases[j] + slab + row8,
                    k = literal(k0) + literal(8) * matrixLow;
            if (plan.rhsTransposed) {
                col = plan.layout.colBases[j] + slab;
                k = literal(k0) + literal(8) * matrixLow + row8;
            }
            auto regs = ldmatrix(static_cast<int>(2 * step), plan.rhsTransposed,
                                 address(plan.rhsShared, c.colAxis, col, c.rhsK, k));
            b.push_back({regs[0], regs[1]});
            if (step == 2)
                b.push_back({regs[2], regs[3]});
        }
        for (auto const& f : plan.layout.fragments) {
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
