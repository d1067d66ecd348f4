// Persistent tiles on PTX (PERSISTENT=1): the loop over output tiles that the kernel walker
// writes around the kernel's body (KernelWalker::forEachTile), and the TMA pipeline carried from
// tile to tile.
//
// A workgroup's tiles are numbered from its linear number in the grid launched (%ctaid, %nctaid),
// stepping by the workgroups launched, so that any grid computes every tile once; the launcher
// takes a persistent grid of min(tiles, multiprocessors x workgroups per multiprocessor).
//
// With TMA=1 the pipeline's mbarriers are set up once, before the loop over tiles (beforeTiles),
// and the ring of copies goes on from tile to tile: the consumers' copy and the phase they wait
// for are registers that no tile resets, so that each mbarrier's phases stay in order (a running
// count of K slices, not one per tile). Without a producer warpgroup, each tile's prologue loads
// its first slices into the copies after the ones the last tile read, after a barrier of the
// workgroup (betweenTiles: every warp is done reading them). With WARP_SPECIALIZE=1 the split
// comes first: the producer warp loops over the same tiles in the same order, waiting on the
// empty mbarriers only, so it loads the next tile's slices while the consumers run the epilogue
// of this one; the consumers release each tile's last slice after its wgmmas are done (the next
// tile's first slice releases none), and store a tile's accumulators before the next tile's first
// wgmma overwrites them (in order: they are the same warps' registers).
#include "PtxCodegen.h"
#include "kiln/lowering/Occupancy.h"

namespace kiln::lowering::detail {

// x + X (y + Y z), as the hardware numbers workgroups.
std::string PtxCodegen::linearWorkgroup() {
    std::array<std::string, 5> r;
    for (auto& reg : r)
        reg = writer_.newRegister(PtxType::B32);
    std::string const linear = writer_.newRegister(PtxType::S64);
    writer_.instruction(fmt::format("mov.u32 {}, %ctaid.z", r[0]));
    writer_.instruction(fmt::format("mov.u32 {}, %nctaid.y", r[1]));
    writer_.instruction(fmt::format("mov.u32 {}, %ctaid.y", r[2]));
    writer_.instruction(fmt::format("mad.lo.u32 {0}, {0}, {1}, {2}", r[0], r[1], r[2]));
    writer_.instruction(fmt::format("mov.u32 {}, %nctaid.x", r[3]));
    writer_.instruction(fmt::format("mov.u32 {}, %ctaid.x", r[4]));
    writer_.instruction(fmt::format("mad.lo.u32 {0}, {0}, {1}, {2}", r[0], r[3], r[4]));
    writer_.instruction(fmt::format("cvt.u64.u32 {}, {}", linear, r[0]));
    if (!pingpong_)
        return linear;
    // PINGPONG=1's consumers (PtxPingpong.cpp): consumer c starts at the workgroup's tile c.
    pingpong_->launched = workgroupsLaunched();
    std::string const consumer = writer_.newRegister(PtxType::S64),
                      first = writer_.newRegister(PtxType::S64);
    writer_.instruction(fmt::format("cvt.u64.u32 {}, {}", consumer, pingpong_->consumer));
    writer_.instruction(
        fmt::format("mad.lo.s64 {}, {}, {}, {}", first, consumer, pingpong_->launched, linear));
    return first;
}

std::string PtxCodegen::workgroupsLaunched() {
    std::array<std::string, 3> r;
    for (auto& reg : r)
        reg = writer_.newRegister(PtxType::B32);
    std::string const launched = writer_.newRegister(PtxType::S64);
    writer_.instruction(fmt::format("mov.u32 {}, %nctaid.x", r[0]));
    writer_.instruction(fmt::format("mov.u32 {}, %nctaid.y", r[1]));
    writer_.instruction(fmt::format("mov.u32 {}, %nctaid.z", r[2]));
    writer_.instruction(fmt::format("mul.lo.u32 {0}, {0}, {1}", r[0], r[1]));
    writer_.instruction(fmt::format("mul.wide.u32 {}, {}, {}", launched, r[0], r[2]));
    if (!pingpong_ || pingpong_->launched.empty())
        return launched;
    // PINGPONG=1's consumers step over the other consumer's tiles.
    std::string const twice = writer_.newRegister(PtxType::S64);
    writer_.instruction(fmt::format("shl.b64 {}, {}, 1", twice, pingpong_->launched));
    pingpong_->step = twice;
    return twice;
}

LoopLabels PtxCodegen::beginTiles(std::string const& tile, ExprPtr const& tiles) {
    LoopLabels const labels{writer_.newLabel("tile"), writer_.newLabel("tiled")};
    writer_.label(labels.top);
    writer_.pushScope();
    std::string const past = writer_.newRegister(PtxType::Pred);
    writer_.instruction(
        fmt::format("setp.ge.s64 {}, {}, {}", past, tile, writer_.emitIndex(tiles, bindings())));
    writer_.instruction(fmt::format("@{} bra {}", past, labels.done));
    if (pingpong_) {
        pingpong_->tile = tile;
        pingpong_->tiles = tiles;
    }
    return labels;
}

void PtxCodegen::endTiles(LoopLabels const& labels, std::string const& tile,
                          std::string const& step) {
    writer_.popScope();
    writer_.instruction(fmt::format("add.s64 {0}, {0}, {1}", tile, step));
    writer_.instruction(fmt::format("bra.uni {}", labels.top));
    writer_.label(labels.done);
}

void PtxCodegen::copyIndex(Id dest, std::string const& from) {
    auto it = indices_.find(dest);
    if (it == indices_.end())
        it = indices_.emplace(dest, writer_.newRegister(PtxType::S64)).first;
    writer_.instruction(fmt::format("mov.s64 {}, {}", it->second, from));
}

// The first loop of the body that is pipelined with the copy engine is set up here, once.
void PtxCodegen::beforeTiles(std::vector<Id> const& body) {
    if (!tmaRequested() || discovering_)
        return;
    for (Id op : body) {
        auto const pipeline = pipelineOf(op, graph_.control.node(op));
        if (!pipeline)
            continue;
        hoisting_ = true;
        emitTmaPipeline(*pipeline);
        hoisting_ = false;
        return;
    }
}

// After the split, the consumers read only what the producer's mbarriers hand them: no barrier.
// Without a producer in a cluster, the next tile's first copies multicast into the copies the
// peers read last: the barrier is the cluster's.
void PtxCodegen::betweenTiles() {
    if (carried_ && consumerThreads_ > 0)
        return;
    if (carried_ && clustered()) {
        fenceForWarpgroups();
        return stageBarrier();
    }
    KernelWalker::betweenTiles();
}

// As emitTmaPipeline's loop, the copies starting where the consumers read next: the producer's
// ring is set to the consumers' at the tile's start.
void PtxCodegen::emitCarriedTmaPipeline(Pipeline const& pl) {
    Ring const& ring = *carried_;
    std::string const first = sharedBase_;
    bool const overlap = pl.stages >= 3;
    std::int64_t const lead = overlap ? pl.stages - 2 : pl.stages - 1;
    warpgroupsInFlight_ = overlap ? 1 : 0;
    ExprPtr const elected = binary(BinaryOp::Equal, linearWorkitem(shape_), literal(0));
    for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
        operation(init);
    std::string const write = writer_.newRegister(PtxType::B32),
                      writeFull = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.u32 {}, {}", write, ring.data));
    writer_.instruction(fmt::format("mov.u32 {}, {}", writeFull, ring.full));
    for (std::int64_t s = 0; s < lead; ++s) {
        produceTma(pl, s, write, writeFull, elected);
        nextCopy(pl, first, write, {{writeFull, ring.firstFull}}, "");
    }
    std::string const top = writer_.newLabel("loop"), done = writer_.newLabel("done");
    writer_.label(top);
    writer_.pushScope();
    std::string const p = writer_.emit(pl.o.expression, DataType::Bool, bindings());
    writer_.instruction(fmt::format("@!{} bra {}", p, done));
    // Every warp is done with the copy the producer overwrites (emitTmaPipeline).
    stageBarrier();
    produceTma(pl, lead, write, writeFull, elected);
    waitOnMbarrier(ring.full, ring.phase);
    sharedBase_ = ring.data;
    list(pl.consumer);
    sharedBase_ = first;
    operation(pl.increment);
    nextCopy(pl, first, ring.data, {{ring.full, ring.firstFull}}, ring.phase);
    nextCopy(pl, first, write, {{writeFull, ring.firstFull}}, "");
    writer_.popScope();
    writer_.instruction(fmt::format("bra.uni {}", top));
    writer_.label(done);
    if (overlap)
        writer_.instruction("wgmma.wait_group.sync.aligned 0");
    warpgroupsInFlight_ = 0;
}

void PtxCodegen::consumeCarriedTile(Pipeline const& pl) {
    if (pingpong_)
        return consumePingpongTile(pl);
    warpgroupsInFlight_ = 1;
    for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
        operation(init);
    consumeSlices(pl, *carried_);
    writer_.instruction("wgmma.wait_group.sync.aligned 0");
    // The tile's last slice, whose wgmmas are now done: its copy goes back to the producer here,
    // since the next tile's first slice releases none.
    releaseCopy(writer_.emit(releasesPrevious(pl), DataType::Bool, bindings()), carried_->previous);
    warpgroupsInFlight_ = 0;
}

} // namespace kiln::lowering::detail
