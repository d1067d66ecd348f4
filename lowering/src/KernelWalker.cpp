// The walk every code generator shares: see KernelWalker.h. The target writes the instructions
// through the emitter interface; everything here decides what to write and in which order.
#include "KernelWalker.h"

#include "OperationOrder.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Distribution.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/UnrolledLoop.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace kiln::lowering::detail {

template <class Register>
KernelWalker<Register>::KernelWalker(KernelGraph const& graph, CodegenOptions const& options,
                                     std::string_view notWritten)
    : graph_(graph)
    , options_(options)
    , facts_(graph)
    , shape_(launchShape(graph))
    , notWritten_(notWritten) {
    online_ = onlineStatistics(graph, options);
}

template <class Register>
void KernelWalker<Register>::list(std::vector<Id> const& sequence) {
    auto const ops = sinkLoads(graph_, sequence, [this](Id d) { return holdable(d); });
    for (std::size_t i = 0; i < ops.size(); ++i) {
        // A product that is added to an accumulator right away goes straight into it: the
        // adds fuse into the fmas, and the product needs no registers of its own.
        if (i + 1 < ops.size()) {
            if (Id const into = accumulator(ops[i], ops[i + 1])) {
                multiply(ops[i], graph_.control.node(ops[i]), into);
                ++i;
                continue;
            }
        }
        if (auto const run = elementwiseRun(ops, i)) {
            elementwiseChunks(*run);
            forgetPreloads();
            i += run->ops.size() - 1;
            continue;
        }
        if (graph_.control.node(ops[i]).kind == OperationKind::ForLoop && !planningOnly())
            if (auto const run = elementwiseRun(ops, i + 1))
                preloadRun(ops[i], *run);
        operation(ops[i]);
    }
}

template <class Register>
void KernelWalker<Register>::operation(Id op) {
    auto const& o = graph_.control.node(op);
    naming(op, o.kind, [&] {
        switch (o.kind) {
        case OperationKind::Kernel:
        case OperationKind::Nop:
            return;
        case OperationKind::Barrier:
            return barrier();
        case OperationKind::ForLoop:
            return loop(op, o);
        case OperationKind::If:
            return branch(op, o);
        case OperationKind::LoadLinear:
        case OperationKind::LoadTiled:
            load(op);
            break;
        case OperationKind::StoreLinear:
        case OperationKind::StoreTiled:
            if (planningOnly())
                return;
            store(op);
            break;
        case OperationKind::Assign:
            assign(op, o);
            break;
        case OperationKind::Reduce:
            reduce(op, o);
            break;
        case OperationKind::StoreShared:
            if (planningOnly())
                return;
            storeShared(op);
            break;
        case OperationKind::LoadShared:
            loadShared(op);
            break;
        case OperationKind::Multiply:
            multiply(op, o);
            break;
        default:
            throw UserError(fmt::format("{}code generation for {} is not written yet", notWritten_,
                                        name(o.kind)));
        }
        settle();
    });
}

namespace {

// Whether a body stages shared memory: the next iteration (or copy) overwrites what this one
// staged, so every workitem must be done reading it first.
bool storesShared(KernelGraph const& graph, std::vector<Id> const& body) {
    return std::any_of(body.begin(), body.end(), [&](Id b) {
        return graph.control.node(b).kind == OperationKind::StoreShared;
    });
}

} // namespace

template <class Register>
void KernelWalker<Register>::loop(Id op, Operation const& o) {
    if (graph_.coordinates.node(graph_.mapping.get(op, role::counter)).kind ==
        DimensionKind::Unroll)
        return unrolledLoop(op);
    if (pipelinedLoop(op, o))
        return;
    for (Id init : graph_.successors(op, ControlEdgeKind::Initialize))
        operation(init);
    LoopLabels const labels = beginLoop(o.expression);
    auto const body = graph_.sequence(op, ControlEdgeKind::Body);
    list(body);
    if (storesShared(graph_, body))
        barrier();
    for (Id step : graph_.successors(op, ControlEdgeKind::ForLoopIncrement))
        operation(step);
    endLoop(labels);
}

template <class Register>
void KernelWalker<Register>::unrolledLoop(Id op) {
    Id const counter = graph_.mapping.get(op, role::counter);
    auto const copies = unrolledCopies(graph_, op);
    for (Id init : graph_.successors(op, ControlEdgeKind::Initialize))
        operation(init);
    std::string const done = beginUnrolled();
    auto const body = graph_.sequence(op, ControlEdgeKind::Body);
    for (auto const& [value, condition] : copies) {
        beginCopy(counter, value, condition, done);
        list(body);
        if (storesShared(graph_, body))
            barrier();
        endCopy(counter);
    }
    endUnrolled(done);
}

template <class Register>
void KernelWalker<Register>::load(Id op) {
    Id const memory = graph_.mapping.get(op, role::source),
             dest = graph_.mapping.get(op, role::dest);
    if (graph_.coordinates.node(memory).kind != DimensionKind::User)
        throw UserError("a load from a dimension that is not a tensor is not written yet");
    if (!holdable(dest) || streamed(op, dest)) {
        views_[dest] = op; // read in place, element by element, where it is used
        return;
    }
    move(dest, hold(dest), memory, /*isLoad=*/true);
}

template <class Register>
void KernelWalker<Register>::store(Id op) {
    Id const source = graph_.mapping.get(op, role::source),
             memory = graph_.mapping.get(op, role::dest);
    if (graph_.coordinates.node(memory).kind != DimensionKind::User)
        throw UserError("a store to a dimension that is not a tensor is not written yet");
    if (rowAssigns_.contains(source))
        return storeRows(source, memory, roundedByItsStore(op));
    auto it = held_.find(source);
    if (it == held_.end())
        throw UserError(fmt::format("value#{} is stored but not held in registers (is it "
                                    "distributed over the grid?)",
                                    source));
    if (std::int64_t const columns = stagedBlockColumns(memory); columns > 0)
        return storeStaged(source, it->second, memory, columns);
    move(source, it->second, memory, /*isLoad=*/false);
}

template <class Register>
StagedTile KernelWalker<Register>::stagedTileOf(Id value, Held<Register> const& held, Id memory,
                                                std::int64_t blockColumns) const {
    return stagedTile(graph_, facts_, shape_, known(), axes(value), held.elements, memory,
                      blockColumns);
}

template <class Register>
void KernelWalker<Register>::storeStaged(Id value, Held<Register>& held, Id memory,
                                         std::int64_t blockColumns) {
    StagedTile const tile = stagedTileOf(value, held, memory, blockColumns);
    auto const blocks = tile.elementsOfBlocks();
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        beginStagedBlock(tile, b);
        writeStaged(tile, held, blocks[b], memory);
        endStagedBlock(tile, b, memory);
    }
}

template <class Register>
Held<Register> KernelWalker<Register>::partOf(Held<Register> const& held,
                                              std::vector<std::size_t> const& which) {
    Held<Register> part{{}, {}, held.type};
    for (std::size_t c : which) {
        part.elements.push_back(held.elements[c]);
        part.registers.push_back(held.registers[c]);
    }
    return part;
}

template <class Register>
void KernelWalker<Register>::loadShared(Id op) {
    Id const dest = graph_.mapping.get(op, role::dest);
    if (holdable(dest))
        throw UserError(fmt::format("LoadShared into registers (value#{}) is not written yet; "
                                    "only a workgroup's view of a staged tile is",
                                    dest));
    views_[dest] = op; // read from shared memory where it is used
}

// Each workitem takes `width` consecutive elements (up to 16 bytes, the last local index
// fastest) at a time, as many times as it takes to cover the tile.
template <class Register>
void KernelWalker<Register>::storeShared(Id op) {
    Id const source = graph_.mapping.get(op, role::source),
             shared = graph_.mapping.get(op, role::dest);
    if (graph_.coordinates.node(shared).kind != DimensionKind::Shared)
        throw UserError(
            fmt::format("StoreShared into #{}, which is not a Shared dimension", shared));
    auto const view = views_.find(source);
    if (view == views_.end() || graph_.control.node(view->second).kind == OperationKind::LoadShared)
        throw UserError(fmt::format("StoreShared of value#{}: only a workgroup's tile read from a "
                                    "tensor can be staged yet",
                                    source));
    Staging s{source, shared, graph_.mapping.get(view->second, role::source)};
    s.stored = tensorType(s.memory);
    s.staged = graph_.coordinates.node(shared).dtype.value_or(s.stored);
    Distribution dist = distributionOf(graph_, source);
    if (runsAlongContiguousAxis()) {
        auto offsetWith = [&](std::size_t one) {
            auto k = known();
            for (std::size_t i = 0; i < dist.locals.size(); ++i)
                k[dist.locals[i]] = literal(i == one ? 1 : 0);
            return solveIndices(graph_, k, {s.memory}, facts_).at(s.memory);
        };
        ExprPtr const origin = offsetWith(dist.locals.size());
        for (std::size_t i = 0; i + 1 < dist.locals.size(); ++i) {
            if (IndexFacts::difference(offsetWith(i), origin) == std::int64_t{1}) {
                std::rotate(dist.locals.begin() + static_cast<std::ptrdiff_t>(i),
                            dist.locals.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                            dist.locals.end());
                break;
            }
        }
    }
    std::vector<std::int64_t> sizes;
    std::int64_t count = 1;
    for (Id l : dist.locals) {
        sizes.push_back(constantSize(graph_, l, "the staged tile's local index"));
        count *= sizes.back();
    }
    s.width = 16 / sizeInBytes(s.stored);
    while (s.width > 1 && (sizes.empty() || sizes.back() % s.width != 0))
        s.width /= 2;
    std::int64_t const step = shape_.workgroupSize() * s.width;
    ExprPtr const first = simplify(linearWorkitem(shape_) * literal(s.width));
    SharedBases<Register> bases;
    for (std::int64_t base = 0; base < count; base += step) {
        StagedRun run;
        ExprPtr const element0 = simplify(first + literal(base));
        if (base + step > count) // the last round may leave workitems without elements
            run.tail.push_back(binary(BinaryOp::Less, element0, literal(count)));
        // The run's first element's local indices; the run varies only the last one, which
        // `width` divides.
        std::vector<ExprPtr> locals;
        std::int64_t below = count;
        for (std::int64_t size : sizes) {
            below /= size;
            locals.push_back(facts_.reduce(simplify((element0 / literal(below)) % literal(size))));
        }
        for (std::int64_t v = 0; v < s.width; ++v) {
            auto k = known();
            for (std::size_t i = 0; i < sizes.size(); ++i)
                k[dist.locals[i]] =
                    i + 1 == sizes.size() ? simplify(locals[i] + literal(v)) : locals[i];
            run.places.push_back(solveIndices(graph_, k, {shared}, facts_).at(shared));
            run.at.push_back(std::move(k));
        }
        stageRun(s, run, bases);
    }
}

template <class Register>
DataType KernelWalker<Register>::tensorType(Id user) const {
    auto const* arg = graph_.findArgument(graph_.coordinates.node(user).name);
    if (!arg || arg->kind != KernelArgument::Kind::Tensor)
        throw UserError(fmt::format("#{} names no tensor argument", user));
    return arg->dtype;
}

template <class Register>
void KernelWalker<Register>::assign(Id op, Operation const& o) {
    Id const dest = graph_.mapping.get(op, role::dest);
    if (!holdsData(graph_.coordinates.node(dest).kind)) // a loop counter or another index
        return assignIndex(dest, o.expression);
    if (rowChunked(dest)) { // computed where it is read (KernelWalkerRows.cpp)
        rowAssigns_[dest] = op;
        return;
    }
    if (!holdable(dest))
        throw UserError(fmt::format("#{} is not distributed over the grid with constant-size "
                                    "local indices, so no workitem can hold it",
                                    dest));
    Held<Register>& h = hold(dest);
    currentId_ = dest;
    ExprPtr const e = assigned(op, o);
    for (std::size_t c = 0; c < h.elements.size(); ++c)
        assignElement(h, c, e);
    precision_ = Precision::Exact;
}

template <class Register>
ExprPtr KernelWalker<Register>::assigned(Id op, Operation const& o) {
    precision_ = assignPrecision(graph_, op);
    return forPrecision(o.expression, precision_);
}

namespace {

// Rows of f16/bf16 reduced to f16/bf16 accumulate in f32 (as torch's sums do): its rounding,
// 2^-24 a term, is lost in the result's tolerance (1e-2), and its exchanges between lanes and
// workgroups move half the bytes. Other floating-point rows accumulate in f64: a long f32 sum
// drifts from the exact one by more than f32's tolerance, and the loop is bound by memory, not
// by the adds. Integers accumulate in their own type.
DataType accumulatorOf(DataType element, DataType dest) {
    auto const half = [](DataType t) { return t == DataType::F16 || t == DataType::BF16; };
    if (!isFloat(dest))
        return dest;
    return half(element) && half(dest) ? DataType::F32 : DataType::F64;
}

} // namespace

// Each element of the dest combines one row of the source (its last axis), read in place.
template <class Register>
void KernelWalker<Register>::reduce(Id op, Operation const& o) {
    if (pairedReduces_.contains(op)) // computed with its row's max or mean (ONLINE=1)
        return;
    Id const source = graph_.mapping.get(op, role::source),
             dest = graph_.mapping.get(op, role::dest);
    // The load that reads the source in place, or the Assign computing it where it is read.
    Id view = 0;
    if (auto const load = views_.find(source); load != views_.end())
        view = load->second;
    else if (auto const computed = rowAssigns_.find(source); computed != rowAssigns_.end())
        view = computed->second;
    else
        throw UserError(
            fmt::format("Reduce reads value#{}, which is not a tensor read in place", source));
    if (!holdable(dest))
        throw UserError(fmt::format(
            "the Reduce's dest #{} is not distributed over the grid (the reduction pipeline "
            "distributes a Reduce whose result is stored, and, with COOP=1, one whose result is "
            "used back along the rows of a stored row-major M x N value)",
            dest));
    auto const& shape = graph_.coordinates.node(source).shape;
    auto const sourceAxes = axes(source), destAxes = axes(dest);
    if (shape.empty() || sourceAxes.size() != destAxes.size() + 1)
        throw UserError(
            fmt::format("Reduce from #{} to #{}: the source needs one axis more", source, dest));
    Held<Register>& h = hold(dest);
    currentId_ = dest;
    DataType const element = graph_.coordinates.node(source).dtype.value_or(h.type);
    DataType const accumulator = accumulatorOf(element, h.type);
    Reduction r{source, view, sourceAxes, destAxes, shape.back(), element, accumulator, nullptr};
    // A mean is a sum that reduced() divides by the row's length.
    Operation summed = o;
    if (o.combine == Combine::Mean) {
        if (!isFloat(accumulator))
            throw UserError(fmt::format("a mean of {} is not defined", name(h.type)));
        summed.combine = Combine::Sum;
        r.divisor = shape.back();
    }
    if (auto const rows = cooperativeRows(graph_, shape_, sourceAxes.back())) {
        if (online_ && o.combine == Combine::Max)
            if (auto const p = findMaxExpSum(graph_, op)) {
                // Its sum too (KernelWalkerOnline.cpp), in the sum's accumulator: the max and
                // the rescaled sums are exchanged in one type.
                auto const type = [&](Id d) {
                    return graph_.coordinates.node(d).dtype.value_or(DataType::F32);
                };
                r.accumulator = accumulatorOf(type(p->exps), type(p->sum));
                return reduceOnline(*p, h, r, *rows);
            }
        if (online_ && o.combine == Combine::Mean)
            if (auto const p = findMeanVariance(graph_, op)) {
                // The variance too (KernelWalkerOnline.cpp), the two exchanged in f64.
                return reduceWelford(*p, h, r, *rows);
            }
        return reduceCooperatively(summed, h, r, *rows);
    }
    if (rowAssigns_.contains(source))
        throw UserError(fmt::format("a Reduce of value#{}, computed element by element, is "
                                    "written for rows that workitems share (COOP=1)",
                                    source));
    reduceRows(summed, h, r);
}

template <class Register>
void KernelWalker<Register>::reduced(Held<Register>& held, std::size_t c, Register const& acc,
                                     Reduction const& r) {
    if (!r.divisor)
        return setReduced(held, c, acc, r);
    KILN_ASSERT(r.accumulator == DataType::F64 || r.accumulator == DataType::F32, "a mean in {}",
                name(r.accumulator));
    auto const length = atKnownSizes(r.divisor);
    ExprPtr const quotient =
        simplify(leaf(acc, r.accumulator) /
                 convert(r.accumulator, length ? literal(length->asInt()) : r.divisor));
    Register const mean = materialize(quotient, r.accumulator, held.elements[c]);
    leaves_.erase(-static_cast<Id>(leaves_.size())); // the leaf of acc, the last one made
    Reduction divided = r;
    divided.divisor = nullptr;
    setReduced(held, c, mean, divided);
}

template <class Register>
Id KernelWalker<Register>::accumulator(Id op, Id next) {
    Id const sum = fusableAccumulator(graph_, op, next);
    if (!sum)
        return 0;
    Id const product = graph_.mapping.get(op, role::dest);
    auto const it = held_.find(sum);
    if (it == held_.end() || !holdable(product))
        return 0;
    auto const mine = elements(product);
    auto const& theirs = it->second.elements;
    if (mine.size() != theirs.size())
        return 0;
    for (std::size_t c = 0; c < mine.size(); ++c)
        if (!equal(mine[c].at(product), theirs[c].at(sum)))
            return 0;
    return sum;
}

// Into a register tile: on the matrix units where the target can, else the contraction fully
// unrolled over the staged K extent: at each K index a workitem reads the operand elements of
// its rows and of its columns and issues one fma per accumulator.
template <class Register>
void KernelWalker<Register>::multiply(Id op, Operation const& o, Id into) {
    Id const dest = graph_.mapping.get(op, role::dest);
    if (!holdable(dest))
        throw UserError(fmt::format("the Multiply's dest #{} is not split over workitems (add "
                                    "register tiles: gemm-thread-tiles)",
                                    dest));
    for (Id operand : {graph_.mapping.get(op, role::lhs), graph_.mapping.get(op, role::rhs)})
        if (!views_.contains(operand))
            throw UserError(fmt::format(
                "the Multiply reads value#{}, which is not a workgroup's tile", operand));
    Contraction const c = contractionOf(graph_, op, o);
    Held<Register>& acc = into ? held_.at(into) : hold(dest);
    currentId_ = into ? into : dest;
    if (!isFloat(acc.type) || acc.type == DataType::F64)
        throw UserError(fmt::format("a Multiply into {} is not written yet", name(acc.type)));
    if (!into)
        clearAccumulators(acc);
    if (multiplyOnMatrixUnits(c, acc))
        return;
    Distinct const rows = distinctAlong(acc.elements, c.destRow),
                   cols = distinctAlong(acc.elements, c.destCol);
    SharedBases<Register> bases;
    // Operand elements at K index p: from shared memory, or from the tensor (masked) when the
    // tile was not staged.
    auto read = [&](Id operand, Id along, Id kAxis, std::vector<ExprPtr> const& where,
                    std::int64_t p) {
        std::vector<std::map<Id, ExprPtr>> at;
        for (auto const& w : where) {
            auto k = known();
            k[along] = w;
            k[kAxis] = literal(p);
            at.push_back(std::move(k));
        }
        return readOperand(views_.at(operand), operand, at, bases);
    };
    for (std::int64_t p = 0; p < c.inner; ++p) {
        auto const a = read(c.lhs, c.rowAxis, c.lhsK, rows.values, p);
        auto const b = read(c.rhs, c.colAxis, c.rhsK, cols.values, p);
        for (std::size_t e = 0; e < acc.registers.size(); ++e)
            fma(acc.registers[e], a[rows.which[e]], b[cols.which[e]]);
        settle(); // the operands of this K index are done
    }
}

template <class Register>
std::int64_t KernelWalker<Register>::stagedBlockColumns(Id) const {
    return 0;
}

template <class Register>
bool KernelWalker<Register>::holdable(Id d) const {
    if (shape_.workgroupSize() > 1 && !distributionOf(graph_, d).overWorkitems)
        return false;
    return lowering::holdable(graph_, d);
}

template <class Register>
std::map<Id, ExprPtr> KernelWalker<Register>::known() const {
    std::map<Id, ExprPtr> k;
    for (auto const& [d, r] : indices_) {
        auto const shifted = shifted_.find(d);
        k.emplace(d, shifted != shifted_.end() ? shifted->second
                     : units_.contains(d)      ? literal(0) // one warp, one workgroup
                                               : index(d));
    }
    for (auto const& [d, constant] : shifted_) // a loop written out: its counter in each body
        k.emplace(d, constant);
    return k;
}

template <class Register>
std::vector<IndexSolution> KernelWalker<Register>::elements(Id d) const {
    return heldElements(graph_, facts_, known(), d);
}

template <class Register>
Held<Register>& KernelWalker<Register>::hold(Id d) {
    auto it = held_.find(d);
    if (it != held_.end())
        return it->second;
    Held<Register> h;
    h.type = graph_.coordinates.node(d).dtype.value_or(DataType::F32);
    h.elements = elements(d);
    allocate(d, h);
    return held_.emplace(d, std::move(h)).first->second;
}

template <class Register>
Register KernelWalker<Register>::valueAt(Id d, Held<Register> const* current, std::size_t element) {
    if (auto const l = leaves_.find(d); l != leaves_.end()) // a register the walker named
        return l->second;
    KILN_ASSERT(current, "value#{} read outside an element", d);
    auto const& here = current->elements[element];
    if (auto it = held_.find(d); it != held_.end()) {
        Held<Register> const& h = it->second;
        if (auto const row = broadcastValue(d, h, here)) // a row's value along the row
            return *row;
        if (h.elements.size() != current->elements.size() ||
            !equal(h.elements[element].at(d), here.at(currentId_)))
            throw UserError(
                fmt::format("value#{} is held with another layout than #{}", d, currentId_));
        return h.registers[element];
    }
    auto view = views_.find(d);
    if (view == views_.end())
        throw UserError(fmt::format("value#{} is read before it is computed", d));
    // Read in place: the same axes, when the two values have the same shape.
    auto k = known();
    auto const mine = axes(d), theirs = axes(currentId_);
    if (mine.size() == theirs.size()) {
        for (std::size_t a = 0; a < mine.size(); ++a)
            k[mine[a]] = here.at(theirs[a]);
    } else {
        k[d] = here.at(currentId_);
    }
    return readInPlace(view->second, d, k, here.conditions);
}

template <class Register>
Register KernelWalker<Register>::readInPlace(Id op, Id value, std::map<Id, ExprPtr> const& k,
                                             std::vector<ExprPtr> const& where) {
    Id const memory = graph_.mapping.get(op, role::source);
    DataType const type = graph_.coordinates.node(value).dtype.value_or(DataType::F32);
    if (graph_.control.node(op).kind == OperationKind::LoadShared)
        return readStagedElement(memory, k, type);
    auto solution = solveIndices(graph_, k, {memory}, facts_);
    for (auto const& c : where)
        if (std::none_of(solution.conditions.begin(), solution.conditions.end(),
                         [&](ExprPtr const& e) { return equal(e, c); }))
            solution.conditions.push_back(c);
    return loadElement(memory, solution.at(memory), solution.conditions, type);
}

template <class Register>
typename KernelWalker<Register>::Placed
KernelWalker<Register>::place(Id value, Held<Register> const& held, Id memory) const {
    std::size_t const count = held.elements.size();
    Placed out{std::vector<ExprPtr>(count), std::vector<std::vector<ExprPtr>>(count)};
    auto const valueAxes = axes(value);
    for (std::size_t c = 0; c < count; ++c) {
        auto k = known();
        for (Id a : valueAxes)
            k[a] = held.elements[c].at(a);
        auto const solution = solveIndices(graph_, k, {memory}, facts_);
        out.offsets[c] = solution.at(memory);
        auto& conditions = out.conditions[c];
        conditions = held.elements[c].conditions;
        for (auto const& extra : solution.conditions)
            if (std::none_of(conditions.begin(), conditions.end(),
                             [&](ExprPtr const& e) { return equal(e, extra); }))
                conditions.push_back(extra);
        for (std::size_t i = conditions.size(); i-- > 0;) {
            std::vector<ExprPtr> others = conditions;
            others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
            if (facts_.impliedBy(conditions[i], others))
                conditions = std::move(others);
        }
    }
    return out;
}

template <class Register>
std::size_t KernelWalker<Register>::accessWidth(std::vector<ExprPtr> const& offsets,
                                                std::size_t start, std::size_t widest, int bytes) {
    auto consecutive = [&](std::size_t width) {
        if (start % width != 0 || start + width > offsets.size())
            return false;
        for (std::size_t k = 1; k < width; ++k) {
            auto d = IndexFacts::difference(offsets[start + k], offsets[start]);
            if (!d || *d != static_cast<std::int64_t>(k))
                return false;
        }
        return true;
    };
    for (std::size_t w = widest; w > 1; w /= 2)
        if (w * static_cast<std::size_t>(bytes) >= 4 && consecutive(w))
            return w;
    return 1;
}

template <class Register>
std::vector<ExprPtr>
KernelWalker<Register>::sharedIndices(Id shared,
                                      std::vector<std::map<Id, ExprPtr>> const& at) const {
    std::vector<ExprPtr> offsets;
    for (auto const& k : at) {
        auto const solution = solveIndices(graph_, k, {shared}, facts_);
        if (!solution.conditions.empty())
            throw UserError(fmt::format("a read of Shared #{} may fall outside it (unless {})",
                                        shared, toString(solution.conditions.front())));
        offsets.push_back(solution.at(shared));
    }
    return offsets;
}

template <class Register>
std::size_t KernelWalker<Register>::sharedReadWidth(std::vector<ExprPtr> const& offsets,
                                                    std::size_t start, std::size_t widest,
                                                    int bytes, int minBytes) const {
    std::size_t width = widest;
    for (; width > 1; width /= 2) {
        if (start + width > offsets.size() || static_cast<int>(width) * bytes < minBytes ||
            facts_.powerOfTwoDivisor(offsets[start]) < static_cast<std::int64_t>(width))
            continue;
        bool consecutive = true;
        for (std::size_t k = 1; k < width && consecutive; ++k) {
            auto const d = IndexFacts::difference(offsets[start + k], offsets[start]);
            consecutive = d && *d == static_cast<std::int64_t>(k);
        }
        if (consecutive)
            break;
    }
    return width;
}

template <class Register>
std::optional<StagedOperands> KernelWalker<Register>::stagedOperands(Contraction const& c) const {
    StagedOperands out;
    for (auto [operand, shared] : {std::pair{c.lhs, &out.lhsShared}, {c.rhs, &out.rhsShared}}) {
        auto const view = views_.find(operand);
        if (view == views_.end() ||
            graph_.control.node(view->second).kind != OperationKind::LoadShared)
            return std::nullopt;
        *shared = graph_.mapping.get(view->second, role::source);
    }
    out.type = graph_.coordinates.node(out.lhsShared).dtype.value_or(DataType::F32);
    if ((out.type != DataType::F16 && out.type != DataType::BF16) ||
        graph_.coordinates.node(out.rhsShared).dtype.value_or(DataType::F32) != out.type)
        return std::nullopt;
    return out;
}

template <class Register>
std::optional<ExprPtr> KernelWalker<Register>::stagedIndex(Id shared, Id along,
                                                           ExprPtr const& where, Id kAxis,
                                                           ExprPtr const& k) const {
    auto at = known();
    at[along] = where;
    at[kAxis] = k;
    auto const solution = solveIndices(graph_, at, {shared}, facts_);
    if (!solution.conditions.empty())
        return std::nullopt;
    return facts_.reduce(solution.at(shared));
}

template <class Register>
bool KernelWalker<Register>::streamed(Id, Id) const {
    return false;
}

template <class Register>
bool KernelWalker<Register>::unitIndicesAreZero() const {
    return false;
}

template <class Register>
bool KernelWalker<Register>::runsAlongContiguousAxis() const {
    return false;
}

template <class Register>
bool KernelWalker<Register>::pipelinedLoop(Id, Operation const&) {
    return false;
}

template <class Register>
void KernelWalker<Register>::preload(Id, Placed const&) {}

template <class Register>
void KernelWalker<Register>::forgetPreloads() {}

template <class Register>
void KernelWalker<Register>::prefetch(Id, ExprPtr const&, std::int64_t,
                                      std::vector<ExprPtr> const&) {}

template <class Register>
void KernelWalker<Register>::settle() {}

template <class Register>
bool KernelWalker<Register>::planningOnly() const {
    return false;
}

// The targets' register types: PTX names its registers, AMDGCN allocates them (kiln::amdgcn).
template class KernelWalker<std::string>;
template class KernelWalker<amdgcn::Value>;

} // namespace kiln::lowering::detail
