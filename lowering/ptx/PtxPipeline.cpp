// Prefetch: a loop that stages tiles through shared memory, software-pipelined over STAGES
// copies of its shared memory (the schedule parameter STAGES >= 2, targets with cp.async).
//
// The loop body splits into the producer (the staged tiles' loads and their StoreShared, which
// become cp.async copies) and the consumer (everything else: the reads of the staged tiles,
// the Multiply, the accumulation); the graph's Barriers go, the pipeline places its own. The
// producer runs STAGES - 1 iterations ahead:
//
//     produce(0) .. produce(STAGES - 2), each one cp.async group
//     loop i:  wait until group i has landed; barrier
//              produce(i + STAGES - 1) into copy (i + STAGES - 1) % STAGES; commit
//              consume(i) from copy i % STAGES
//
// The copy produce(i + STAGES - 1) overwrites is the one consume(i - 1) read, and every
// workitem has passed the barrier of iteration i, so it is done with it. A Multiply on
// warpgroups (PtxWarpgroups.cpp) leaves its wgmmas running into the next iteration, so consume(i
// - 1) may still read its copy then: with STAGES >= 3 the producer runs STAGES - 2 iterations
// ahead instead, into the copy consume(i - 2) read, whose wgmmas each warp waited for before the
// barrier; the last ones are waited for after the loop. The producer of
// iteration i + s is the same code at loop counter + s: its indices are solved with the counter
// shifted (known()), its copies guarded by the loop's condition at the shifted counter.
//
// Two versions of it. The fast one has no branch in the loop: each staged run is one cp.async
// whose byte count zero-fills what lies outside the tensor, and the producer follows the
// consumer, so that ptxas interleaves the copies' address arithmetic with the multiply. It needs
// every run's alignment to depend on sizes only; that is checked once before it. The plain one
// (branches, element-by-element edges, the producer first) runs where the check fails or a run
// cannot be copied without a branch. A kernel for known sizes (CodegenOptions::sizes) holds only
// the version that runs at them: a sweep's candidate is assembled in half the time.
//
// With TMA=1 (sm_90a, tiles that wgmma reads) the copy engine loads the tiles instead: one
// workitem issues, per copy of shared memory, a cp.async.bulk.tensor of each 64-element column
// of each staged tile (a box of 64 x rows, the 128-byte swizzle: the layout wgmma reads,
// SharedLayout::Swizzle), completing on that copy's mbarrier, whose expected bytes are the whole
// boxes (the copy engine fills what lies outside the tensor with zeros and counts it). Consumers
// wait on the mbarrier's phase instead of cp.async.wait_group; the one barrier per iteration
// stays, and tells the issuing workitem that every warp is done with the copy it overwrites:
//
//     init one mbarrier per copy; fence.mbarrier_init; barrier
//     produce(0) .. produce(lead - 1)            (one workitem, where the loop runs that far)
//     loop i:  barrier
//              produce(i + lead) into copy (i + lead) % STAGES
//              wait on copy i % STAGES's mbarrier, parity (i / STAGES) % 2
//              consume(i)
//
// Where boxes overhang the tensor there is nothing to mask, so a TMA kernel has one version of
// the loop for every size; what it needs of the sizes is what a tensor map needs: rows a multiple
// of 16 bytes apart, which the launcher checks when it encodes the map (TensorMapLayout::check).
// In a thread-block cluster (CLUSTER_M, CLUSTER_N) the tile the workgroups share is multicast in
// halves, and the pipeline's waits span the cluster (PtxClusters.cpp).
#include "PtxCodegen.h"
#include "kiln/graph/Distribution.h"
#include "kiln/lowering/Occupancy.h"
#include "kiln/lowering/TensorMaps.h"

namespace kiln::lowering::detail {

std::optional<bool> PtxCodegen::holdAtKnownSizes(std::vector<ExprPtr> const& conditions) const {
    if (options_.sizes.empty())
        return std::nullopt;
    for (ExprPtr const& c : conditions) {
        auto const holds = atKnownSizes(c);
        if (!holds)
            return std::nullopt; // a condition on something other than the sizes given
        if (!holds->asBool())
            return false;
    }
    return true;
}

std::optional<PtxCodegen::Pipeline> PtxCodegen::pipelineOf(Id op, Operation const& o) {
    auto const stagesIt = options_.schedule.find("STAGES");
    if (o.kind != OperationKind::ForLoop || !arch_.has(arch::Capability::HasCpAsync) ||
        stagesIt == options_.schedule.end() || stagesIt->second < 2 ||
        graph_.coordinates.node(graph_.mapping.get(op, role::counter)).kind ==
            DimensionKind::Unroll)
        return std::nullopt;
    std::int64_t const stages = stagesIt->second;
    auto const steps = graph_.successors(op, ControlEdgeKind::ForLoopIncrement);
    if (steps.size() != 1)
        return std::nullopt;
    auto const& step = graph_.control.node(steps[0]);
    Id const counter = graph_.mapping.get(steps[0], role::dest);
    if (step.kind != OperationKind::Assign ||
        IndexFacts::difference(step.expression, index(counter)) != std::int64_t{1})
        return std::nullopt;

    auto const body = graph_.sequence(op, ControlEdgeKind::Body);
    std::set<Id> staged;
    for (Id b : body)
        if (graph_.control.node(b).kind == OperationKind::StoreShared)
            staged.insert(graph_.mapping.get(b, role::source));
    if (staged.empty())
        return std::nullopt;
    std::vector<Id> producer, consumer;
    for (Id b : body) {
        switch (graph_.control.node(b).kind) {
        case OperationKind::StoreShared:
            producer.push_back(b);
            break;
        case OperationKind::LoadTiled:
        case OperationKind::LoadLinear:
            (staged.contains(graph_.mapping.get(b, role::dest)) ? producer : consumer).push_back(b);
            break;
        case OperationKind::Barrier:
            break;
        case OperationKind::LoadShared:
        case OperationKind::Multiply:
        case OperationKind::Assign:
            consumer.push_back(b);
            break;
        default: // control flow or stores inside: not pipelined
            return std::nullopt;
        }
    }

    // STAGES copies of everything staged, each 128-byte aligned (1024 where wgmma reads
    // swizzled tiles).
    std::int64_t const align = shared_.swizzles.empty() ? 128 : 1024;
    std::int64_t const stageBytes =
        static_cast<std::int64_t>((shared_.bytes + align - 1) / align * align);
    requireShared(stages, stageBytes);
    sharedBytes_ = static_cast<std::size_t>(stageBytes * stages);
    return Pipeline{op, o, counter, steps[0], stages, stageBytes, producer, consumer};
}

bool PtxCodegen::pipelinedLoop(Id op, Operation const& o) {
    auto const found = pipelineOf(op, o);
    if (!found)
        return false;
    Pipeline const& pipeline = *found;
    // The first run of the generator (findWarpgroupTiles) plans only; it has no swizzled tiles
    // yet and writes no staging, so it walks the plain pipeline.
    if (tmaRequested() && !discovering_) {
        emitTmaPipeline(pipeline);
        return true;
    }

    // The fast version copies without a branch and lets ptxas interleave the copies' address
    // arithmetic with the multiply (one basic block); it needs alignment that only sizes decide,
    // checked once before it. Where it does not hold, or a copy cannot go without a branch, the
    // plain version runs.
    std::size_t const mark = writer_.mark();
    branchFree_ = true;
    branchFreeFailed_ = false;
    assumed_.clear();
    writer_.pushScope();
    emitPipeline(pipeline, /*fast=*/true);
    writer_.popScope();
    branchFree_ = false;
    std::string const fast = writer_.cut(mark);
    if (branchFreeFailed_) {
        emitPipeline(pipeline, /*fast=*/false);
        return true;
    }
    // For known sizes only the version that runs at them: the fast one behind a trap (a launch
    // at sizes where its alignment fails stops instead of computing garbage), or the plain one.
    if (std::optional<bool> const holds = holdAtKnownSizes(assumed_)) {
        if (!*holds) {
            emitPipeline(pipeline, /*fast=*/false);
            return true;
        }
        if (std::string const aligned = writer_.emitConditions(assumed_, bindings());
            !aligned.empty())
            writer_.instruction(fmt::format("@!{} trap", aligned));
        writer_.append(fast);
        for (ExprPtr const& c : assumed_)
            assume(c, assumptions_);
        return true;
    }
    std::string const aligned = writer_.emitConditions(assumed_, bindings());
    std::string const plain = writer_.newLabel("unaligned"), after = writer_.newLabel("pipelined");
    if (!aligned.empty())
        writer_.instruction(fmt::format("@!{} bra {}", aligned, plain));
    writer_.append(fast);
    if (aligned.empty())
        return true;
    writer_.instruction(fmt::format("bra.uni {}", after));
    writer_.label(plain);
    writer_.pushScope();
    emitPipeline(pipeline, /*fast=*/false);
    writer_.popScope();
    writer_.label(after);
    return true;
}

void PtxCodegen::emitPipeline(Pipeline const& pl, bool fast) {
    std::string const first = sharedBase_;
    bool const overlap = !shared_.swizzles.empty() && pl.stages >= 3;
    std::int64_t const lead = overlap ? pl.stages - 2 : pl.stages - 1;
    warpgroupsInFlight_ = overlap ? 1 : 0;
    auto copyAt = [&](std::int64_t s) {
        std::string const r = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", r, first, s * pl.stageBytes));
        return r;
    };
    // The producer of iteration counter + `shift`, into the copy at `base`: one cp.async group.
    // The plain version skips it past the loop's end; the fast one copies nothing there.
    auto produce = [&](std::int64_t shift, std::string const& base) {
        writer_.pushScope();
        ExprPtr const shifted = simplify(index(pl.counter) + literal(shift));
        shifted_[pl.counter] = shifted;
        ExprPtr const inside = simplify(substitute(pl.o.expression, {{pl.counter, shifted}}));
        std::string const skip = writer_.newLabel("produced");
        if (fast)
            producerConditions_ = {inside};
        else
            writer_.instruction(
                fmt::format("@!{} bra {}", writer_.emit(inside, DataType::Bool, bindings()), skip));
        sharedBase_ = base;
        list(pl.producer);
        sharedBase_ = first;
        if (!fast)
            writer_.label(skip);
        writer_.instruction("cp.async.commit_group");
        asyncPending_ = false;
        shifted_.clear();
        producerConditions_.clear();
        writer_.popScope();
    };

    auto initialize = [&] {
        for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
            operation(init);
    };
    initialize();
    if (fast || lead < 2) {
        for (std::int64_t s = 0; s < lead; ++s)
            produce(s, copyAt(s));
    } else {
        // The plain version's prologue is a loop (it runs only at unaligned sizes, where the
        // element-by-element edges dominate): the producer at the counter itself, the counter
        // stepped, then set back to its start: two copies of the producer in this version
        // instead of lead + 1, and less for ptxas to compile.
        std::string const base = copyAt(0), last = copyAt(lead);
        std::string const top = writer_.newLabel("prologue"), done = writer_.newLabel("prologued");
        writer_.label(top);
        writer_.pushScope();
        std::string const finished = writer_.newRegister(PtxType::Pred);
        writer_.instruction(fmt::format("setp.eq.u32 {}, {}, {}", finished, base, last));
        writer_.instruction(fmt::format("@{} bra {}", finished, done));
        produce(0, base);
        operation(pl.increment);
        writer_.instruction(fmt::format("add.u32 {0}, {0}, {1}", base, pl.stageBytes));
        writer_.popScope();
        writer_.instruction(fmt::format("bra.uni {}", top));
        writer_.label(done);
        initialize();
    }
    std::string const read = copyAt(0), write = copyAt(lead),
                      end = copyAt(pl.stages); // one past the last copy
    std::string const top = writer_.newLabel("loop"), done = writer_.newLabel("done");
    writer_.label(top);
    writer_.pushScope();
    std::string const p = writer_.emit(pl.o.expression, DataType::Bool, bindings());
    writer_.instruction(fmt::format("@!{} bra {}", p, done));
    writer_.instruction(fmt::format("cp.async.wait_group {}", lead - 1));
    fenceForWarpgroups();
    writer_.instruction("bar.sync 0");
    auto consume = [&] {
        sharedBase_ = read;
        list(pl.consumer);
        sharedBase_ = first;
    };
    // The fast version multiplies first: the copies' arithmetic fills the multiply's gaps and
    // the copies follow its last shared-memory read.
    if (fast)
        consume();
    produce(lead, write);
    if (!fast)
        consume();
    operation(pl.increment);
    for (std::string const& r : {read, write}) { // on to the next copy, round the ring
        std::string const wrapped = writer_.newRegister(PtxType::Pred);
        writer_.instruction(fmt::format("add.u32 {0}, {0}, {1}", r, pl.stageBytes));
        writer_.instruction(fmt::format("setp.eq.u32 {}, {}, {}", wrapped, r, end));
        writer_.instruction(fmt::format("selp.b32 {0}, {1}, {0}, {2}", r, first, wrapped));
    }
    writer_.popScope();
    writer_.instruction(fmt::format("bra.uni {}", top));
    writer_.label(done);
    writer_.instruction("cp.async.wait_all");
    if (overlap)
        writer_.instruction("wgmma.wait_group.sync.aligned 0");
    warpgroupsInFlight_ = 0;
}

bool PtxCodegen::tmaRequested() const {
    auto const tma = options_.schedule.find("TMA");
    return tma != options_.schedule.end() && tma->second != 0;
}

std::string PtxCodegen::tensorMapParameter(std::string const& tensor, std::int64_t rows) {
    std::string const name = tensor + "_tma";
    for (ParameterInfo const& p : tensorMaps_)
        if (p.name == name) {
            if (p.tensorMap->box[1] != rows)
                throw UserError(fmt::format("TMA=1 loads tensor {} in boxes of {} and of {} rows; "
                                            "one tensor map holds one box",
                                            tensor, p.tensorMap->box[1], rows));
            return name;
        }
    if (graph_.findArgument(name))
        throw UserError(fmt::format("TMA=1 names the tensor map of {} '{}', which is already an "
                                    "argument of the kernel",
                                    tensor, name));
    auto const geometry = tensorGeometry(graph_, tensor);
    auto const* arg = graph_.findArgument(tensor);
    KILN_ASSERT(geometry && arg, "tensor {} has no geometry", tensor);
    ParameterInfo p;
    p.name = name;
    p.type = std::string(kiln::name(arg->dtype));
    p.size = 128;
    p.meaning = fmt::format("tensor map of {}", tensor);
    TensorMapInfo map{.tensor = tensor, .box = {64, rows}};
    for (ExprPtr const& size : geometry->sizes)
        map.sizes.push_back(toString(size));
    for (std::size_t d = 1; d < geometry->strides.size(); ++d)
        map.strides.push_back(toString(geometry->strides[d]));
    p.tensorMap = std::move(map);
    tensorMaps_.push_back(std::move(p));
    return name;
}

// The boxes that load StoreShared `op`'s tile at the current loop counter, and the tile's bytes.
// The tile must be one wgmma reads (swizzled), of a 2-dimensional tensor, its rows along the
// tensor's contiguous axis: then each 64-element column of it is one box of the tensor map.
std::vector<PtxCodegen::TmaCopy> PtxCodegen::tmaCopies(Id op, std::int64_t& bytes) {
    Id const source = graph_.mapping.get(op, role::source),
             shared = graph_.mapping.get(op, role::dest);
    auto refuse = [&](std::string_view why) {
        return UserError(fmt::format("TMA=1: the tile staged into Shared #{} cannot be loaded by "
                                     "the copy engine: {} (schedule {})",
                                     shared, why, scheduleText(options_.schedule)));
    };
    auto const swizzle = shared_.swizzles.find(shared);
    if (swizzle == shared_.swizzles.end())
        throw refuse("wgmma does not read it (TMA loads only the swizzled tiles of MMA=1, "
                     "WT_M=16, WT_N=0 on sm_90a)");
    auto const view = views_.find(source);
    KILN_ASSERT(view != views_.end(), "the staged value #{} is not a view", source);
    Id const memory = graph_.mapping.get(view->second, role::source);
    std::string const& tensor = graph_.coordinates.node(memory).name;
    auto const geometry = tensorGeometry(graph_, tensor);
    if (!geometry || geometry->axes.size() != 2)
        throw refuse(fmt::format("tensor {} is not a matrix with a contiguous axis", tensor));
    Distribution const dist = distributionOf(graph_, source);
    if (dist.locals.size() != 2)
        throw refuse("the tile is not two-dimensional");
    // The tile's place in the tensor and in shared memory with local index `one` at 1, the other
    // at 0 (none: both 0).
    auto at = [&](std::optional<std::size_t> one) {
        auto k = known();
        for (std::size_t i = 0; i < dist.locals.size(); ++i)
            k[dist.locals[i]] = literal(one == i ? 1 : 0);
        IndexSolution const s = solveIndices(graph_, k, {shared, memory}, facts_);
        std::array<ExprPtr, 3> r{s.at(shared), nullptr, nullptr};
        for (std::size_t a = 0; a < 2; ++a) {
            auto const it = s.indices.find(geometry->axes[a]);
            if (it == s.indices.end())
                throw refuse(fmt::format("its place along axis {} of {} is not solved", a, tensor));
            r[a + 1] = facts_.reduce(it->second);
        }
        return r;
    };
    auto const origin = at(std::nullopt);
    std::int64_t const row = swizzle->second.rowLength, rows = swizzle->second.rows;
    if (IndexFacts::difference(origin[0], literal(0)) != std::int64_t{0})
        throw refuse("it does not start its Shared dimension");
    // Which local index runs along the tensor's contiguous axis (the tile's rows) and which
    // across it.
    std::optional<std::size_t> along, across;
    for (std::size_t i = 0; i < 2; ++i) {
        auto const moved = at(i);
        auto step = [&](std::size_t c) { return IndexFacts::difference(moved[c], origin[c]); };
        std::int64_t const size = constantSize(graph_, dist.locals[i], "the staged tile's index");
        if (step(0) == std::int64_t{1} && step(1) == std::int64_t{1} &&
            step(2) == std::int64_t{0} && size == row)
            along = i;
        else if (step(0) == row && step(1) == std::int64_t{0} && step(2) == std::int64_t{1} &&
                 size == rows)
            across = i;
    }
    if (!along || !across)
        throw refuse(fmt::format("its rows do not run along the contiguous axis of {}", tensor));
    if (rows > 256)
        throw refuse(fmt::format("{} rows; a box has at most 256", rows));
    // Clusters (PtxClusters.cpp): a tile every workgroup of the cluster stages is loaded in
    // parts of rows / size rows, each multicast by one workgroup.
    std::int64_t const parts =
        sharedAcrossCluster(origin) ? clusterShape(options_.schedule).size() : 1;
    if (parts > 1 && rows % (8 * parts) != 0)
        throw refuse(fmt::format("its {} rows do not split into {} parts of a multiple of 8 "
                                 "rows, which the copy engine multicasts to the cluster",
                                 rows, parts));
    std::string const map = tensorMapParameter(tensor, rows / parts);
    std::vector<TmaCopy> copies;
    std::int64_t const offset = static_cast<std::int64_t>(shared_.offsets.at(shared));
    for (std::int64_t column = 0; column < row; column += 64)
        copies.push_back({map, simplify(origin[1] + literal(column)), origin[2],
                          offset + column * rows * 2, parts > 1 ? rows / parts : 0});
    bytes += row * rows * 2;
    return copies;
}

bool PtxCodegen::warpSpecialized() const {
    auto const ws = options_.schedule.find("WARP_SPECIALIZE");
    return ws != options_.schedule.end() && ws->second != 0;
}

// The copies of iteration counter + `shift` into the copy at `base`, completing on the mbarrier
// at `full`: issued where `issuer` holds and the loop runs that far.
void PtxCodegen::produceTma(Pipeline const& pl, std::int64_t shift, std::string const& base,
                            std::string const& full, ExprPtr const& issuer) {
    writer_.pushScope();
    ExprPtr const shifted = simplify(index(pl.counter) + literal(shift));
    shifted_[pl.counter] = shifted;
    ExprPtr const inside = simplify(substitute(pl.o.expression, {{pl.counter, shifted}}));
    std::string const p =
        writer_.emit(binary(BinaryOp::LogicalAnd, issuer, inside), DataType::Bool, bindings());
    std::vector<TmaCopy> copies;
    std::int64_t bytes = 0;
    for (Id b : pl.producer) {
        if (graph_.control.node(b).kind != OperationKind::StoreShared) {
            operation(b); // a workgroup's tile: a view, no code
            continue;
        }
        auto const more = tmaCopies(b, bytes);
        copies.insert(copies.end(), more.begin(), more.end());
    }
    writer_.instruction(
        fmt::format("@{} mbarrier.arrive.expect_tx.shared::cta.b64 _, [{}], {}", p, full, bytes));
    for (TmaCopy const& c : copies) {
        std::string const param = writer_.newRegister(PtxType::U64),
                          map = writer_.newRegister(PtxType::U64),
                          destination = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("mov.u64 {}, {}", param, paramName(c.map)));
        writer_.instruction(fmt::format("cvta.param.u64 {}, {}", map, param));
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", destination, base, c.sharedOffset));
        std::array<std::string, 2> coordinates;
        for (std::size_t a = 0; a < 2; ++a) {
            coordinates[a] = writer_.newRegister(PtxType::B32);
            writer_.instruction(
                fmt::format("cvt.u32.u64 {}, {}", coordinates[a],
                            writer_.emitIndex(a == 0 ? c.inner : c.outer, bindings())));
        }
        constexpr char kCopy[] =
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes";
        if (c.multicastRows == 0) {
            writer_.instruction(fmt::format("@{} {} [{}], [{}, {{{}, {}}}], [{}]", p, kCopy,
                                            destination, map, coordinates[0], coordinates[1],
                                            full));
            continue;
        }
        // This workgroup's rows of the box, into the same place of every workgroup's copy.
        std::string const rank = clusterRank(), mask = writer_.newRegister(PtxType::B16);
        writer_.instruction(
            fmt::format("mad.lo.u32 {0}, {1}, {2}, {0}", coordinates[1], rank, c.multicastRows));
        writer_.instruction(
            fmt::format("mad.lo.u32 {0}, {1}, {2}, {0}", destination, rank, c.multicastRows * 128));
        writer_.instruction(
            fmt::format("mov.b16 {}, {}", mask, (1 << clusterShape(options_.schedule).size()) - 1));
        writer_.instruction(
            fmt::format("@{} {}.multicast::cluster [{}], [{}, {{{}, {}}}], [{}], {}", p, kCopy,
                        destination, map, coordinates[0], coordinates[1], full, mask));
    }
    shifted_.clear();
    writer_.popScope();
}

// Waits until the phase of parity `phase` of the mbarrier at `barrier` has completed. With
// `polls`, a wait that has not completed after that many polls traps: a pipeline whose phases
// never complete is a bug, and the launch fails instead of holding the GPU.
void PtxCodegen::waitOnMbarrier(std::string const& barrier, std::string const& phase,
                                std::int64_t polls) {
    std::string const wait = writer_.newLabel("wait"), ready = writer_.newRegister(PtxType::Pred);
    std::string count;
    if (polls > 0) {
        count = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("mov.u32 {}, 0", count));
    }
    writer_.label(wait);
    writer_.instruction(fmt::format("mbarrier.try_wait.parity.shared::cta.b64 {}, [{}], {}", ready,
                                    barrier, phase));
    if (polls <= 0) {
        writer_.instruction(fmt::format("@!{} bra {}", ready, wait));
        return;
    }
    std::string const done = writer_.newLabel("waited"), more = writer_.newRegister(PtxType::Pred);
    writer_.instruction(fmt::format("@{} bra {}", ready, done));
    writer_.instruction(fmt::format("add.u32 {0}, {0}, 1", count));
    writer_.instruction(fmt::format("setp.lt.u32 {}, {}, {}", more, count, polls));
    writer_.instruction(fmt::format("@{} bra {}", more, wait));
    writer_.instruction("trap");
    writer_.label(done);
}

// On to the next copy of shared memory at `data` (and its mbarriers), round the ring of
// `pl.stages` copies from `first`; where it wraps, `phase` (if any) flips.
void PtxCodegen::nextCopy(Pipeline const& pl, std::string const& first, std::string const& data,
                          std::vector<std::pair<std::string, std::string>> const& barriers,
                          std::string const& phase) {
    std::string const wrapped = writer_.newRegister(PtxType::Pred);
    std::string const end = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("add.u32 {}, {}, {}", end, first, pl.stages * pl.stageBytes));
    writer_.instruction(fmt::format("add.u32 {0}, {0}, {1}", data, pl.stageBytes));
    writer_.instruction(fmt::format("setp.eq.u32 {}, {}, {}", wrapped, data, end));
    writer_.instruction(fmt::format("selp.b32 {0}, {1}, {0}, {2}", data, first, wrapped));
    for (auto const& [barrier, firstBarrier] : barriers) {
        writer_.instruction(fmt::format("add.u32 {0}, {0}, 8", barrier));
        writer_.instruction(
            fmt::format("selp.b32 {0}, {1}, {0}, {2}", barrier, firstBarrier, wrapped));
    }
    if (!phase.empty())
        writer_.instruction(fmt::format("@{0} xor.b32 {1}, {1}, 1", wrapped, phase));
}

void PtxCodegen::emitTmaPipeline(Pipeline const& pl) {
    if (!arch_.has(arch::Capability::HasTMA) || !arch_.has(arch::Capability::HasWGMMA))
        throw UserError(fmt::format("TMA=1 loads the tiles wgmma reads with the copy engine, "
                                    "which {} does not have with wgmma (sm_90a does)",
                                    options_.target));
    bool const specialized = warpSpecialized();
    // After the copies, one mbarrier (8 bytes) per copy: its tiles have landed ("full"); with
    // warp specialization one more: the consumers are done with it ("empty").
    std::int64_t const barriers = pl.stages * pl.stageBytes;
    sharedBytes_ = static_cast<std::size_t>(barriers + 8 * pl.stages * (specialized ? 2 : 1));
    requireShared(1, static_cast<std::int64_t>(sharedBytes_));
    if (persistentTiles(options_.schedule) && !carried_ && !hoisting_)
        throw UserError(fmt::format("PERSISTENT=1 with TMA=1 carries the K loop's pipeline from "
                                    "tile to tile; the loop (operation #{}) must be in the "
                                    "kernel's body, not inside another operation",
                                    pl.op));
    if (specialized)
        return emitWarpSpecializedPipeline(pl);
    if (carried_)
        return emitCarriedTmaPipeline(pl);
    std::string const first = sharedBase_;
    bool const overlap = pl.stages >= 3;
    std::int64_t const lead = overlap ? pl.stages - 2 : pl.stages - 1;
    warpgroupsInFlight_ = overlap ? 1 : 0;
    auto offset = [&](std::int64_t bytes) {
        std::string const r = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", r, first, bytes));
        return r;
    };
    ExprPtr const elected = binary(BinaryOp::Equal, linearWorkitem(shape_), literal(0));
    std::string const issuer = writer_.emit(elected, DataType::Bool, bindings());
    for (std::int64_t s = 0; s < pl.stages; ++s)
        writer_.instruction(fmt::format("@{} mbarrier.init.shared::cta.b64 [{}], 1", issuer,
                                        offset(barriers + 8 * s)));
    mbarriersInitialized();
    if (hoisting_) { // PERSISTENT=1: the ring the tiles' pipelines carry on (PtxPersistent.cpp)
        carried_ = Ring{.data = offset(0),
                        .firstFull = offset(barriers),
                        .full = offset(barriers),
                        .phase = writer_.newRegister(PtxType::B32)};
        writer_.instruction(fmt::format("mov.u32 {}, 0", carried_->phase));
        warpgroupsInFlight_ = 0;
        return;
    }

    for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
        operation(init);
    for (std::int64_t s = 0; s < lead; ++s)
        produceTma(pl, s, offset(s * pl.stageBytes), offset(barriers + 8 * s), elected);
    std::string const read = offset(0), write = offset(lead * pl.stageBytes),
                      firstFull = offset(barriers), readFull = offset(barriers),
                      writeFull = offset(barriers + 8 * lead),
                      phase = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.u32 {}, 0", phase));
    std::string const top = writer_.newLabel("loop"), done = writer_.newLabel("done");
    writer_.label(top);
    writer_.pushScope();
    std::string const p = writer_.emit(pl.o.expression, DataType::Bool, bindings());
    writer_.instruction(fmt::format("@!{} bra {}", p, done));
    // Every warp is done with the copy the producer overwrites: consume(i - 1) (without a group
    // in flight) or consume(i - 2) (whose wgmmas each warp waited for in consume(i - 1)); in a
    // cluster, every warp of every workgroup the copies multicast into.
    stageBarrier();
    produceTma(pl, lead, write, writeFull, elected);
    waitOnMbarrier(readFull, phase);
    sharedBase_ = read;
    list(pl.consumer);
    sharedBase_ = first;
    operation(pl.increment);
    // On to the next copy and its mbarrier; reading copy 0 again, the next phase.
    nextCopy(pl, first, read, {{readFull, firstFull}}, phase);
    nextCopy(pl, first, write, {{writeFull, firstFull}}, "");
    writer_.popScope();
    writer_.instruction(fmt::format("bra.uni {}", top));
    writer_.label(done);
    if (overlap)
        writer_.instruction("wgmma.wait_group.sync.aligned 0");
    warpgroupsInFlight_ = 0;
}

// WARP_SPECIALIZE=1: a producer warpgroup after the graph's warps issues every copy; the
// graph's warps (the consumers) only wait, multiply and store:
//
//     init full[s] (1 arrival) and empty[s] (one per consumer warp); fence; barrier
//     producer warpgroup: setmaxnreg.dec; its first warp loops i: wait on empty[i % S] (parity
//         starting at 1, so that the first round passes), one workitem: expect_tx and the copies
//     consumers: setmaxnreg.inc; loop i: wait on full[i % S]; multiply (one wgmma group stays in
//         flight); lane 0 of each warp arrives on empty[(i - 1) % S], whose wgmmas are done
//
// No barrier of the whole workgroup in the loop: the producer runs as far ahead as the copies
// allow. Its waits trap after kMbarrierPolls polls (seconds; a correct wait takes microseconds):
// not yet run on a GPU, a pipeline that deadlocks fails its launch instead of holding the GPU.
// Barriers after the split count only the consumers (bar.sync 1, consumers); the producers jump to
// the kernel's end.
void PtxCodegen::emitWarpSpecializedPipeline(Pipeline const& pl) {
    if (carried_)
        return consumeCarriedTile(pl);
    if (!shape_.workitems[2] || shape_.block[0] * shape_.block[1] != 32 || shape_.block[2] % 4 != 0)
        throw UserError(fmt::format("WARP_SPECIALIZE=1 adds a warpgroup to workgroups whose "
                                    "warps run along z ({} x {} x {} workitems are not; schedule "
                                    "{})",
                                    shape_.block[0], shape_.block[1], shape_.block[2],
                                    scheduleText(options_.schedule)));
    std::int64_t const consumerWarps = shape_.block[2];
    // PINGPONG=1 (PtxPingpong.cpp): the graph's warps twice, each its own tiles; the producer
    // warpgroup after both.
    bool const turns = pingpong();
    if (turns && (consumerWarps != 4 || !hoisting_))
        throw UserError(fmt::format("PINGPONG=1 gives each of two consumer warpgroups whole tiles "
                                    "of a persistent loop; this tile's Multiply is for {} warps, "
                                    "not one warpgroup (4): use MT_M=64 with WT_M=16 (schedule "
                                    "{})",
                                    consumerWarps, scheduleText(options_.schedule)));
    std::int64_t const producerWarp = consumerWarps * (turns ? 2 : 1);
    std::string const first = sharedBase_;
    std::int64_t const barriers = pl.stages * pl.stageBytes, empties = barriers + 8 * pl.stages;
    auto offset = [&](std::int64_t bytes) {
        std::string const r = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", r, first, bytes));
        return r;
    };
    ExprPtr const linear = linearWorkitem(shape_);
    std::string const initializer =
        writer_.emit(binary(BinaryOp::Equal, linear, literal(0)), DataType::Bool, bindings());
    for (std::int64_t s = 0; s < pl.stages; ++s) {
        writer_.instruction(fmt::format("@{} mbarrier.init.shared::cta.b64 [{}], 1", initializer,
                                        offset(barriers + 8 * s)));
        // Clusters: the consumer warps of every workgroup the copies multicast into; PINGPONG:
        // those of the one consumer warpgroup that read the slice.
        writer_.instruction(fmt::format("@{} mbarrier.init.shared::cta.b64 [{}], {}", initializer,
                                        offset(empties + 8 * s),
                                        consumerWarps * clusterShape(options_.schedule).size()));
    }
    mbarriersInitialized();
    exitLabel_ = writer_.newLabel("exit");
    // Clusters: the producers leave through a barrier of the cluster of their own (leaveCluster).
    std::string const leave = clustered() ? writer_.newLabel("leave") : exitLabel_;
    std::string const consumers = writer_.newLabel("consumers");
    writer_.instruction(
        fmt::format("@!{} bra {}",
                    writer_.emit(binary(BinaryOp::GreaterEqual, index(*shape_.workitems[2]),
                                        literal(producerWarp)),
                                 DataType::Bool, bindings()),
                    consumers));

    // The producer warpgroup; its first workitem issues.
    writer_.instruction(fmt::format("setmaxnreg.dec.sync.aligned.u32 {}", kProducerRegisters));
    // One warp of them loops (its first workitem issues); the other three have nothing to do and
    // leave at once, rather than spin on the mbarriers beside the consumers.
    writer_.instruction(fmt::format(
        "@!{} bra {}",
        writer_.emit(binary(BinaryOp::Equal, index(*shape_.workitems[2]), literal(producerWarp)),
                     DataType::Bool, bindings()),
        leave));
    {
        writer_.pushScope();
        ExprPtr const issuer = binary(BinaryOp::Equal, linear, literal(producerWarp * 32));
        auto initializeCounter = [&] {
            for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
                if (graph_.mapping.get(init, role::dest) == pl.counter)
                    operation(init);
        };
        if (!hoisting_)
            initializeCounter();
        Ring const ring{.data = offset(0),
                        .firstFull = offset(barriers),
                        .firstEmpty = offset(empties),
                        .full = offset(barriers),
                        .empty = offset(empties),
                        .phase = writer_.newRegister(PtxType::B32)};
        writer_.instruction(fmt::format("mov.u32 {}, 1", ring.phase));
        if (hoisting_) {
            // PERSISTENT=1: every tile's slices, in the consumers' order of tiles; the ring and
            // its phase go on from tile to tile, so the next tile's slices load while the
            // consumers store the last one's result.
            forEachTile([&] {
                initializeCounter();
                produceSlices(pl, ring, issuer);
            });
        } else {
            produceSlices(pl, ring, issuer);
        }
        writer_.instruction(fmt::format("bra.uni {}", leave));
        writer_.popScope();
    }
    if (clustered()) {
        writer_.label(leave);
        leaveCluster();
    }

    // The consumers: the graph's warps.
    writer_.label(consumers);
    // What the producers gave up, shared among the consumers (a multiple of 8, at most 256).
    // setmaxnreg.inc waits until the workgroup's pool holds what it asks, so the consumers may
    // ask only what the workgroup was given at its entry less what the producers keep: ptxas
    // gives each workitem all that MIN_BLOCKS workgroups (.minnctapersm, 1 by default) leave
    // it of a multiprocessor's registers, in multiples of 8, at most 255. Asking for the whole
    // register file instead deadlocked the 256-row tiles: 640 workitems enter with 96
    // registers, so the consumers get 104, not 112.
    std::int64_t const file = arch_.fact("registers_per_multiprocessor").value_or(65536);
    std::int64_t const workitems = (producerWarp + 4) * 32;
    auto const minBlocks = options_.schedule.find("MIN_BLOCKS");
    std::int64_t const resident =
        minBlocks != options_.schedule.end() ? std::max<std::int64_t>(minBlocks->second, 1) : 1;
    std::int64_t const entry = std::min<std::int64_t>(255, file / (workitems * resident) / 8 * 8);
    std::int64_t const consumerRegisters = std::min<std::int64_t>(
        256, (entry * workitems - 128 * kProducerRegisters) / (producerWarp * 32) / 8 * 8);
    writer_.instruction(fmt::format("setmaxnreg.inc.sync.aligned.u32 {}", consumerRegisters));
    producerWarps_ = 4;
    consumerThreads_ = consumerWarps * 32;
    if (turns) {
        secondConsumerWarps_ = consumerWarps;
        becomeConsumer(consumerWarps);
    }
    if (hoisting_) { // PERSISTENT=1: the ring each tile's consumers carry on (consumeCarriedTile)
        carried_ = Ring{.data = offset(0),
                        .firstFull = offset(barriers),
                        .firstEmpty = offset(empties),
                        .full = offset(barriers),
                        .empty = offset(empties),
                        .previous = offset(empties),
                        .phase = writer_.newRegister(PtxType::B32)};
        writer_.instruction(fmt::format("mov.u32 {}, 0", carried_->phase));
        if (turns) { // consumer c starts at tile c's first slice, steps over two tiles' slices
            std::string const slices = slicesPerTile(pl);
            carried_->count = writer_.newRegister(PtxType::B32);
            pingpong_->slicesTwice = writer_.newRegister(PtxType::B32);
            writer_.instruction(
                fmt::format("mul.lo.u32 {}, {}, {}", carried_->count, pingpong_->consumer, slices));
            writer_.instruction(fmt::format("shl.b32 {}, {}, 1", pingpong_->slicesTwice, slices));
        }
        return;
    }
    warpgroupsInFlight_ = 1;
    for (Id init : graph_.successors(pl.op, ControlEdgeKind::Initialize))
        operation(init);
    Ring const ring{.data = offset(0),
                    .firstFull = offset(barriers),
                    .firstEmpty = offset(empties),
                    .full = offset(barriers),
                    .empty = offset(empties),
                    .previous = offset(empties),
                    .phase = writer_.newRegister(PtxType::B32)};
    writer_.instruction(fmt::format("mov.u32 {}, 0", ring.phase));
    consumeSlices(pl, ring);
    writer_.instruction("wgmma.wait_group.sync.aligned 0");
    warpgroupsInFlight_ = 0;
}

// The producer's loop over the K slices: each waits until the consumers are done with the copy
// at ring.data (its empty mbarrier, parity ring.phase), issues its copies and goes on to the next
// copy round the ring.
void PtxCodegen::produceSlices(Pipeline const& pl, Ring const& ring, ExprPtr const& issuer) {
    std::string const top = writer_.newLabel("produce"), done = writer_.newLabel("produced");
    writer_.label(top);
    writer_.pushScope();
    std::string const p = writer_.emit(pl.o.expression, DataType::Bool, bindings());
    writer_.instruction(fmt::format("@!{} bra {}", p, done));
    waitOnMbarrier(ring.empty, ring.phase, kMbarrierPolls);
    produceTma(pl, 0, ring.data, ring.full, issuer);
    operation(pl.increment);
    nextCopy(pl, sharedBase_, ring.data,
             {{ring.full, ring.firstFull}, {ring.empty, ring.firstEmpty}}, ring.phase);
    writer_.popScope();
    writer_.instruction(fmt::format("bra.uni {}", top));
    writer_.label(done);
}

// The consumers' loop over the K slices: each waits until its copy has landed (the full mbarrier,
// parity ring.phase), multiplies, and releases the copy of the slice before (ring.previous: its
// wgmmas are done), whose empty mbarrier each consumer warp arrives on once.
void PtxCodegen::consumeSlices(Pipeline const& pl, Ring const& ring) {
    std::string const first = sharedBase_;
    std::string const top = writer_.newLabel("loop"), done = writer_.newLabel("done");
    writer_.label(top);
    writer_.pushScope();
    std::string const p = writer_.emit(pl.o.expression, DataType::Bool, bindings());
    writer_.instruction(fmt::format("@!{} bra {}", p, done));
    waitOnMbarrier(ring.full, ring.phase, kMbarrierPolls);
    sharedBase_ = ring.data;
    list(pl.consumer);
    sharedBase_ = first;
    // consume(i - 1)'s wgmmas are done (consume(i) waited for all but its own group): its copy
    // is free for the producer.
    releaseCopy(writer_.emit(releasesPrevious(pl), DataType::Bool, bindings()), ring.previous);
    writer_.instruction(fmt::format("mov.u32 {}, {}", ring.previous, ring.empty));
    operation(pl.increment);
    nextCopy(pl, first, ring.data, {{ring.full, ring.firstFull}, {ring.empty, ring.firstEmpty}},
             ring.phase);
    writer_.popScope();
    writer_.instruction(fmt::format("bra.uni {}", top));
    writer_.label(done);
}

// Where a consumer warp releases the previous slice's copy: past the first slice, on its lane 0.
ExprPtr PtxCodegen::releasesPrevious(Pipeline const& pl) const {
    return binary(BinaryOp::LogicalAnd, binary(BinaryOp::Greater, index(pl.counter), literal(0)),
                  binary(BinaryOp::Equal, linearWorkitem(shape_) % literal(32), literal(0)));
}

} // namespace kiln::lowering::detail
