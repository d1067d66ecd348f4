// Ping-pong consumers on PTX (PINGPONG=1, with TMA=1, WARP_SPECIALIZE=1 and PERSISTENT=1): two
// consumer warpgroups, each of them the graph's warps (one warpgroup: MT_M = 64, WT_M = 16),
// take a persistent workgroup's tiles in turn, so that one's epilogue (the bias, the GELU, the
// store) runs while the other's wgmmas keep the tensor cores busy.
//
// The workgroup is consumer 0 (warps 0-3), consumer 1 (warps 4-7), then the producer warpgroup
// (8-11). The producer loops over the workgroup's tiles t, t + L, t + 2L, ... (L: the workgroups
// launched) as without ping-pong, loading every tile's K slices in order into one ring of STAGES
// copies; consumer c takes tiles t + cL, t + (c + 2)L, ... (linearWorkgroup/workgroupsLaunched
// below). With n K slices a tile, tile j of the workgroup owns slices [jn, (j + 1)n) of the ring,
// so consumer c starts at slice cn and steps by 2n after each of its tiles (Ring::count); the
// ring's copy, its mbarriers and the phase are set from that count at each tile's start. Each
// empty mbarrier expects one consumer warpgroup's warps: a slice is released by the consumer that
// read it.
//
// The turns. A consumer must not wait on a full mbarrier while its phase is two behind the one it
// waits for: try_wait.parity cannot tell phase q + 1 from q - 1. Waiting for slice s (phase
// s / STAGES of copy s % STAGES) is safe once slice s - STAGES has landed. Within a tile the
// consumer waited for it itself; for a tile's first slices it belongs to the other consumer's
// tile, so a consumer starts its tile's K loop only after the other consumer has waited for all
// of the tile before: two named barriers of 256 workitems (kTurnBarrier + c: consumer c waits
// there with bar.sync; the other arrives with bar.arrive after its K loop, before its epilogue).
// Consumer 0's first tile waits for nobody (tile < L), and a consumer arrives only where the other
// has a next tile (tile + L < tiles), so every barrier's arrivals and waits pair up. Two barriers,
// not one: on one, a consumer's arrival and its own next wait could complete it together. The
// turns are also what makes the two K loops alternate on the tensor cores (CUTLASS's
// KernelTmaWarpSpecializedPingpong orders them the same way).
//
// After the split each consumer runs the graph's code for its own warps: its warp index rebound to
// 0-3 (so its workitem 0 issues its staged stores, its warps' lane 0 release its slices), and
// what the writer computed from the old index forgotten. What the consumers synchronise among
// themselves is a named barrier of their own 128 workitems (kConsumerBarrier + c), and EPILOGUE=1
// gives each consumer its own staging buffers (the second's after the first's), and its issuing
// workitem its own bulk groups.
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

bool PtxCodegen::pingpong() const {
    auto const p = options_.schedule.find("PINGPONG");
    return p != options_.schedule.end() && p->second == 1;
}

void PtxCodegen::becomeConsumer(std::int64_t consumerWarps) {
    Id const warp = *shape_.workitems[2];
    std::string const z = indices_.at(warp);
    Pingpong p;
    p.consumer = writer_.newRegister(PtxType::B32);
    std::string const second = writer_.newRegister(PtxType::Pred);
    writer_.instruction(fmt::format("setp.ge.s64 {}, {}, {}", second, z, consumerWarps));
    writer_.instruction(fmt::format("selp.u32 {}, 1, 0, {}", p.consumer, second));
    // The warp index of the consumer's own warpgroup: the graph's code runs unchanged in each.
    writer_.instruction(fmt::format("@{} sub.s64 {}, {}, {}", second, z, z, consumerWarps));
    writer_.forgetExpressions();
    pingpong_ = p;
}

// Computed where it is used rather than held across the loop over tiles: the consumers have no
// register to spare beside 128 accumulators (ptxas spilled one at 168 registers a workitem).
std::string PtxCodegen::namedBarrier(std::int64_t first, bool other) {
    std::string const id = writer_.newRegister(PtxType::B32);
    if (other)
        writer_.instruction(fmt::format("sub.u32 {}, {}, {}", id, first + 1, pingpong_->consumer));
    else
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", id, pingpong_->consumer, first));
    return id;
}

std::string PtxCodegen::slicesPerTile(Pipeline const& pl) {
    // The loop runs while counter < end, from its Initialize's value, in steps of 1 (pipelineOf):
    // end - start slices, the same for every tile where neither depends on the tile.
    auto const* less = std::get_if<expr::Binary>(pl.o.expression.get());
    auto const* counter =
        less && less->op == BinaryOp::Less ? std::get_if<expr::Index>(less->lhs.get()) : nullptr;
    ExprPtr start;
    for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
        if (graph_.mapping.get(init, role::dest) == pl.counter)
            start = graph_.control.node(init).expression;
    std::map<Id, ExprPtr> tileless;
    for (auto const& d : shape_.workgroups)
        if (d)
            tileless.emplace(*d, literal(0));
    auto fixed = [&](ExprPtr const& e) { return e && equal(substitute(e, tileless), e); };
    if (!counter || counter->dimension != pl.counter || !fixed(less->rhs) || !fixed(start))
        throw UserError(fmt::format("PINGPONG=1 skips the other consumer's K slices in the ring, "
                                    "so every tile must have as many: the K loop (operation #{}) "
                                    "must run from a start to a bound (counter < bound) that do "
                                    "not depend on the tile; it is '{}'",
                                    pl.op, toString(pl.o.expression)));
    ExprPtr const slices = simplify(binary(BinaryOp::Max, less->rhs - start, literal(0)));
    std::string const wide = writer_.emitIndex(slices, bindings());
    std::string const n = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("cvt.u32.u64 {}, {}", n, wide));
    return n;
}

void PtxCodegen::consumePingpongTile(Pipeline const& pl) {
    KILN_ASSERT(pingpong_ && carried_, "a ping-pong tile outside the consumers' loop");
    Ring const& ring = *carried_;
    Pingpong const& p = *pingpong_;
    warpgroupsInFlight_ = 1;
    for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
        operation(init);
    // The ring at this tile's first slice: copy count % STAGES, phase (count / STAGES) % 2.
    std::string const copy = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("rem.u32 {}, {}, {}", copy, ring.count, pl.stages));
    writer_.instruction(
        fmt::format("mad.lo.u32 {}, {}, {}, {}", ring.data, copy, pl.stageBytes, sharedBase_));
    writer_.instruction(fmt::format("mad.lo.u32 {}, {}, 8, {}", ring.full, copy, ring.firstFull));
    writer_.instruction(fmt::format("mad.lo.u32 {}, {}, 8, {}", ring.empty, copy, ring.firstEmpty));
    writer_.instruction(fmt::format("div.u32 {}, {}, {}", ring.phase, ring.count, pl.stages));
    writer_.instruction(fmt::format("and.b32 {0}, {0}, 1", ring.phase));
    // Its turn: the other consumer has waited for every slice of the tile before this one.
    std::string const launched = writer_.newRegister(PtxType::S64);
    writer_.instruction(fmt::format("shr.b64 {}, {}, 1", launched, p.step));
    std::string const waits = writer_.newRegister(PtxType::Pred);
    writer_.instruction(fmt::format("setp.ge.s64 {}, {}, {}", waits, p.tile, launched));
    writer_.instruction(fmt::format("@{} bar.sync {}, {}", waits, namedBarrier(kTurnBarrier, false),
                                    2 * consumerThreads_));
    consumeSlices(pl, ring);
    // The other consumer's turn, where it has a tile after this one.
    std::string const next = writer_.newRegister(PtxType::S64);
    std::string const hands = writer_.newRegister(PtxType::Pred);
    writer_.instruction(fmt::format("shr.b64 {}, {}, 1", next, p.step));
    writer_.instruction(fmt::format("add.s64 {0}, {0}, {1}", next, p.tile));
    writer_.instruction(
        fmt::format("setp.lt.s64 {}, {}, {}", hands, next, writer_.emitIndex(p.tiles, bindings())));
    writer_.instruction(fmt::format("@{} bar.arrive {}, {}", hands,
                                    namedBarrier(kTurnBarrier, true), 2 * consumerThreads_));
    writer_.instruction("wgmma.wait_group.sync.aligned 0");
    // The tile's last slice goes back to the producer (consumeCarriedTile).
    releaseCopy(writer_.emit(releasesPrevious(pl), DataType::Bool, bindings()), ring.previous);
    // This tile's slices and the other consumer's next tile's.
    writer_.instruction(fmt::format("add.u32 {0}, {0}, {1}", ring.count, p.slicesTwice));
    warpgroupsInFlight_ = 0;
}

} // namespace kiln::lowering::detail
