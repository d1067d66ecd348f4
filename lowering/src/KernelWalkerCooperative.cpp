// Reduces whose workitems share rows, for both targets (KernelWalker.h, docs/codegen.md
// "Cooperative reductions"): which rows the workitems share (cooperativeRows()), each workitem's
// pass over its chunks of a row (beginRowPass(), chunkElement(), readRowPart(),
// reduceCooperatively()), and the exchange across a row's workitems (combineAcrossRow()).
#include "KernelWalker.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Distribution.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering::detail {

// Each workitem combines its part of the row: a loop over its chunks, each chunk's elements
// (the unrolled local indices: consecutive in a row-major tensor) moved as one held value, so
// that they load in vector accesses; an element outside the row is left out of the combine.
// Then the row's workitems combine their partial values, first over the lanes of a group of 32
// (a butterfly: every lane ends with the group's value, the same bits in each, since each step
// combines the same two values in either order), then through shared memory, where every
// workitem reads its row's groups' values in one order. The workitem with lane 0 stores.
template <class Register>
IndexSolution KernelWalker<Register>::chunkElement(IndexSolution const& row, Reduction const& r,
                                                   CooperativeRows const& rows, RowPass const& pass,
                                                   std::int64_t step) {
    auto k = known();
    for (std::size_t a = 0; a < r.destAxes.size(); ++a)
        k[r.sourceAxes[a]] = row.at(r.destAxes[a]);
    std::int64_t rest = step;
    for (std::size_t u = rows.unrolled.size(); u-- > 0;) {
        k[rows.unrolled[u]] = literal(rest % pass.sizes[u]);
        rest /= pass.sizes[u];
    }
    IndexSolution element = solveIndices(graph_, k, {r.sourceAxes.back()}, facts_);
    for (std::size_t a = 0; a < r.destAxes.size(); ++a)
        element.indices[r.sourceAxes[a]] = k.at(r.sourceAxes[a]);
    for (auto const& extra : row.conditions)
        if (std::none_of(element.conditions.begin(), element.conditions.end(),
                         [&](ExprPtr const& e) { return equal(e, extra); }))
            element.conditions.push_back(extra);
    return element;
}

template <class Register>
void KernelWalker<Register>::forEachChunk(
    CooperativeRows const& rows, ExprPtr const& chunks,
    std::function<void(std::optional<std::int64_t>)> const& body) {
    if (auto const count = atKnownSizes(chunks); count && count->asInt() <= kMaxWrittenOutChunks) {
        for (std::int64_t c = 0; c < count->asInt(); ++c) {
            shifted_[rows.chunk] = literal(c);
            body(c);
        }
        shifted_.erase(rows.chunk);
        return;
    }
    LoopLabels const labels = beginChunks(rows, chunks);
    body(std::nullopt);
    endChunks(labels, rows);
}

template <class Register>
LoopLabels KernelWalker<Register>::beginChunks(CooperativeRows const& rows, ExprPtr const& chunks) {
    assignIndex(rows.chunk, literal(0));
    return beginLoop(binary(BinaryOp::Less, index(rows.chunk), chunks));
}

template <class Register>
void KernelWalker<Register>::endChunks(LoopLabels const& labels, CooperativeRows const& rows) {
    assignIndex(rows.chunk, index(rows.chunk) + literal(1));
    endLoop(labels);
    indices_.erase(rows.chunk);
}

template <class Register>
bool KernelWalker<Register>::rowsReadAgain() const {
    for (Id op : graph_.control.nodes()) {
        auto const kind = graph_.control.node(op).kind;
        if ((kind == OperationKind::StoreTiled || kind == OperationKind::StoreLinear) &&
            rowChunked(graph_.mapping.get(op, role::source)))
            return true;
    }
    return false;
}

template <class Register>
void KernelWalker<Register>::readRowPart(Reduction const& r, RowPass const& pass, bool computed,
                                         bool loadedOut, Held<Register>& part,
                                         std::vector<std::vector<ExprPtr>>& where) {
    reuse_ = !pass.held && rowsReadAgain() ? Reuse::Again : Reuse::None;
    struct Reset {
        Reuse& reuse;
        ~Reset() { reuse = Reuse::None; }
    } const reset{reuse_};
    where.resize(part.elements.size());
    if (computed) {
        for (std::size_t e = 0; e < part.elements.size(); ++e) {
            part.elements[e].indices[r.source] =
                solveIndices(graph_, part.elements[e].indices, {r.source}, facts_).at(r.source);
            where[e] = part.elements[e].conditions;
        }
        computeRowPart(r.source, part);
        return;
    }
    if (pass.held && graph_.control.node(r.view).kind == OperationKind::LoadTiled) {
        computeRowPart(r.source, part); // loaded, or held from an earlier pass
    } else {
        if (pass.held)
            prefetchLaterRows(r.source, part, pass.memory);
        allocate(r.source, part);
        move(r.source, part, pass.memory, /*isLoad=*/true);
    }
    if (loadedOut)
        where = place(r.source, part, pass.memory).conditions;
}

template <class Register>
RowPass KernelWalker<Register>::beginRowPass(Held<Register> const& held, Reduction const& r,
                                             CooperativeRows const& rows, bool computed) {
    RowPass pass;
    pass.memory = computed ? 0 : graph_.mapping.get(r.view, role::source);
    for (Id u : rows.unrolled) {
        pass.sizes.push_back(constantSize(graph_, u, "the elements a workitem reads in each step"));
        pass.steps *= pass.sizes.back();
    }
    pass.chunks = graph_.coordinates.node(rows.chunk).size;
    if (!pass.chunks)
        throw UserError(
            fmt::format("the chunks of a Reduce's rows (#{}) have no size", rows.chunk));
    pass.lane = known().at(rows.lanes);
    for (auto const& element : held.elements)
        for (Id a : r.destAxes)
            if (!equal(substitute(element.at(a), {{rows.lanes, literal(1)}}), element.at(a)))
                throw UserError(fmt::format("the Reduce's result differs between the workitems "
                                            "(#{}) that share its rows",
                                            rows.lanes));
    // Chunks written out for this problem: their loads are held for the next passes.
    pass.held = heldRows(pass.chunks);
    holdingRows_ = pass.held;
    return pass;
}

template <class Register>
void KernelWalker<Register>::reduceCooperatively(Operation const& o, Held<Register>& held,
                                                 Reduction const& r, CooperativeRows const& rows) {
    // A source computed from rows (KernelWalkerRows.cpp) is computed chunk by chunk.
    bool const computed = rowAssigns_.contains(r.source);
    if (!computed && graph_.control.node(r.view).kind != OperationKind::LoadTiled &&
        graph_.control.node(r.view).kind != OperationKind::LoadLinear)
        throw UserError("a Reduce whose workitems share rows reads a tensor in global memory; "
                        "a staged tile is not written yet");
    RowPass const pass = beginRowPass(held, r, rows, computed);
    std::int64_t const steps = pass.steps;
    ExprPtr const &chunks = pass.chunks, &lane = pass.lane;
    // Every row the workitem holds is combined in one loop over the chunks, a chunk's elements
    // one held value: the rows' elements at one step side by side where the rows are
    // consecutive in memory (column-major: ROW_VEC rows read with one vector load per column),
    // each row's steps side by side where its elements are (row-major).
    std::size_t const rowCount = held.elements.size();
    ExprPtr const& along = graph_.coordinates.node(r.sourceAxes.back()).stride;
    bool const rowsInner = rowCount > 1 && !(along && literalInt(simplify(along)) == 1);
    std::vector<Register> accs;
    for (std::size_t c = 0; c < rowCount; ++c)
        accs.push_back(combineIdentity(o.combine, r.accumulator));
    forEachChunk(rows, chunks, [&](std::optional<std::int64_t>) {
        Held<Register> part;
        part.type = r.element;
        std::vector<std::size_t> rowOf; // the held row of each of the part's elements
        for (std::size_t n = 0; n < rowCount * static_cast<std::size_t>(steps); ++n) {
            std::size_t const c = rowsInner ? n % rowCount : n / static_cast<std::size_t>(steps);
            std::int64_t const s = static_cast<std::int64_t>(
                rowsInner ? n / rowCount : n % static_cast<std::size_t>(steps));
            part.elements.push_back(chunkElement(held.elements[c], r, rows, pass, s));
            rowOf.push_back(c);
        }
        std::vector<std::vector<ExprPtr>> where(part.elements.size());
        readRowPart(r, pass, computed, /*loadedOut=*/o.combine != Combine::Sum, part, where);
        for (std::size_t e = 0; e < part.registers.size(); ++e)
            combineInto(o.combine, accs[rowOf[e]], r.accumulator, part.registers[e], part.type,
                        where[e]);
    });

    std::vector<Register> totals; // each row's value, in every workitem of the row
    for (std::size_t c = 0; c < rowCount; ++c)
        totals.push_back(combineAcrossRow(o.combine, accs[c], r.accumulator, rows));
    holdingRows_ = false;
    if (rows.parts)
        totals = combineParts(o.combine, r, rows, held, totals);
    for (std::size_t c = 0; c < held.elements.size(); ++c) {
        reduced(held, c, totals[c], r);
        // Every workitem of the row holds its value; one stores it.
        held.elements[c].conditions.push_back(binary(BinaryOp::Equal, lane, literal(0)));
    }
}

// Over the lanes of a group of 32 (a butterfly: every lane ends with the group's value, the same
// bits in each, since each step combines the same two values in either order), then through
// shared memory. Where a row's lanes are consecutive (whole groups of 32 a row), lane l of each
// group reads group l % G's value (G groups a row) and a second butterfly over G lanes combines
// them: one shared read and log2(G) exchanges a workitem. Reading all G values in every workitem
// instead cost G reads and G dependent combines a workitem, G^2 group-wide reads a row (1024 at
// 1024 lanes a row), and, with the reads issued together, 2 x G registers, on the path of a
// held-row layer norm over 1024 lanes, one workgroup a multiprocessor, from its one load to its
// store. Rows whose lanes lie further apart read every group's value in one order.
namespace {

// Lanes exchange values in groups of kLaneGroup, which a workgroup must be made of.
void requireWholeGroups(CooperativeRows const& rows, LaunchShape const& shape) {
    if (rows.exchanging() > 1 && shape.workgroupSize() % kLaneGroup != 0)
        throw UserError(fmt::format("the workitems of a row exchange values in groups of {} "
                                    "lanes, but the workgroup has {} workitems",
                                    kLaneGroup, shape.workgroupSize()));
}

} // namespace

template <class Register>
void KernelWalker<Register>::combineAcrossLanes(Combine combine, Register const& acc, DataType type,
                                                std::int64_t distance) {
    combineInto(combine, acc, type, laneValue(acc, type, distance), type, {});
}

template <class Register>
Register KernelWalker<Register>::combineAcrossRow(Combine combine, Register const& acc,
                                                  DataType type, CooperativeRows const& rows) {
    requireWholeGroups(rows, shape_);
    std::int64_t const group = rows.exchanging();
    for (std::int64_t d = group / 2; d >= 1; d /= 2)
        combineAcrossLanes(combine, acc, type, d * rows.stride);
    if (!rows.throughShared())
        return acc;
    ExprPtr const lane = known().at(rows.lanes);
    ExprPtr const me = simplify(substitute(linearWorkitem(shape_), known()));
    writeScratch(acc, type, me);
    barrier();
    Register const total = combineIdentity(combine, type);
    ExprPtr const first = me - lane * literal(rows.stride);
    std::int64_t const groups = rows.count / group;
    if (rows.stride == 1 && group == kLaneGroup && groups <= kLaneGroup) {
        // l % G as l & (G - 1): G is a power of two and l >= 0, which a modulo's signed
        // arithmetic does not know (AMDGCN wrote it as a 64-bit signed remainder).
        ExprPtr const slot =
            first + binary(BinaryOp::BitwiseAnd, lane, literal(groups - 1)) * literal(group);
        combineInto(combine, total, type, readScratch(type, simplify(slot)), type, {});
        for (std::int64_t d = groups / 2; d >= 1; d /= 2)
            combineAcrossLanes(combine, total, type, d);
    } else {
        for (std::int64_t g = 0; g < groups; ++g)
            combineInto(combine, total, type,
                        readScratch(type, simplify(first + literal(g * group * rows.stride))), type,
                        {});
    }
    barrier(); // the scratch is free again for the next exchange
    return total;
}

template <class Register>
void KernelWalker<Register>::mergeAcrossRow(std::vector<Held<Register>*> const& values,
                                            DataType type, CooperativeRows const& rows,
                                            Merge const& merge) {
    requireWholeGroups(rows, shape_);
    IndexSolution const at = values.front()->elements.front();
    auto current = [&](std::size_t i) { return leaf(values[i]->registers[0], type); };
    // Both sides' values merged into new registers first, then moved into `values`: each merged
    // value reads the old ones.
    auto mergeWith = [&](std::vector<Register> const& other, std::int64_t parts) {
        std::vector<ExprPtr> mine, theirs;
        for (std::size_t i = 0; i < values.size(); ++i) {
            mine.push_back(current(i));
            theirs.push_back(leaf(other[i], type));
        }
        std::vector<Register> merged;
        for (ExprPtr const& e : merge(mine, theirs, parts))
            merged.push_back(materialize(simplify(e), type, at));
        for (std::size_t i = 0; i < values.size(); ++i)
            assignElement(*values[i], 0, leaf(merged[i], type));
        leaves_.clear();
        settle();
    };
    auto overLanes = [&](std::int64_t lanes, std::int64_t stride, std::int64_t& parts) {
        for (std::int64_t d = lanes / 2; d >= 1; d /= 2, parts *= 2) {
            std::vector<Register> other;
            for (auto* value : values)
                other.push_back(laneValue(value->registers[0], type, d * stride));
            mergeWith(other, parts);
        }
    };
    std::int64_t const group = rows.exchanging();
    std::int64_t parts = 1;
    overLanes(group, rows.stride, parts);
    if (!rows.throughShared())
        return;
    std::int64_t const groups = rows.count / group;
    auto const count = static_cast<std::int64_t>(values.size());
    if (rows.stride != 1 || group != kLaneGroup || groups > kLaneGroup || count > group)
        throw UserError(fmt::format("ONLINE=2 merges a row's statistics in one exchange where a "
                                    "row's workitems are whole groups of {} consecutive lanes, "
                                    "at most {} groups; use ONLINE=1",
                                    kLaneGroup, kLaneGroup));
    ExprPtr const lane = known().at(rows.lanes);
    ExprPtr const me = simplify(substitute(linearWorkitem(shape_), known()));
    ExprPtr const inGroup = binary(BinaryOp::BitwiseAnd, lane, literal(group - 1));
    ExprPtr written = current(0);
    for (std::size_t i = 1; i < values.size(); ++i)
        written = select(binary(BinaryOp::Equal, inGroup, literal(static_cast<std::int64_t>(i))),
                         current(i), written);
    Register const slot = materialize(written, type, at);
    leaves_.clear();
    writeScratch(slot, type, me);
    barrier();
    // Lane l reads group l % G's values (l & (G - 1), as combineAcrossRow() does).
    ExprPtr const first =
        me - lane + binary(BinaryOp::BitwiseAnd, lane, literal(groups - 1)) * literal(group);
    std::vector<Register> read;
    for (std::size_t i = 0; i < values.size(); ++i)
        read.push_back(readScratch(type, simplify(first + literal(static_cast<std::int64_t>(i)))));
    for (std::size_t i = 0; i < values.size(); ++i)
        assignElement(*values[i], 0, leaf(read[i], type));
    leaves_.clear();
    overLanes(groups, 1, parts);
    barrier(); // the scratch is free again for the next exchange
}

std::int64_t CooperativeRows::exchanging() const {
    if (stride >= kLaneGroup || (stride & (stride - 1)) != 0)
        return 1;
    return std::min(count, kLaneGroup / stride);
}

std::optional<CooperativeRows> cooperativeRows(KernelGraph const& graph, LaunchShape const& shape,
                                               Id rowAxis) {
    auto const& coords = graph.coordinates;
    auto hardwareOf = [&](Id h) -> std::optional<Id> {
        for (Id e : coords.outgoing(h))
            if (coords.edge(e).kind == CoordinateEdgeKind::PassThrough &&
                isHardware(coords.node(coords.heads(e)[0]).kind))
                return coords.heads(e)[0];
        return std::nullopt;
    };
    for (Id e : coords.outgoing(rowAxis)) {
        if (coords.edge(e).kind != CoordinateEdgeKind::Tile)
            continue;
        CooperativeRows rows;
        std::vector<Id> locals;
        for (Id h : coords.heads(e)) {
            auto const hardware = hardwareOf(h);
            if (!hardware) {
                locals.push_back(h);
                continue;
            }
            if (coords.node(*hardware).kind == DimensionKind::Workgroup) {
                // Split over workgroups: each reads a contiguous span (the outermost index).
                if (h != coords.heads(e).front() || rows.parts)
                    throw UserError("a Reduce's rows split over workgroups other than by their "
                                    "outermost index are not written yet");
                rows.parts = *hardware;
                rows.partCount = constantSize(graph, rows.parts, "the workgroups that share a row");
                continue;
            }
            if (rows.lanes)
                throw UserError("a Reduce's rows tiled onto two Workitem dimensions are not "
                                "written yet");
            rows.lanes = *hardware;
        }
        if (!rows.lanes)
            continue;
        if (locals.empty())
            throw UserError(fmt::format("the rows of a Reduce are tiled onto workitems (#{}) "
                                        "without a local index to loop over",
                                        rows.lanes));
        rows.chunk = locals.front();
        rows.unrolled.assign(locals.begin() + 1, locals.end());
        rows.count = constantSize(graph, rows.lanes, "the workitems that share a row");
        if (rows.count < 1 || (rows.count & (rows.count - 1)) != 0)
            throw UserError(
                fmt::format("{} workitems share a row; a power of two is written", rows.count));
        for (std::size_t a = 0; a < 3 && shape.workitems[a] != rows.lanes; ++a)
            rows.stride *= shape.block[a];
        return rows;
    }
    return std::nullopt;
}

std::size_t reductionScratchBytes(KernelGraph const& graph, LaunchShape const& shape) {
    for (Id op : graph.control.nodes()) {
        if (graph.control.node(op).kind != OperationKind::Reduce)
            continue;
        auto const axes = flattenAxes(graph, graph.mapping.get(op, role::source));
        if (axes.empty())
            continue;
        if (auto const rows = cooperativeRows(graph, shape, axes.back()); rows) {
            if (rows->throughShared())
                return static_cast<std::size_t>(shape.workgroupSize()) * 8;
            if (rows->parts)
                return 8; // the flag that says which workgroup of a row's parts arrived last
        }
    }
    return 0;
}

template <class Register>
Register KernelWalker<Register>::rowElement(Reduction const& r, Held<Register> const& held,
                                            std::size_t c, Register const& counter) {
    Id const along = r.sourceAxes.back();
    indices_[along] = counter;
    auto k = known();
    for (std::size_t a = 0; a < r.destAxes.size(); ++a)
        k[r.sourceAxes[a]] = held.elements[c].at(r.destAxes[a]);
    Register const element = readInPlace(r.view, r.source, k, held.elements[c].conditions);
    indices_.erase(along);
    return element;
}

#define KILN_COOPERATIVE_INSTANTIATE(Register)                                                     \
    template IndexSolution KernelWalker<Register>::chunkElement(                                   \
        IndexSolution const&, Reduction const&, CooperativeRows const&, RowPass const&,            \
        std::int64_t);                                                                             \
    template void KernelWalker<Register>::readRowPart(Reduction const&, RowPass const&, bool,      \
                                                      bool, Held<Register>&,                       \
                                                      std::vector<std::vector<ExprPtr>>&);         \
    template RowPass KernelWalker<Register>::beginRowPass(Held<Register> const&, Reduction const&, \
                                                          CooperativeRows const&, bool);           \
    template void KernelWalker<Register>::reduceCooperatively(                                     \
        Operation const&, Held<Register>&, Reduction const&, CooperativeRows const&);              \
    template void KernelWalker<Register>::combineAcrossLanes(Combine, Register const&, DataType,   \
                                                             std::int64_t);                        \
    template void KernelWalker<Register>::mergeAcrossRow(                                          \
        std::vector<Held<Register>*> const&, DataType, CooperativeRows const&, Merge const&);      \
    template Register KernelWalker<Register>::combineAcrossRow(Combine, Register const&, DataType, \
                                                               CooperativeRows const&);            \
    template Register KernelWalker<Register>::rowElement(Reduction const&, Held<Register> const&,  \
                                                         std::size_t, Register const&);            \
    template bool KernelWalker<Register>::rowsReadAgain() const;                                   \
    template void KernelWalker<Register>::forEachChunk(                                            \
        CooperativeRows const&, ExprPtr const&,                                                    \
        std::function<void(std::optional<std::int64_t>)> const&);                                  \
    template LoopLabels KernelWalker<Register>::beginChunks(CooperativeRows const&,                \
                                                            ExprPtr const&);                       \
    template void KernelWalker<Register>::endChunks(LoopLabels const&, CooperativeRows const&);
KILN_COOPERATIVE_INSTANTIATE(std::string)
KILN_COOPERATIVE_INSTANTIATE(amdgcn::Value)
#undef KILN_COOPERATIVE_INSTANTIATE

} // namespace kiln::lowering::detail
