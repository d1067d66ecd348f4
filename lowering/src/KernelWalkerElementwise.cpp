// Element-wise runs (KernelWalker.h, ElementwiseRun): loads and Assigns of values held with one
// layout ending in a store, a GEMM's epilogue among them, written chunk by chunk so that a chunk
// of each value, not all of it, sits beside the accumulators; a broadcast tensor's element loaded
// once for the chunks that share it; the stored value rounded once, by its store; the loads a
// loop before the run does not change offered to the target before the loop (preloadRun()).
#include "KernelWalker.h"
#include "OperationOrder.h"
#include "kiln/amdgcn/Register.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace kiln::lowering::detail {

// Loads into registers and Assigns of data, at least one Assign, then a store; each value held
// with the stored value's layout (element c of every value at the same place), so that element
// c of each depends only on element c of the others. A tensor the run reads twice, or reads and
// stores (an update in place: a later chunk's load would follow an earlier chunk's store), is
// left to the plain walk.
template <class Register>
std::optional<ElementwiseRun> KernelWalker<Register>::elementwiseRun(std::vector<Id> const& ops,
                                                                     std::size_t first) {
    ElementwiseRun run;
    std::vector<Id> values, tensors;
    bool computes = false;
    for (std::size_t j = first; j < ops.size(); ++j) {
        Id const op = ops[j];
        auto const kind = graph_.control.node(op).kind;
        run.ops.push_back(op);
        bool const isLoad = kind == OperationKind::LoadTiled || kind == OperationKind::LoadLinear;
        bool const isStore =
            kind == OperationKind::StoreTiled || kind == OperationKind::StoreLinear;
        if (kind == OperationKind::Assign) {
            Id const dest = graph_.mapping.get(op, role::dest);
            if (!holdsData(graph_.coordinates.node(dest).kind) || !holdable(dest))
                return std::nullopt;
            values.push_back(dest);
            computes = true;
            continue;
        }
        if (!isLoad && !isStore)
            return std::nullopt;
        Id const value = graph_.mapping.get(op, isLoad ? role::dest : role::source),
                 memory = graph_.mapping.get(op, isLoad ? role::source : role::dest);
        if (graph_.coordinates.node(memory).kind != DimensionKind::User ||
            std::find(tensors.begin(), tensors.end(), memory) != tensors.end())
            return std::nullopt;
        tensors.push_back(memory);
        if (isLoad) {
            if (!holdable(value) || held_.contains(value))
                return std::nullopt;
            values.push_back(value);
            continue;
        }
        if (!computes || (!held_.contains(value) &&
                          std::find(values.begin(), values.end(), value) == values.end()))
            return std::nullopt;
        auto const layout = elements(value);
        for (Id v : values) {
            auto const mine = elements(v);
            if (mine.size() != layout.size())
                return std::nullopt;
            for (std::size_t c = 0; c < mine.size(); ++c)
                if (!equal(mine[c].at(v), layout[c].at(value)))
                    return std::nullopt;
        }
        // A chunk holds the widest access of each tensor (16 bytes), so that chunks move
        // their elements with the vector accesses the whole value would have.
        run.count = layout.size();
        run.chunk = 1;
        for (Id t : tensors)
            run.chunk = std::max(run.chunk, std::size_t(16 / sizeInBytes(tensorType(t))));
        if (run.count <= run.chunk)
            return std::nullopt;
        return run;
    }
    return std::nullopt;
}

// A value the run computes or loads, which no operation outside it reads and none of it reads
// before computing it (in a loop, the next iteration's), is dead once its chunk is stored: its
// chunk's registers are given back then (AMDGCN frees a register with the last Value naming it;
// PTX's names are not read again), so that the run needs a chunk of each, not the whole value,
// beside the accumulators; after the run it is not held at all.
template <class Register>
std::vector<Id> KernelWalker<Register>::diesInItsChunk(ElementwiseRun const& run) const {
    std::vector<Id> dead;
    for (std::size_t k = 0; k + 1 < run.ops.size(); ++k) {
        Id const value = graph_.mapping.get(run.ops[k], role::dest);
        if (held_.contains(value) || std::find(dead.begin(), dead.end(), value) != dead.end())
            continue;
        bool readElsewhere = false;
        for (std::size_t j = 0; j <= k && !readElsewhere; ++j)
            readElsewhere = readsValue(graph_, run.ops[j], value);
        for (Id reader : graph_.control.nodes()) {
            auto const kind = graph_.control.node(reader).kind;
            if (readElsewhere || kind == OperationKind::Kernel || kind == OperationKind::ForLoop ||
                kind == OperationKind::If ||
                std::find(run.ops.begin(), run.ops.end(), reader) != run.ops.end())
                continue;
            readElsewhere = readsValue(graph_, reader, value);
        }
        if (!readElsewhere)
            dead.push_back(value);
    }
    return dead;
}

// The loads of the element-wise run after `loop` (a GEMM epilogue's bias after its K loop) whose
// places the loop does not change: offered to the target before the loop (preload()), so that
// their latency passes under the loop's instead of after it, where the epilogue waits for them.
template <class Register>
void KernelWalker<Register>::preloadRun(Id loop, ElementwiseRun const& run) {
    std::map<Id, ExprPtr> changed; // every index the loop assigns, as 0
    std::vector<Id> pending{loop};
    while (!pending.empty()) {
        Id const op = pending.back();
        pending.pop_back();
        if (graph_.control.node(op).kind == OperationKind::Assign)
            changed.emplace(graph_.mapping.get(op, role::dest), literal(0));
        for (ControlEdgeKind kind :
             {ControlEdgeKind::Body, ControlEdgeKind::Else, ControlEdgeKind::Initialize,
              ControlEdgeKind::ForLoopIncrement})
            for (Id inner : graph_.sequence(op, kind))
                pending.push_back(inner);
    }
    auto const fixed = [&](ExprPtr const& e) { return equal(substitute(e, changed), e); };
    for (Id op : run.ops) {
        auto const kind = graph_.control.node(op).kind;
        if (kind != OperationKind::LoadTiled && kind != OperationKind::LoadLinear)
            continue;
        Id const value = graph_.mapping.get(op, role::dest),
                 memory = graph_.mapping.get(op, role::source);
        Held<Register> h;
        h.elements = elements(value);
        Placed const places = place(value, h, memory);
        bool const stays =
            std::all_of(places.offsets.begin(), places.offsets.end(), fixed) &&
            std::all_of(places.conditions.begin(), places.conditions.end(),
                        [&](auto const& c) { return std::all_of(c.begin(), c.end(), fixed); });
        if (stays)
            preload(memory, places);
    }
}

// Chunks of consecutive registers; where the store is staged (EPILOGUE=1), each block's
// elements in chunks, the block claimed before its first chunk and copied after its last, so
// that the chunks of one block are what the staging buffer holds at a time.
template <class Register>
void KernelWalker<Register>::elementwiseChunks(ElementwiseRun const& run) {
    auto const& store = run.ops.back();
    std::vector<Id> const dead = diesInItsChunk(run);
    for (Id op : run.ops)
        if (op != store)
            naming(op, graph_.control.node(op).kind,
                   [&] { hold(graph_.mapping.get(op, role::dest)); });
    Id const stored = graph_.mapping.get(store, role::source),
             storedTo = graph_.mapping.get(store, role::dest);
    if (roundedByItsStore(run))
        held_.at(stored).type = DataType::F32;
    // Per load, its elements' places and the elements it loaded last (loadChunk()).
    std::map<Id, std::pair<Placed, std::vector<std::pair<std::size_t, Register>>>> loaded;
    for (Id op : run.ops)
        if (op != store && graph_.control.node(op).kind != OperationKind::Assign) {
            Id const value = graph_.mapping.get(op, role::dest);
            loaded[op].first = place(value, held_.at(value), graph_.mapping.get(op, role::source));
        }
    std::int64_t const blockColumns = planningOnly() ? 0 : stagedBlockColumns(storedTo);
    std::optional<StagedTile> tile;
    std::vector<std::vector<std::size_t>> blocks;
    if (blockColumns > 0) {
        naming(store, graph_.control.node(store).kind,
               [&] { tile = stagedTileOf(stored, held_.at(stored), storedTo, blockColumns); });
        blocks = tile->elementsOfBlocks();
    } else {
        blocks.emplace_back(run.count);
        std::iota(blocks.back().begin(), blocks.back().end(), std::size_t{0});
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        if (tile)
            beginStagedBlock(*tile, b);
        for (std::vector<std::size_t> const& chunk : chunksOf(blocks[b], run.chunk, loaded)) {
            for (Id op : run.ops) {
                auto const& o = graph_.control.node(op);
                naming(op, o.kind, [&] {
                    if (o.kind == OperationKind::Assign) {
                        Id const dest = graph_.mapping.get(op, role::dest);
                        Held<Register>& h = held_.at(dest);
                        currentId_ = dest;
                        ExprPtr const e = assigned(op, o);
                        for (std::size_t c : chunk)
                            assignElement(h, c, e);
                        precision_ = Precision::Exact;
                    } else if (op != store || !planningOnly()) {
                        bool const isLoad = op != store;
                        Id const value = graph_.mapping.get(op, isLoad ? role::dest : role::source),
                                 memory =
                                     graph_.mapping.get(op, isLoad ? role::source : role::dest);
                        Held<Register>& h = held_.at(value);
                        if (isLoad) {
                            auto& [places, recent] = loaded.at(op);
                            loadChunk(value, h, memory, places, chunk, recent, 2 * run.chunk);
                        } else if (tile) {
                            writeStaged(*tile, h, chunk, memory);
                        } else {
                            Held<Register> part = partOf(h, chunk);
                            move(value, part, memory, isLoad);
                            for (std::size_t k = 0; k < chunk.size(); ++k)
                                h.registers[chunk[k]] = part.registers[k];
                        }
                    }
                    settle();
                });
            }
            for (Id value : dead) {
                auto& registers = held_.at(value).registers;
                for (std::size_t c : chunk)
                    registers[c] = Register{};
            }
        }
        if (tile)
            endStagedBlock(*tile, b, storedTo);
    }
    // Not held any more: a walk of the same operations again (the next copy of an unrolled
    // body) holds them afresh.
    for (Id value : dead)
        held_.erase(value);
}

// The stored value is rounded to the tensor's 16-bit type by its store; rounding it when it is
// computed as well, as a 16-bit value is (PTX: cvt.rn.f16.f32 and back to f32), gives the same
// bits with two conversions more an element, where nothing else reads it.
template <class Register>
bool KernelWalker<Register>::roundedByItsStore(ElementwiseRun const& run) const {
    Id const store = run.ops.back(), stored = graph_.mapping.get(store, role::source);
    bool assigned = false;
    for (Id op : run.ops)
        assigned = assigned || (graph_.control.node(op).kind == OperationKind::Assign &&
                                graph_.mapping.get(op, role::dest) == stored);
    return assigned && roundedByItsStore(store);
}

template <class Register>
bool KernelWalker<Register>::roundedByItsStore(Id store) const {
    Id const stored = graph_.mapping.get(store, role::source);
    auto const type = graph_.coordinates.node(stored).dtype;
    if (!type || (*type != DataType::F16 && *type != DataType::BF16) ||
        *type != tensorType(graph_.mapping.get(store, role::dest)))
        return false;
    for (Id reader : graph_.control.nodes()) {
        auto const kind = graph_.control.node(reader).kind;
        if (reader != store && kind != OperationKind::Kernel && kind != OperationKind::ForLoop &&
            kind != OperationKind::If && readsValue(graph_, reader, stored))
            return false;
    }
    return true;
}

// Consecutive elements of `block`, `size` at a time; a chunk that loads an element at the place
// where the one before loaded one (a bias at the same columns, another row) comes right after
// it, so that loadChunk() finds it: the wgmma fragments' rows r and r + 8 are 64 elements apart
// in a workitem's registers.
template <class Register>
std::vector<std::vector<std::size_t>> KernelWalker<Register>::chunksOf(
    std::vector<std::size_t> const& block, std::size_t size,
    std::map<Id, std::pair<Placed, std::vector<std::pair<std::size_t, Register>>>> const& loaded)
    const {
    std::vector<std::vector<std::size_t>> chunks;
    for (std::size_t from = 0; from < block.size(); from += size) {
        auto const first = block.begin() + static_cast<std::ptrdiff_t>(from);
        chunks.emplace_back(
            first, first + static_cast<std::ptrdiff_t>(std::min(size, block.size() - from)));
    }
    auto const shares = [&](std::vector<std::size_t> const& a, std::vector<std::size_t> const& b) {
        for (auto const& [op, l] : loaded)
            for (std::size_t x : a)
                for (std::size_t y : b)
                    if (IndexFacts::difference(l.first.offsets[x], l.first.offsets[y]) ==
                        std::int64_t{0})
                        return true;
        return false;
    };
    std::vector<std::vector<std::size_t>> ordered;
    std::vector<bool> taken(chunks.size(), false);
    for (std::size_t next = 0; ordered.size() < chunks.size();) {
        taken[next] = true;
        ordered.push_back(chunks[next]);
        std::size_t following = chunks.size();
        for (std::size_t k = 0; k < chunks.size() && following == chunks.size(); ++k)
            if (!taken[k] && shares(chunks[k], ordered.back()))
                following = k;
        for (std::size_t k = 0; k < chunks.size() && following == chunks.size(); ++k)
            if (!taken[k])
                following = k;
        next = following;
    }
    return ordered;
}

namespace {

// Whether `conditions` imply `condition`: one of them, implied by them (IndexFacts::impliedBy),
// or weaker than one (`x + a < n` from `x + b < n` with b >= a).
bool implies(IndexFacts const& facts, std::vector<ExprPtr> const& conditions,
             ExprPtr const& condition) {
    if (facts.impliedBy(condition, conditions))
        return true;
    std::vector<ExprPtr> const strongest = IndexFacts::strongest(conditions);
    std::vector<ExprPtr> with = conditions;
    with.push_back(condition);
    std::vector<ExprPtr> const both = IndexFacts::strongest(with);
    return both.size() == strongest.size() &&
           std::all_of(both.begin(), both.end(), [&](ExprPtr const& c) {
               return std::any_of(strongest.begin(), strongest.end(),
                                  [&](ExprPtr const& s) { return equal(c, s); });
           });
}

} // namespace

// A tensor broadcast along an axis (a bias, by a stride of 0) has the same element at several
// places of the run's value: each is loaded once, while `recent` holds it, and the others take
// its register. The one loaded must exist wherever the other does (its conditions implied: the
// bias at row r, for the same column at row r + 8), since a missing element loads as 0.
template <class Register>
void KernelWalker<Register>::loadChunk(Id value, Held<Register>& held, Id memory,
                                       Placed const& places, std::vector<std::size_t> const& chunk,
                                       std::vector<std::pair<std::size_t, Register>>& recent,
                                       std::size_t keep) {
    std::vector<std::size_t> missing;
    for (std::size_t c : chunk) {
        auto const same = std::find_if(recent.rbegin(), recent.rend(), [&](auto const& r) {
            auto const& theirs = places.conditions[r.first];
            return IndexFacts::difference(places.offsets[c], places.offsets[r.first]) ==
                       std::int64_t{0} &&
                   std::all_of(theirs.begin(), theirs.end(), [&](ExprPtr const& t) {
                       return implies(facts_, places.conditions[c], t);
                   });
        });
        if (same != recent.rend())
            held.registers[c] = same->second;
        else
            missing.push_back(c);
    }
    if (missing.empty())
        return;
    Held<Register> part = partOf(held, missing);
    move(value, part, memory, /*isLoad=*/true);
    for (std::size_t k = 0; k < missing.size(); ++k) {
        held.registers[missing[k]] = part.registers[k];
        recent.emplace_back(missing[k], part.registers[k]);
    }
    if (recent.size() > keep)
        recent.erase(recent.begin(), recent.end() - static_cast<std::ptrdiff_t>(keep));
}

#define KILN_ELEMENTWISE_INSTANTIATE(Register)                                                     \
    template std::optional<ElementwiseRun> KernelWalker<Register>::elementwiseRun(                 \
        std::vector<Id> const&, std::size_t);                                                      \
    template std::vector<Id> KernelWalker<Register>::diesInItsChunk(ElementwiseRun const&) const;  \
    template void KernelWalker<Register>::preloadRun(Id, ElementwiseRun const&);                   \
    template void KernelWalker<Register>::elementwiseChunks(ElementwiseRun const&);                \
    template bool KernelWalker<Register>::roundedByItsStore(ElementwiseRun const&) const;          \
    template bool KernelWalker<Register>::roundedByItsStore(Id) const;                             \
    template void KernelWalker<Register>::loadChunk(                                               \
        Id, Held<Register>&, Id, Placed const&, std::vector<std::size_t> const&,                   \
        std::vector<std::pair<std::size_t, Register>>&, std::size_t);
KILN_ELEMENTWISE_INSTANTIATE(std::string)
KILN_ELEMENTWISE_INSTANTIATE(amdgcn::Value)
#undef KILN_ELEMENTWISE_INSTANTIATE

} // namespace kiln::lowering::detail
