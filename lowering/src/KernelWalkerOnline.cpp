// The online softmax (OnlineSoftmax.h, docs/codegen.md "The online softmax"): with ONLINE=1, a
// row's max and its sum of exp(x - max) computed in one pass over the row, for both targets.
//
// Each workitem keeps a running max m and a running sum d of exp(x - m) over its chunks, in f32:
// per chunk, the new max n = max(m, the chunk's elements), then d = d exp(m - n) + the sum of
// exp(x - n) over the chunk, m = n (one exp per element, and one per chunk for the rescale). The
// row's workitems then meet in two exchanges of one value each, over the lanes (shfl.sync /
// ds_swizzle) and through shared memory as every cooperative Reduce does: first the row's max M,
// which is exact and the same in every workitem; then each workitem's sum rescaled to it,
// d exp(m - M), summed. The exchanges combine in f64, as the cooperative Reduces' do
// (both targets have its shuffles), of f32 values, exactly; M is then the max Reduce's value
// and the sum the sum Reduce's, which the walk does not compute again.
#include "KernelWalker.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace kiln::lowering::detail {

namespace {

// `value` where every one of `conditions` holds, else `otherwise`.
ExprPtr masked(ExprPtr const& value, std::vector<ExprPtr> const& conditions,
               ExprPtr const& otherwise) {
    if (conditions.empty())
        return value;
    ExprPtr all = conditions.front();
    for (std::size_t i = 1; i < conditions.size(); ++i)
        all = binary(BinaryOp::LogicalAnd, all, conditions[i]);
    return select(all, value, otherwise);
}

ExprPtr f32(double v) {
    return literal(Value::real(v, DataType::F32));
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The type the row's workitems exchange their f32 maxima and sums in: f64, exact for them, the
// type both targets' cooperative Reduces exchange floating-point values in.
constexpr DataType kExchanged = DataType::F64;

} // namespace

template <class Register>
ExprPtr KernelWalker<Register>::leaf(Register const& r, DataType type) {
    Id const id = -static_cast<Id>(leaves_.size()) - 1;
    leaves_.emplace(id, r);
    return dataValue(id, type);
}

template <class Register>
Register KernelWalker<Register>::materialize(ExprPtr const& e, DataType type,
                                             IndexSolution const& at) {
    Held<Register> value;
    value.type = type;
    value.elements = {at};
    allocate(0, value);
    assignElement(value, 0, e);
    return value.registers[0];
}

template <class Register>
void KernelWalker<Register>::reduceOnline(MaxExpSum const& p, Held<Register>& held,
                                          Reduction const& r, CooperativeRows const& rows) {
    if (rows.parts)
        throw UserError("the online softmax of rows split over workgroups is not written yet; "
                        "use SPLIT=1 or ONLINE=0");
    bool const computed = rowAssigns_.contains(r.source);
    if (!computed && graph_.control.node(r.view).kind != OperationKind::LoadTiled &&
        graph_.control.node(r.view).kind != OperationKind::LoadLinear)
        throw UserError("the online softmax reads its rows from a tensor in global memory or "
                        "computes them; a staged tile is not written yet");
    if (!holdable(p.sum))
        throw UserError(fmt::format("the row sums (value#{}) of the online softmax are not "
                                    "distributed as its row maxima (value#{})",
                                    p.sum, p.max));
    // Element c of the sums is the sum of row c of the maxima: the same index along each axis.
    Held<Register>& sums = hold(p.sum);
    auto const sumAxes = axes(p.sum);
    bool sameRows =
        sums.elements.size() == held.elements.size() && sumAxes.size() == r.destAxes.size();
    for (std::size_t c = 0; sameRows && c < held.elements.size(); ++c)
        for (std::size_t a = 0; sameRows && a < sumAxes.size(); ++a)
            sameRows = equal(simplify(sums.elements[c].at(sumAxes[a])),
                             simplify(held.elements[c].at(r.destAxes[a])));
    if (!sameRows)
        throw UserError(fmt::format("the row sums (value#{}) of the online softmax are held with "
                                    "another layout than its row maxima (value#{})",
                                    p.sum, p.max));
    RowPass const pass = beginRowPass(held, r, rows, computed);
    Id const memory = pass.memory;
    std::vector<std::int64_t> const& sizes = pass.sizes;
    std::int64_t const steps = pass.steps;
    ExprPtr const &chunks = pass.chunks, &lane = pass.lane;
    bool const single = pass.single;
    // The exps compute as the Command's Assign of them does (Precision.h); the running values
    // in f32, from -FLT_MAX (finite: exp(m - n) of two equal lowest values is 1, not NaN).
    Precision const expPrecision = assignPrecision(graph_, p.expOp);
    DataType const f = DataType::F32;
    ExprPtr const lowest = f32(-static_cast<double>(std::numeric_limits<float>::max()));
    for (std::size_t c = 0; c < held.elements.size(); ++c) {
        IndexSolution const& row = held.elements[c];
        Held<Register> runMax, runSum;
        for (Held<Register>* running : {&runMax, &runSum}) {
            running->type = f;
            running->elements = {row};
            allocate(0, *running);
        }
        assignElement(runMax, 0, lowest);
        assignElement(runSum, 0, f32(0));
        assignIndex(rows.chunk, literal(0));
        LoopLabels const labels = beginLoop(binary(BinaryOp::Less, index(rows.chunk), chunks));
        // The chunk's elements, as reduceCooperatively() reads them.
        Held<Register> part;
        part.type = r.element;
        for (std::int64_t s = 0; s < steps; ++s) {
            auto k = known();
            for (std::size_t a = 0; a < r.destAxes.size(); ++a)
                k[r.sourceAxes[a]] = row.at(r.destAxes[a]);
            std::int64_t rest = s;
            for (std::size_t u = rows.unrolled.size(); u-- > 0;) {
                k[rows.unrolled[u]] = literal(rest % sizes[u]);
                rest /= sizes[u];
            }
            IndexSolution element = solveIndices(graph_, k, {r.sourceAxes.back()}, facts_);
            for (std::size_t a = 0; a < r.destAxes.size(); ++a)
                element.indices[r.sourceAxes[a]] = k.at(r.sourceAxes[a]);
            for (auto const& extra : row.conditions)
                if (std::none_of(element.conditions.begin(), element.conditions.end(),
                                 [&](ExprPtr const& e) { return equal(e, extra); }))
                    element.conditions.push_back(extra);
            part.elements.push_back(std::move(element));
        }
        // An element past the row's end is left out of both the max and the sum.
        std::vector<std::vector<ExprPtr>> where(part.elements.size());
        if (computed) {
            for (std::size_t e = 0; e < part.elements.size(); ++e) {
                part.elements[e].indices[r.source] =
                    solveIndices(graph_, part.elements[e].indices, {r.source}, facts_).at(r.source);
                where[e] = part.elements[e].conditions;
            }
            computeRowPart(r.source, part);
        } else {
            if (single && graph_.control.node(r.view).kind == OperationKind::LoadTiled) {
                computeRowPart(r.source, part); // loaded, and held for the store's pass
            } else {
                allocate(r.source, part);
                move(r.source, part, memory, /*isLoad=*/true);
            }
            where = place(r.source, part, memory).conditions;
        }
        // Each element as f32, -inf where it is missing: its exp is then 0, as the chunk's new
        // max n >= m is finite. Then n = max(m, the chunk's elements), d = d exp(m - n) + the
        // sum of exp(x - n), m = n. Each element is computed on its own and the target's memo
        // dropped after it (settle()): sixteen elements' lane masks at once ran AMDGCN out of
        // SGPRs.
        std::vector<Register> values;
        for (std::size_t e = 0; e < part.registers.size(); ++e) {
            ExprPtr const value = convert(f, leaf(part.registers[e], part.type));
            values.push_back(materialize(masked(value, where[e], f32(-kInfinity)), f, row));
            settle();
        }
        ExprPtr chunkMax = leaf(runMax.registers[0], f);
        for (Register const& value : values)
            chunkMax = binary(BinaryOp::Max, chunkMax, leaf(value, f));
        Register const next = materialize(chunkMax, f, row);
        precision_ = expPrecision;
        ExprPtr const n = leaf(next, f);
        ExprPtr sum =
            leaf(runSum.registers[0], f) * unary(UnaryOp::Exp, leaf(runMax.registers[0], f) - n);
        for (Register const& value : values)
            sum = sum + unary(UnaryOp::Exp, leaf(value, f) - n);
        assignElement(runSum, 0, sum);
        precision_ = Precision::Exact;
        assignElement(runMax, 0, n);
        leaves_.clear();
        settle();
        assignIndex(rows.chunk, index(rows.chunk) + literal(1));
        endLoop(labels);
        indices_.erase(rows.chunk);

        // The row's max over its workitems, then each one's sum rescaled to it, summed.
        DataType const x = kExchanged;
        Register const maxAcc = combineIdentity(Combine::Max, x);
        combineInto(Combine::Max, maxAcc, x, runMax.registers[0], f, {});
        Register const rowMax = combineAcrossRow(Combine::Max, maxAcc, x, rows);
        precision_ = expPrecision;
        Register const rescaled = materialize(
            leaf(runSum.registers[0], f) *
                unary(UnaryOp::Exp, leaf(runMax.registers[0], f) - convert(f, leaf(rowMax, x))),
            f, row);
        precision_ = Precision::Exact;
        leaves_.clear();
        Register const sumAcc = combineIdentity(Combine::Sum, x);
        combineInto(Combine::Sum, sumAcc, x, rescaled, f, {});
        Register const rowSum = combineAcrossRow(Combine::Sum, sumAcc, x, rows);

        Reduction exchanged = r;
        exchanged.accumulator = x;
        exchanged.divisor = nullptr;
        setReduced(held, c, rowMax, exchanged);
        setReduced(sums, c, rowSum, exchanged);
        // Every workitem of the row holds both values; one stores them.
        for (Held<Register>* reduced : {&held, &sums})
            reduced->elements[c].conditions.push_back(binary(BinaryOp::Equal, lane, literal(0)));
    }
    shifted_.erase(rows.chunk);
    holdingRows_ = false;
    onlineSums_.insert(p.sumOp);
}

// The targets' register types, as KernelWalker.cpp instantiates the rest.
#define KILN_ONLINE_INSTANTIATE(Register)                                                          \
    template ExprPtr KernelWalker<Register>::leaf(Register const&, DataType);                      \
    template Register KernelWalker<Register>::materialize(ExprPtr const&, DataType,                \
                                                          IndexSolution const&);                   \
    template void KernelWalker<Register>::reduceOnline(MaxExpSum const&, Held<Register>&,          \
                                                       Reduction const&, CooperativeRows const&);
KILN_ONLINE_INSTANTIATE(std::string)
KILN_ONLINE_INSTANTIATE(amdgcn::Value)
#undef KILN_ONLINE_INSTANTIATE

} // namespace kiln::lowering::detail
