// What the workitems of a workgroup do together: stage a tile through shared memory and
// multiply staged tiles.
//
// A tile that belongs to a whole workgroup (distributed over workgroups only) is not copied
// into every workitem's registers. Its StoreShared is cooperative: the walker deals the
// workgroup's elements out to the workitems in runs of consecutive elements (running along the
// axis contiguous in the tensor); each run is read from global memory in vector accesses where
// it is consecutive there (cp.async where the target has it), and written to its Shared slots. Its
// LoadShared makes a view: readers load the elements they need from shared memory. A Multiply
// into a value each workitem holds (a register tile) runs the contraction fully unrolled: at
// each K index, a workitem reads the operand elements of its rows and columns (vector loads
// where they are consecutive in shared memory) and accumulates every product with an fma.
#include "Contraction.h"
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

// Every Shared dimension gets a 16-byte aligned place in one kiln_shared array; rows of 16-bit
// tiles that would meet in the same banks are padded.
void PtxCodegen::layOutShared() {
    shared_ = sharedLayout(graph_, /*padRows=*/true, swizzled_);
    sharedBytes_ = shared_.bytes;
    if (sharedBytes_ == 0)
        return;
    requireShared(1, static_cast<std::int64_t>(sharedBytes_));
    sharedBase_ = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.u32 {}, kiln_shared", sharedBase_));
}

// Before any code is written for it: a schedule that needs more shared memory than the target
// has is refused at once (staging a huge tile element by element would take minutes first), as
// withinLimits would refuse the finished kernel; `copies` x `each` bytes may pass int64.
void PtxCodegen::requireShared(std::int64_t copies, std::int64_t each) {
    std::int64_t const most = arch_.fact("shared_bytes").value_or(49152);
    std::int64_t needed = 0;
    bool const overflows = __builtin_mul_overflow(copies, each, &needed);
    if (!overflows && needed <= most)
        return;
    throw UserError(fmt::format(
        "the workgroup needs {} bytes of shared memory; {} has at most {} (shared_bytes), "
        "schedule {}",
        overflows ? fmt::format("{} x {}", copies, each) : std::to_string(needed), options_.target,
        most, scheduleText(options_.schedule)));
}

std::string PtxCodegen::sharedAddress(Id shared, ExprPtr const& index, SharedBases& bases) {
    DataType const type = graph_.coordinates.node(shared).dtype.value_or(DataType::F32);
    ExprPtr const place = facts_.reduce(shared_.place(shared, index));
    if (auto const near = nearbyBase(bases, place))
        return near->second == 0
                   ? near->first
                   : fmt::format("{}{:+}", near->first, near->second * sizeInBytes(type));
    ExprPtr const bytes = simplify(place * literal(sizeInBytes(type)) +
                                   literal(static_cast<std::int64_t>(shared_.offsets.at(shared))));
    std::string const wide = writer_.emitIndex(bytes, bindings());
    std::string const narrow = writer_.newRegister(PtxType::B32),
                      address = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("cvt.u32.u64 {}, {}", narrow, wide));
    writer_.instruction(fmt::format("add.u32 {}, {}, {}", address, sharedBase_, narrow));
    bases.emplace_back(place, address);
    return address;
}

// The elements of `shared` at each of `at` (indices from which its own index is solved), as
// registers of `type`; consecutive, aligned elements are read in one vector access.
std::vector<std::string> PtxCodegen::readShared(Id shared,
                                                std::vector<std::map<Id, ExprPtr>> const& at,
                                                DataType type, SharedBases& bases) {
    DataType const stored = graph_.coordinates.node(shared).dtype.value_or(DataType::F32);
    std::vector<ExprPtr> const offsets = sharedIndices(shared, at);
    Held run;
    run.type = type;
    for (std::size_t i = 0; i < at.size(); ++i)
        run.registers.push_back(writer_.newRegister(registerType(type)));
    std::size_t const widest = static_cast<std::size_t>(16 / sizeInBytes(stored));
    for (std::size_t start = 0; start < offsets.size();) {
        std::size_t const width =
            sharedReadWidth(offsets, start, widest, sizeInBytes(stored), /*minBytes=*/0);
        std::string const address = sharedAddress(shared, offsets[start], bases);
        if (width > 1) {
            vector(run, start, width, stored, address, /*isLoad=*/true, ".shared");
        } else {
            std::string const raw =
                writer_.newRegister(isHalf(stored) ? PtxType::B16 : registerType(stored));
            writer_.instruction(
                fmt::format("ld.shared{} {}, [{}]", memoryType(stored), raw, address));
            std::string value = raw;
            if (isHalf(stored)) {
                value = writer_.newRegister(PtxType::F32);
                widen(value, raw, stored);
            }
            writer_.instruction(fmt::format("mov{} {}, {}", ptxName(registerType(type)),
                                            run.registers[start],
                                            writer_.convert(value, stored, type)));
        }
        start += width;
    }
    return run.registers;
}

// One workitem's run: read from the tensor in a vector access where it is consecutive there,
// and written to its Shared slots.
void PtxCodegen::stageRun(Staging const& staging, StagedRun const& run, SharedBases& bases) {
    Id const shared = staging.shared, memory = staging.memory;
    DataType const stored = staging.stored, staged = staging.staged;
    std::int64_t const width = staging.width;
    auto const& places = run.places;
    auto const& tail = run.tail;
    std::vector<ExprPtr> offsets;
    std::vector<std::vector<ExprPtr>> conditions;
    for (auto const& k : run.at) {
        auto const global = solveIndices(graph_, k, {memory}, facts_);
        offsets.push_back(global.at(memory));
        conditions.push_back(tail);
        for (auto const& c : global.conditions)
            conditions.back().push_back(c);
    }
    PtxBindings const b = bindings();
    Held values;
    values.type = staged;
    for (std::int64_t v = 0; v < width; ++v)
        values.registers.push_back(writer_.newRegister(registerType(staged)));
    bool vectorized = width > 1;
    for (std::int64_t v = 1; v < width && vectorized; ++v) {
        auto const d = IndexFacts::difference(offsets[static_cast<std::size_t>(v)], offsets[0]);
        vectorized = d && *d == v;
    }
    std::string const address = globalAddress(memory, offsets[0], stored);
    // A run staged as it is stored, into consecutive, aligned slots, is copied as raw bytes:
    // asynchronously where the target has cp.async (waited for at the next barrier).
    bool raw = vectorized && staged == stored && width * sizeInBytes(stored) >= 4 &&
               facts_.powerOfTwoDivisor(facts_.reduce(shared_.place(shared, places[0]))) >= width;
    for (std::int64_t v = 1; v < width && raw; ++v)
        raw = IndexFacts::difference(places[static_cast<std::size_t>(v)], places[0]) == v;
    auto scalarLoads = [&] {
        for (std::size_t v = 0; v < static_cast<std::size_t>(width); ++v) {
            std::string const a = v == 0 ? address : globalAddress(memory, offsets[v], stored);
            std::string const value =
                loadScalar(a, stored, staged, writer_.emitConditions(conditions[v], b));
            writer_.instruction(fmt::format("mov{} {}, {}", ptxName(registerType(staged)),
                                            values.registers[v], value));
        }
    };
    auto scalarStores = [&] {
        std::string const guard = writer_.emitConditions(tail, b);
        for (std::size_t v = 0; v < static_cast<std::size_t>(width); ++v) {
            std::string const bits = storable(values.registers[v], staged, staged);
            writer_.instruction(
                fmt::format("{}st.shared{} [{}], {}", guard.empty() ? "" : "@" + guard + " ",
                            memoryType(staged), sharedAddress(shared, places[v], bases), bits));
        }
    };
    // The run moves whole when every element is inside the tensor and its start is aligned,
    // which a size known only at launch (a row length) may decide.
    auto const wholeRun = [&] {
        std::vector<ExprPtr> all;
        for (auto const& c : conditions)
            for (auto const& e : c)
                if (std::none_of(all.begin(), all.end(),
                                 [&](ExprPtr const& x) { return equal(x, e); }))
                    all.push_back(e);
        for (auto const& c : facts_.alignedWhen(offsets[0], width))
            all.push_back(c);
        return IndexFacts::strongest(all);
    };
    if (raw && branchFree_) {
        copyBranchFree(sharedAddress(shared, places[0], bases), address, offsets[0], width, stored,
                       conditions, tail);
        return;
    }
    if (raw) {
        auto const all = wholeRun();
        std::string const scalarPath = writer_.newLabel("scalar"),
                          done = writer_.newLabel("staged");
        // Before the branch: the scalar path reuses it for the run's other slots.
        std::string const to = sharedAddress(shared, places[0], bases);
        if (!all.empty())
            writer_.instruction(
                fmt::format("@!{} bra {}", writer_.emitConditions(all, b), scalarPath));
        copyToShared(to, address, width * sizeInBytes(stored));
        if (!all.empty()) {
            writer_.instruction(fmt::format("bra.uni {}", done));
            // Its own scope and its own shared addresses: what it computes does not exist
            // where the copy ran.
            writer_.label(scalarPath);
            writer_.pushScope();
            std::size_t const known = bases.size();
            if (!copyElementwise(to, address, width, stored, conditions, tail)) {
                scalarLoads();
                scalarStores();
            }
            bases.resize(known);
            writer_.popScope();
            writer_.label(done);
        }
        return;
    }
    if (!vectorized) {
        scalarLoads();
    } else {
        auto const all = wholeRun();
        std::string const scalarPath = writer_.newLabel("scalar"),
                          done = writer_.newLabel("staged");
        if (!all.empty())
            writer_.instruction(
                fmt::format("@!{} bra {}", writer_.emitConditions(all, b), scalarPath));
        vector(values, 0, static_cast<std::size_t>(width), stored, address, /*isLoad=*/true);
        if (!all.empty()) {
            writer_.instruction(fmt::format("bra.uni {}", done));
            writer_.label(scalarPath);
            writer_.pushScope();
            scalarLoads();
            writer_.popScope();
            writer_.label(done);
        }
    }
    // Into shared memory: zeros for the elements outside the tensor, so that a Multiply
    // over a ragged K sums nothing for them. A workitem without elements writes nothing.
    scalarStores();
}

// The conditions of a run's elements as one edge: those every element has (`common`, with
// `extra`; the tail left out) and `x + v < n` more for element v, or none (an element whose
// own condition the facts proved has none, and `x + v < n` holds for it). Nothing when the
// elements' conditions have another form.
std::optional<PtxCodegen::RunEdge>
PtxCodegen::runEdge(std::vector<std::vector<ExprPtr>> const& conditions,
                    std::vector<ExprPtr> const& tail, std::vector<ExprPtr> const& extra) {
    auto const isTail = [&](ExprPtr const& c) {
        return std::any_of(tail.begin(), tail.end(), [&](ExprPtr const& t) { return equal(t, c); });
    };
    RunEdge out{extra, std::nullopt};
    std::vector<ExprPtr>& common = out.common;
    for (auto const& c : conditions[0])
        if (!isTail(c) && std::all_of(conditions.begin(), conditions.end(), [&](auto const& of) {
                return std::any_of(of.begin(), of.end(),
                                   [&](ExprPtr const& x) { return equal(x, c); });
            }))
            common.push_back(c);
    auto& edge = out.edge; // x + 0 and n of element 0
    for (std::size_t v = 0; v < conditions.size(); ++v) {
        std::vector<ExprPtr> own;
        for (auto const& c : conditions[v])
            if (!isTail(c) && std::none_of(common.begin(), common.end(),
                                           [&](ExprPtr const& x) { return equal(x, c); }))
                own.push_back(c);
        if (own.empty())
            continue;
        auto const* less = std::get_if<expr::Binary>(own.front().get());
        if (own.size() != 1 || !less || less->op != BinaryOp::Less)
            return std::nullopt;
        if (!edge)
            edge = {simplify(less->lhs - literal(static_cast<std::int64_t>(v))), less->rhs};
        if (!equal(less->rhs, edge->second) ||
            IndexFacts::difference(less->lhs, edge->first) != static_cast<std::int64_t>(v))
            return std::nullopt;
    }
    return out;
}

// How many of a run's `width` elements lie inside the tensor: clamp(n - x, 0, width) on an
// edge, else all of them; none where a common condition fails.
std::string PtxCodegen::elementsInside(RunEdge const& edges, std::int64_t width,
                                       std::int64_t scale) {
    PtxBindings const b = bindings();
    std::string size = std::to_string(width * scale);
    if (edges.edge) { // the elements below n, one per edge in a scope
        ExprPtr const below =
            binary(BinaryOp::Min,
                   binary(BinaryOp::Max, edges.edge->second - edges.edge->first, literal(0)),
                   literal(width));
        size = writer_.emit(simplify(convert(DataType::I32, below * literal(scale))), DataType::I32,
                            b);
    }
    if (std::string const p = writer_.emitConditions(edges.common, b); !p.empty()) {
        std::string const guarded = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("selp.b32 {}, {}, 0, {}", guarded, size, p));
        size = guarded;
    }
    return size;
}

// `address` (a register, or a register and an immediate offset) `bytes` further on.
static std::string advanced(std::string const& address, std::int64_t bytes) {
    std::size_t const sign = address.find_first_of("+-", 1);
    if (sign == std::string::npos)
        return bytes == 0 ? address : fmt::format("{}{:+}", address, bytes);
    std::int64_t const total = std::stoll(address.substr(sign)) + bytes;
    std::string const reg = address.substr(0, sign);
    return total == 0 ? reg : fmt::format("{}{:+}", reg, total);
}

// A run copied element by element, as the bits it has (what cp.async would copy, where the
// run is not aligned): element v from `from` plus v elements, 0 outside the tensor, to `to`
// plus v elements, the slots the run's one copy writes (a raw run's slots are consecutive).
// One count of the elements inside (runEdge) guards every load instead of each element's
// index arithmetic and conditions; the stores keep the tail's guard. False (and nothing
// written) when the elements' conditions are not one edge.
bool PtxCodegen::copyElementwise(std::string const& to, std::string const& from, std::int64_t width,
                                 DataType stored,
                                 std::vector<std::vector<ExprPtr>> const& conditions,
                                 std::vector<ExprPtr> const& tail) {
    std::int64_t const size = sizeInBytes(stored);
    if (size != 2 && size != 4 && size != 8)
        return false;
    auto const edges = runEdge(conditions, tail, {});
    if (!edges)
        return false;
    PtxType const bitsType = size == 2 ? PtxType::B16 : size == 4 ? PtxType::B32 : PtxType::S64;
    std::string const bits = fmt::format(".b{}", size * 8);
    std::string const inside = elementsInside(*edges, width, 1);
    // A count known now (no condition left) guards nothing.
    bool const guarded = inside.starts_with('%');
    std::int64_t const counted = guarded ? width : std::stoll(inside);
    // Every load first, then every store, as the unrolled path had them: the loads are in
    // flight together.
    std::vector<std::string> values;
    for (std::int64_t v = 0; v < width; ++v) {
        std::string const value = values.emplace_back(writer_.newRegister(bitsType));
        std::string const load =
            fmt::format("ld.global{} {}, [{}]", bits, value, advanced(from, v * size));
        if (guarded) {
            std::string const p = writer_.newRegister(PtxType::Pred);
            writer_.instruction(fmt::format("setp.gt.s32 {}, {}, {}", p, inside, v));
            writer_.instruction(fmt::format("mov{} {}, 0", bits, value));
            writer_.instruction(fmt::format("@{} {}", p, load));
        } else {
            writer_.instruction(v < counted ? load : fmt::format("mov{} {}, 0", bits, value));
        }
    }
    std::string const present = writer_.emitConditions(tail, bindings());
    for (std::int64_t v = 0; v < width; ++v)
        writer_.instruction(
            fmt::format("{}st.shared{} [{}], {}", present.empty() ? "" : "@" + present + " ", bits,
                        advanced(to, v * size), values[static_cast<std::size_t>(v)]));
    return true;
}

// A run copied with one cp.async whatever lies outside the tensor: the copy reads only the
// run's elements that are inside (a prefix of it, the run going along the contiguous axis) and
// fills the rest with zeros. Alignment is assumed, as a condition on sizes the caller checks
// before it runs this code (assumed_); runs that need more than that set branchFreeFailed_.
// A workitem left without a run (`tail`, the last round of a tile that does not divide evenly)
// copies nothing: its slot lies outside the tile, and even zeros must not land there.
void PtxCodegen::copyBranchFree(std::string const& to, std::string const& from,
                                ExprPtr const& offset, std::int64_t width, DataType stored,
                                std::vector<std::vector<ExprPtr>> const& conditions,
                                std::vector<ExprPtr> const& tail) {
    std::int64_t const bytes = width * sizeInBytes(stored);
    for (auto const& c : facts_.alignedWhen(offset, width)) {
        if (evaluationTime(*c) > EvaluationTime::KernelLaunch) {
            branchFreeFailed_ = true;
            return;
        }
        if (std::none_of(assumed_.begin(), assumed_.end(),
                         [&](ExprPtr const& x) { return equal(x, c); }))
            assumed_.push_back(c);
    }
    auto const edges = runEdge(conditions, tail, producerConditions_);
    if (!edges) {
        branchFreeFailed_ = true;
        return;
    }
    std::string const size = elementsInside(*edges, width, sizeInBytes(stored));
    std::string const present = writer_.emitConditions(tail, bindings());
    writer_.instruction(fmt::format("{}cp.async.{}.shared.global [{}], [{}], {}, {}",
                                    present.empty() ? "" : "@" + present + " ",
                                    bytes == 16 ? "cg" : "ca", to, from, bytes, size));
    asyncPending_ = true;
}

// `bytes` (4, 8 or 16) from global `from` to shared `to`.
void PtxCodegen::copyToShared(std::string const& to, std::string const& from, std::int64_t bytes) {
    if (arch_.has(arch::Capability::HasCpAsync)) {
        writer_.instruction(fmt::format("cp.async.{}.shared.global [{}], [{}], {}",
                                        bytes == 16 ? "cg" : "ca", to, from, bytes));
        asyncPending_ = true;
        return;
    }
    std::vector<std::string> words;
    for (std::int64_t w = 0; w < bytes / 4; ++w)
        words.push_back(writer_.newRegister(PtxType::B32));
    std::string const list =
        words.size() == 1 ? words.front() : fmt::format("{{{}}}", fmt::join(words, ", "));
    std::string const vec = words.size() == 1 ? "" : fmt::format(".v{}", words.size());
    writer_.instruction(fmt::format("ld.global{}.b32 {}, [{}]", vec, list, from));
    writer_.instruction(fmt::format("st.shared{}.b32 [{}], {}", vec, to, list));
}

// A barrier; copies still in flight land first.
void PtxCodegen::barrier() {
    if (asyncPending_)
        writer_.instruction("cp.async.wait_all");
    asyncPending_ = false;
    fenceForWarpgroups();
    // After WARP_SPECIALIZE's split the producer warpgroup is gone: the consumers meet alone.
    consumerBarrier();
}

void PtxCodegen::clearAccumulators(Held& acc) {
    for (auto const& r : acc.registers)
        writer_.instruction(fmt::format("mov.f32 {}, 0f00000000", r));
}

// On warpgroups where the tiles wgmma reads are swizzled, else on the tensor cores, where the
// accumulators are mma.sync's fragments. A run that only plans (findWarpgroupTiles) writes no
// multiply at all.
bool PtxCodegen::multiplyOnMatrixUnits(Contraction const& c, Held& acc) {
    if (auto const plan = tensorCorePlan(c, acc)) {
        if (auto const wg = warpgroupPlan(*plan, c, acc)) {
            warpgroupTiles_.insert(wg->tiles.begin(), wg->tiles.end());
            if (discovering_)
                return true;
            if (std::includes(swizzled_.begin(), swizzled_.end(), wg->tiles.begin(),
                              wg->tiles.end())) {
                multiplyOnWarpgroups(*wg, *plan, c, acc);
                return true;
            }
        }
        if (!discovering_)
            multiplyOnTensorCores(*plan, c, acc);
        return true;
    }
    return discovering_;
}

std::vector<std::string> PtxCodegen::readOperand(Id view, Id operand,
                                                 std::vector<std::map<Id, ExprPtr>> const& at,
                                                 SharedBases& bases) {
    if (graph_.control.node(view).kind == OperationKind::LoadShared)
        return readShared(graph_.mapping.get(view, role::source), at, DataType::F32, bases);
    std::vector<std::string> out;
    for (auto const& k : at)
        out.push_back(readInPlace(view, operand, k, {}));
    return out;
}

void PtxCodegen::fma(std::string const& acc, std::string const& a, std::string const& b) {
    writer_.instruction(fmt::format("fma.rn.f32 {0}, {1}, {2}, {0}", acc, a, b));
}

} // namespace kiln::lowering::detail
