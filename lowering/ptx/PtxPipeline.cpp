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
#include "PtxCodegen.h"
#include "kiln/graph/Bindings.h"
#include "kiln/graph/Evaluate.h"

namespace kiln::lowering::detail {

std::optional<bool> PtxCodegen::holdAtKnownSizes(std::vector<ExprPtr> const& conditions) const {
    if (options_.sizes.empty())
        return std::nullopt;
    Bindings known;
    known.sizes = options_.sizes;
    BindingsEnvironment const environment(known);
    try {
        for (ExprPtr const& c : conditions)
            if (!evaluate(*c, environment).asBool())
                return false;
    } catch (UserError const&) {
        return std::nullopt; // a condition on something other than the sizes given
    }
    return true;
}

bool PtxCodegen::pipelinedLoop(Id op, Operation const& o) {
    auto const stagesIt = options_.schedule.find("STAGES");
    if (!arch_.has(arch::Capability::HasCpAsync) || stagesIt == options_.schedule.end() ||
        stagesIt->second < 2)
        return false;
    std::int64_t const stages = stagesIt->second;
    auto const steps = graph_.successors(op, ControlEdgeKind::ForLoopIncrement);
    if (steps.size() != 1)
        return false;
    auto const& step = graph_.control.node(steps[0]);
    Id const counter = graph_.mapping.get(steps[0], role::dest);
    if (step.kind != OperationKind::Assign ||
        IndexFacts::difference(step.expression, index(counter)) != std::int64_t{1})
        return false;

    auto const body = graph_.sequence(op, ControlEdgeKind::Body);
    std::set<Id> staged;
    for (Id b : body)
        if (graph_.control.node(b).kind == OperationKind::StoreShared)
            staged.insert(graph_.mapping.get(b, role::source));
    if (staged.empty())
        return false;
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
            return false;
        }
    }

    // STAGES copies of everything staged, each 128-byte aligned (1024 where wgmma reads
    // swizzled tiles).
    std::int64_t const align = shared_.swizzles.empty() ? 128 : 1024;
    std::int64_t const stageBytes =
        static_cast<std::int64_t>((shared_.bytes + align - 1) / align * align);
    requireShared(stages, stageBytes);
    sharedBytes_ = static_cast<std::size_t>(stageBytes * stages);
    Pipeline const pipeline{op, o, counter, steps[0], stages, stageBytes, producer, consumer};

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
            if (std::string const text = toString(c);
                std::find(assumptions_.begin(), assumptions_.end(), text) == assumptions_.end())
                assumptions_.push_back(text);
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

} // namespace kiln::lowering::detail
