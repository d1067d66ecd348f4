// A row's statistics in one pass (ONLINE=1), for both targets: the online softmax
// (OnlineSoftmax.h, docs/codegen.md "The online softmax"), a row's max and its sum of
// exp(x - max), and Welford's mean and variance (MeanVariance.h, "Welford's mean and variance").
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
//
// Welford's pass: each workitem keeps a count n, a mean m and a sum of squared deviations M2 over
// its chunks, in f32: per chunk, its own count, mean and M2 (the chunk is held, so its M2 is
// taken about its own mean), merged into the running ones by Chan et al.'s formula. The row's
// workitems then meet in two exchanges of sums, as the online softmax's: the row's sum of n m,
// which divided by the row's length is the mean M, the same in every workitem; then each
// workitem's M2 + n (m - M)^2 (Chan's formula for many parts, every term >= 0), summed, which
// divided by the row's length is the variance about M, the value the three passes compute.
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

bool isConstant(ExprPtr const& e) {
    return std::holds_alternative<expr::Literal>(*e);
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
bool KernelWalker<Register>::mergedInOneExchange() const {
    auto const online = options_.schedule.find("ONLINE");
    return online != options_.schedule.end() && online->second == 2;
}

template <class Register>
bool KernelWalker<Register>::onlineRowsComputed(Reduction const& r, CooperativeRows const& rows,
                                                std::string_view pass) const {
    if (rows.parts)
        throw UserError(fmt::format("{} of rows split over workgroups is not written yet; use "
                                    "SPLIT=1 or ONLINE=0",
                                    pass));
    bool const computed = rowAssigns_.contains(r.source);
    if (!computed && graph_.control.node(r.view).kind != OperationKind::LoadTiled &&
        graph_.control.node(r.view).kind != OperationKind::LoadLinear)
        throw UserError(fmt::format("{} reads its rows from a tensor in global memory or "
                                    "computes them; a staged tile is not written yet",
                                    pass));
    return computed;
}

template <class Register>
Held<Register>& KernelWalker<Register>::heldWithRows(Id second, Id first,
                                                     Held<Register> const& held, Reduction const& r,
                                                     std::string_view what, std::string_view pass,
                                                     std::string_view firstWhat) {
    if (!holdable(second))
        throw UserError(fmt::format("the {} (value#{}) of {} are not distributed as its {} "
                                    "(value#{})",
                                    what, second, pass, firstWhat, first));
    // Element c of `second` is of row c of `first`: the same index along each axis.
    Held<Register>& values = hold(second);
    auto const secondAxes = axes(second);
    bool sameRows =
        values.elements.size() == held.elements.size() && secondAxes.size() == r.destAxes.size();
    for (std::size_t c = 0; sameRows && c < held.elements.size(); ++c)
        for (std::size_t a = 0; sameRows && a < secondAxes.size(); ++a)
            sameRows = equal(simplify(values.elements[c].at(secondAxes[a])),
                             simplify(held.elements[c].at(r.destAxes[a])));
    if (!sameRows)
        throw UserError(fmt::format("the {} (value#{}) of {} are held with another layout than "
                                    "its {} (value#{})",
                                    what, second, pass, firstWhat, first));
    return values;
}

template <class Register>
RowChunk<Register> KernelWalker<Register>::chunkOf(IndexSolution const& row, Reduction const& r,
                                                   CooperativeRows const& rows, RowPass const& pass,
                                                   bool computed) {
    // The chunk's elements, as reduceCooperatively() reads them; the passes leave those past
    // the row's end out, loaded or computed.
    RowChunk<Register> chunk;
    chunk.part.type = r.element;
    for (std::int64_t s = 0; s < pass.steps; ++s)
        chunk.part.elements.push_back(chunkElement(row, r, rows, pass, s));
    readRowPart(r, pass, computed, /*loadedOut=*/true, chunk.part, chunk.where);
    return chunk;
}

template <class Register>
void KernelWalker<Register>::reduceOnline(MaxExpSum const& p, Held<Register>& held,
                                          Reduction const& r, CooperativeRows const& rows) {
    bool const computed = onlineRowsComputed(r, rows, "the online softmax");
    Held<Register>& sums =
        heldWithRows(p.sum, p.max, held, r, "row sums", "the online softmax", "row maxima");
    RowPass const pass = beginRowPass(held, r, rows, computed);
    ExprPtr const &chunks = pass.chunks, &lane = pass.lane;
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
        forEachChunk(rows, chunks, [&](std::optional<std::int64_t>) {
            auto [part, where] = chunkOf(row, r, rows, pass, computed);
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
            ExprPtr sum = leaf(runSum.registers[0], f) *
                          unary(UnaryOp::Exp, leaf(runMax.registers[0], f) - n);
            for (Register const& value : values)
                sum = sum + unary(UnaryOp::Exp, leaf(value, f) - n);
            assignElement(runSum, 0, sum);
            precision_ = Precision::Exact;
            assignElement(runMax, 0, n);
            leaves_.clear();
            settle();
        });

        if (mergedInOneExchange()) {
            // Two workitems' (max m, sum d) merge into M = max(m, m'), d e^(m - M) + d' e^(m' - M).
            precision_ = expPrecision;
            mergeAcrossRow({&runMax, &runSum}, f, rows,
                           [&](std::vector<ExprPtr> const& a, std::vector<ExprPtr> const& b,
                               std::int64_t) -> std::vector<ExprPtr> {
                               ExprPtr const m =
                                   leaf(materialize(binary(BinaryOp::Max, a[0], b[0]), f, row), f);
                               return {m, a[1] * unary(UnaryOp::Exp, a[0] - m) +
                                              b[1] * unary(UnaryOp::Exp, b[0] - m)};
                           });
            precision_ = Precision::Exact;
            Reduction exchanged = r;
            exchanged.accumulator = f;
            exchanged.divisor = nullptr;
            reduced(held, c, runMax.registers[0], exchanged);
            reduced(sums, c, runSum.registers[0], exchanged);
        } else {
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
            reduced(held, c, rowMax, exchanged);
            reduced(sums, c, rowSum, exchanged);
        }
        // Every workitem of the row holds both values; one stores them.
        for (Held<Register>* value : {&held, &sums})
            value->elements[c].conditions.push_back(binary(BinaryOp::Equal, lane, literal(0)));
    }
    holdingRows_ = false;
    pairedReduces_.insert(p.sumOp);
}

template <class Register>
void KernelWalker<Register>::reduceWelford(MeanVariance const& p, Held<Register>& held,
                                           Reduction const& r, CooperativeRows const& rows) {
    std::string_view const name = "the one-pass mean and variance";
    bool const computed = onlineRowsComputed(r, rows, name);
    Held<Register>& variances =
        heldWithRows(p.variance, p.mean, held, r, "row variances", name, "row means");
    RowPass const pass = beginRowPass(held, r, rows, computed);
    ExprPtr const &chunks = pass.chunks, &lane = pass.lane;
    DataType const f = DataType::F32;
    ExprPtr const zero = f32(0), one = f32(1);
    for (std::size_t c = 0; c < held.elements.size(); ++c) {
        IndexSolution const& row = held.elements[c];
        // The workitem's count, mean and sum of squared deviations, from 0.
        Held<Register> runCount, runMean, runM2;
        for (Held<Register>* running : {&runCount, &runMean, &runM2}) {
            running->type = f;
            running->elements = {row};
            allocate(0, *running);
            assignElement(*running, 0, zero);
        }
        ExprPtr count = zero; // the count so far, where it is a constant
        forEachChunk(rows, chunks, [&](std::optional<std::int64_t> writtenOut) {
            auto [part, where] = chunkOf(row, r, rows, pass, computed);
            // Each element as f32, 0 where it is missing, and the chunk's count b of those there,
            // each element's part computed on its own with the target's memo dropped after it
            // (settle()), as in reduceOnline(): all of a chunk's masks at once ran AMDGCN out of
            // SGPRs, and keeping each element's 1 or 0 in a register spilled at 1024 lanes.
            std::vector<Register> values;
            ExprPtr sum = zero;
            ExprPtr b = zero;
            for (std::size_t e = 0; e < part.registers.size(); ++e) {
                ExprPtr const value = convert(f, leaf(part.registers[e], part.type));
                values.push_back(materialize(masked(value, where[e], zero), f, row));
                sum = sum + leaf(values.back(), f);
                if (!where[e].empty())
                    b = leaf(materialize(b + masked(one, where[e], zero), f, row), f);
                else
                    b = simplify(b + one);
                settle();
            }
            // b is a constant where no element can be missing (a whole chunk of a row of known
            // length); so is the count n so far while the chunks are written out, and with them
            // the chunk's weight b / n': no division but the chunk's mean's, a product where b is
            // a power of two (the four f32 divisions a row of the layer norm of 8192 x 8192
            // cost 1 us of 90 on the H100).
            if (!isConstant(b))
                b = leaf(materialize(b, f, row), f);
            // The chunk's mean mb (0 for a chunk without elements, past the row's end, which adds
            // nothing) and its M2 about mb, the missing elements left out.
            ExprPtr const mb =
                leaf(materialize(simplify(sum / binary(BinaryOp::Max, b, one)), f, row), f);
            ExprPtr squares = zero;
            for (std::size_t e = 0; e < values.size(); ++e) {
                ExprPtr const deviation = leaf(values[e], f) - mb;
                ExprPtr const square = deviation * deviation;
                if (where[e].empty()) {
                    squares = squares + square;
                    continue;
                }
                squares = leaf(materialize(squares + masked(square, where[e], zero), f, row), f);
                settle();
            }
            // Chan et al.: n' = n + b, delta = mb - m, m' = m + delta b / n',
            // M2' = M2 + M2b + delta^2 n b / n' (n' = 0: nothing changes).
            ExprPtr const n = writtenOut && count ? count : leaf(runCount.registers[0], f),
                          m = leaf(runMean.registers[0], f), m2 = leaf(runM2.registers[0], f);
            ExprPtr total = simplify(n + b);
            if (!isConstant(total))
                total = leaf(materialize(total, f, row), f);
            ExprPtr weight = simplify(b / binary(BinaryOp::Max, total, one));
            if (!isConstant(weight))
                weight = leaf(materialize(weight, f, row), f);
            ExprPtr const delta = leaf(materialize(mb - m, f, row), f);
            assignElement(runM2, 0, m2 + squares + delta * delta * n * weight);
            assignElement(runMean, 0, m + delta * weight);
            assignElement(runCount, 0, total);
            count = isConstant(total) ? total : nullptr;
            leaves_.clear();
            settle();
        });

        if (mergedInOneExchange()) {
            // Two workitems' (m, M2) of n and n' elements merge by Chan et al.'s formula, written
            // symmetrically: m = (n m + n' m') / (n + n'), M2 = (M2 + M2') + (m' - m)^2 n n' /
            // (n + n'). Where every workitem's count is the same constant (a row of known length
            // in whole chunks) n = n' is that count times the workitems each side has merged, and
            // only m and M2 are exchanged (n a power of two: (n m + n m') / 2n = (m + m') / 2,
            // bit for bit); otherwise the counts are exchanged too.
            ExprPtr const each = count && isConstant(count) ? count : nullptr;
            std::vector<Held<Register>*> statistics{&runMean, &runM2};
            if (!each)
                statistics.push_back(&runCount);
            mergeAcrossRow(
                statistics, f, rows,
                [&](std::vector<ExprPtr> const& a, std::vector<ExprPtr> const& b,
                    std::int64_t parts) -> std::vector<ExprPtr> {
                    ExprPtr const delta = b[0] - a[0];
                    if (each) { // n = n': m = (m + m') / 2, n n' / (n + n') = n / 2
                        ExprPtr const half = each * f32(double(parts) / 2);
                        return {(a[0] + b[0]) * f32(0.5), (a[1] + b[1]) + delta * delta * half};
                    }
                    ExprPtr const total = a[2] + b[2];
                    ExprPtr const over = binary(BinaryOp::Max, total, one);
                    return {(a[2] * a[0] + b[2] * b[0]) / over,
                            (a[1] + b[1]) + delta * delta * (a[2] * b[2] / over), total};
                });
            Reduction exchanged = r;
            exchanged.accumulator = f;
            Reduction mean = exchanged;
            mean.divisor = nullptr;
            reduced(held, c, runMean.registers[0], mean);
            reduced(variances, c, runM2.registers[0], exchanged);
        } else {
            // The row's sum of n m over its workitems, which reduced() divides by the row's
            // length (the mean Reduce's divisor): the mean M in every workitem.
            DataType const x = kExchanged;
            Reduction exchanged = r;
            exchanged.accumulator = x;
            ExprPtr const count0 = leaf(runCount.registers[0], f),
                          mean0 = leaf(runMean.registers[0], f);
            Register const sumAcc = combineIdentity(Combine::Sum, x);
            combineInto(Combine::Sum, sumAcc, x, materialize(count0 * mean0, f, row), f, {});
            reduced(held, c, combineAcrossRow(Combine::Sum, sumAcc, x, rows), exchanged);
            // Then each workitem's M2 + n (m - M)^2, summed and divided by the row's length: the
            // variance about M, as the three passes compute it from the same M.
            ExprPtr const spread = mean0 - convert(f, leaf(held.registers[c], held.type));
            Register const term =
                materialize(leaf(runM2.registers[0], f) + count0 * spread * spread, f, row);
            leaves_.clear();
            Register const m2Acc = combineIdentity(Combine::Sum, x);
            combineInto(Combine::Sum, m2Acc, x, term, f, {});
            reduced(variances, c, combineAcrossRow(Combine::Sum, m2Acc, x, rows), exchanged);
        }
        // Every workitem of the row holds both values; one stores them.
        for (Held<Register>* value : {&held, &variances})
            value->elements[c].conditions.push_back(binary(BinaryOp::Equal, lane, literal(0)));
    }
    holdingRows_ = false;
    pairedReduces_.insert(p.varianceOp);
}

// The targets' register types, as KernelWalker.cpp instantiates the rest.
#define KILN_ONLINE_INSTANTIATE(Register)                                                          \
    template ExprPtr KernelWalker<Register>::leaf(Register const&, DataType);                      \
    template Register KernelWalker<Register>::materialize(ExprPtr const&, DataType,                \
                                                          IndexSolution const&);                   \
    template void KernelWalker<Register>::reduceOnline(MaxExpSum const&, Held<Register>&,          \
                                                       Reduction const&, CooperativeRows const&);  \
    template void KernelWalker<Register>::reduceWelford(MeanVariance const&, Held<Register>&,      \
                                                        Reduction const&, CooperativeRows const&); \
    template bool KernelWalker<Register>::mergedInOneExchange() const;
KILN_ONLINE_INSTANTIATE(std::string)
KILN_ONLINE_INSTANTIATE(amdgcn::Value)
#undef KILN_ONLINE_INSTANTIATE

} // namespace kiln::lowering::detail
