// Rows split over workgroups (docs/codegen.md, "Rows split over workgroups"): a cooperative
// Reduce whose rows SPLIT workgroups share (rules/split-rows-over-workgroups.rules.json). Each
// workgroup combines its span of its rows as any cooperative Reduce does; then its rows' values
// go to a workspace in global memory, the workgroup counts itself in at its block of rows'
// counter, and only the last of the block's workgroups to arrive goes on: it reads every part's
// value back and combines them in part order, so that the result does not depend on which
// workgroup finished first, and stores the rows. The last one also sets the counter back to 0,
// so a workspace zeroed once serves every launch after.
//
// The workspace: a 32-bit counter per block of rows (the grid's x), 16-byte aligned, then an
// 8-byte slot (the accumulator's bits) per row of each part, at (block x SPLIT + part) x rows of
// a block (ROWS x ROW_VEC) + the row's place among them. Both the code generators and the manifest
// read its size from splitRowsWorkspace(), which needs nothing the walk decides.
#include "KernelWalker.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Simplify.h"

#include <fmt/format.h>

namespace kiln::lowering::detail {

std::optional<SplitRowsWorkspace> splitRowsWorkspace(KernelGraph const& graph,
                                                     LaunchShape const& shape) {
    for (Id op : graph.control.nodes()) {
        if (graph.control.node(op).kind != OperationKind::Reduce)
            continue;
        auto const axes = flattenAxes(graph, graph.mapping.get(op, role::source));
        if (axes.empty())
            continue;
        auto const rows = cooperativeRows(graph, shape, axes.back());
        if (!rows || !rows->parts)
            continue;
        // The parts are the grid's y; the blocks of rows its x: the workgroups of one block of
        // rows are those with the same x.
        if (shape.workgroups[1] != rows->parts || shape.workgroups[2] || !shape.workgroups[0])
            throw UserError(fmt::format("a Reduce's rows split over workgroups (#{}) are written "
                                        "where the parts are the grid's y axis and the blocks of "
                                        "rows its x axis",
                                        rows->parts));
        // A block's rows: the result's row axis tiled into the workgroup's number and the
        // constant rest (ROWS x ROW_VEC).
        auto const& coords = graph.coordinates;
        auto const resultAxes = flattenAxes(graph, graph.mapping.get(op, role::dest));
        std::optional<std::int64_t> rowsPerBlock;
        for (Id e : resultAxes.size() == 1 ? coords.outgoing(resultAxes[0]) : std::vector<Id>{}) {
            if (coords.edge(e).kind != CoordinateEdgeKind::Tile)
                continue;
            std::int64_t rest = 1;
            bool numbered = false;
            for (Id h : coords.heads(e)) {
                bool toBlock = false;
                for (Id p : coords.outgoing(h))
                    toBlock = toBlock || (coords.edge(p).kind == CoordinateEdgeKind::PassThrough &&
                                          coords.heads(p)[0] == *shape.workgroups[0]);
                if (toBlock)
                    numbered = true;
                else
                    rest *= constantSize(graph, h, "the rows of a workgroup");
            }
            if (numbered)
                rowsPerBlock = rest;
        }
        if (!rowsPerBlock)
            throw UserError(fmt::format("a Reduce's rows split over workgroups (#{}) are written "
                                        "where its result has one axis, tiled by the grid's x",
                                        rows->parts));
        SplitRowsWorkspace w;
        w.rowsPerBlock = *rowsPerBlock;
        w.countersBytes = simplify(ceilDivide(shape.grid[0], literal(4)) * literal(16));
        w.bytes = simplify(w.countersBytes +
                           shape.grid[0] * literal(rows->partCount * w.rowsPerBlock * 8));
        return w;
    }
    return std::nullopt;
}

template <class Register>
std::vector<Register> KernelWalker<Register>::combineParts(Combine combine, Reduction const& r,
                                                           CooperativeRows const& rows,
                                                           Held<Register> const& held,
                                                           std::vector<Register> const& partials) {
    auto const workspace = splitRowsWorkspace(graph_, shape_);
    KILN_ASSERT(workspace, "rows split over #{} without a workspace", rows.parts);
    auto const k = known();
    ExprPtr const block = k.at(*shape_.workgroups[0]);
    ExprPtr const part = k.at(rows.parts), lane = k.at(rows.lanes);
    std::int64_t const parts = rows.partCount, perBlock = workspace->rowsPerBlock;
    // Row r's slot in part p: the block's rows of each part in turn, r's place among them.
    auto const slot = [&](ExprPtr const& p, std::size_t c) {
        ExprPtr const inBlock = held.elements[c].at(r.destAxes.back()) - block * literal(perBlock);
        return simplify(workspace->countersBytes +
                        ((block * literal(parts) + p) * literal(perBlock) + inBlock) * literal(8));
    };
    // Each row's value, from the row's workitem with lane 0; then the block's counter.
    for (std::size_t c = 0; c < partials.size(); ++c)
        writeWorkspace(partials[c], r.accumulator, slot(part, c),
                       {binary(BinaryOp::Equal, lane, literal(0))});
    arriveLast(simplify(block * literal(4)), parts);
    // The last workgroup of the block: every part's value, in part order.
    std::vector<Register> totals;
    for (std::size_t c = 0; c < partials.size(); ++c) {
        Register const total = combineIdentity(combine, r.accumulator);
        for (std::int64_t p = 0; p < parts; ++p)
            combineInto(combine, total, r.accumulator,
                        readWorkspace(r.accumulator, slot(literal(p), c)), r.accumulator, {});
        totals.push_back(total);
    }
    return totals;
}

// The targets' register types, as KernelWalker.cpp instantiates the rest.
template std::vector<std::string>
KernelWalker<std::string>::combineParts(Combine, Reduction const&, CooperativeRows const&,
                                        Held<std::string> const&, std::vector<std::string> const&);
template std::vector<amdgcn::Value>
KernelWalker<amdgcn::Value>::combineParts(Combine, Reduction const&, CooperativeRows const&,
                                          Held<amdgcn::Value> const&,
                                          std::vector<amdgcn::Value> const&);

} // namespace kiln::lowering::detail
