// Rows read again (docs/codegen.md, "Rows read again"): the walk of values whose rows workitems
// share, computed element by element from those rows and the rows' reduced values (a softmax, a
// layer norm). No workitem holds such a value whole; its elements are computed where they are
// read, a chunk at a time: by a cooperative Reduce (each chunk it combines) and by a store (a
// loop over the workitem's chunks). The rows are read from memory again for each pass.
#include "KernelWalker.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/graph/Bindings.h"
#include "kiln/graph/Distribution.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering::detail {

namespace {

// The data values an expression reads, each once, in order.
void collectValues(Expression const& e, std::vector<Id>& values) {
    using namespace expr;
    if (auto const* d = std::get_if<DataValue>(&e)) {
        if (std::find(values.begin(), values.end(), d->dimension) == values.end())
            values.push_back(d->dimension);
    } else if (auto const* u = std::get_if<Unary>(&e))
        collectValues(*u->arg, values);
    else if (auto const* b = std::get_if<Binary>(&e)) {
        collectValues(*b->lhs, values);
        collectValues(*b->rhs, values);
    } else if (auto const* s = std::get_if<Select>(&e)) {
        collectValues(*s->condition, values);
        collectValues(*s->ifTrue, values);
        collectValues(*s->ifFalse, values);
    } else if (auto const* c = std::get_if<Convert>(&e))
        collectValues(*c->arg, values);
}

} // namespace

template <class Register>
bool KernelWalker<Register>::rowChunked(Id d) const {
    auto const valueAxes = axes(d);
    return graph_.coordinates.node(d).shape.size() >= 2 && valueAxes.size() >= 2 && !holdable(d) &&
           cooperativeRows(graph_, shape_, valueAxes.back()).has_value();
}

template <class Register>
bool KernelWalker<Register>::broadcastInto(Id d, Id into) const {
    auto const& mine = graph_.coordinates.node(d).shape;
    return !mine.empty() && mine.size() + 1 == graph_.coordinates.node(into).shape.size();
}

// Element c of the part of `value` is element c of `like` (a part of a value of the same shape):
// the same index along each axis, the same conditions, and the same flattened index, so that
// valueAt() finds it at the element being computed.
template <class Register>
Held<Register> KernelWalker<Register>::partLike(Id value, Id likeValue,
                                                Held<Register> const& like) const {
    Held<Register> part;
    part.type = graph_.coordinates.node(value).dtype.value_or(DataType::F32);
    auto const mine = axes(value), theirs = axes(likeValue);
    if (mine.size() != theirs.size())
        throw UserError(fmt::format("value#{} ({} axes) is computed from value#{} ({} axes) "
                                    "element by element",
                                    likeValue, theirs.size(), value, mine.size()));
    for (auto const& element : like.elements) {
        auto k = known();
        for (std::size_t a = 0; a < mine.size(); ++a)
            k[mine[a]] = element.at(theirs[a]);
        IndexSolution solution;
        for (std::size_t a = 0; a < mine.size(); ++a)
            solution.indices[mine[a]] = k.at(mine[a]);
        solution.indices[value] = element.at(likeValue);
        solution.conditions = element.conditions;
        part.elements.push_back(std::move(solution));
    }
    return part;
}

template <class Register>
bool KernelWalker<Register>::everyRowReads(Id memory) const {
    auto const& coords = graph_.coordinates;
    for (Id e : coords.outgoing(memory)) {
        if (coords.edge(e).kind != CoordinateEdgeKind::Split)
            continue;
        auto const memoryAxes = coords.heads(e);
        for (std::size_t a = 0; a + 1 < memoryAxes.size(); ++a)
            if (ExprPtr const& stride = coords.node(memoryAxes[a]).stride;
                stride && literalInt(simplify(stride)) == 0)
                return true;
    }
    return false;
}

// Whether the chunks of a row are written out for the problem the kernel is made for
// (CodegenOptions::sizes; forEachChunk()), so that the parts of the rows the first pass loads can
// be held for the next passes. The layer norm of 8192 x 8192 f16 over 256 lanes, two chunks of
// 16, X read once: 89.6 us at 63 registers, 89.0 at MIN_BLOCKS=5 (48), by `kiln tune` on the H100
// (read cold; the 86.5 and 85.0 us a Python harness gave had part of X in L2:
// bench/results/2026-11-27-h100-ninth-layernorm.md). HOLD=0 (a schedule parameter) reads them
// again in each pass instead, from L1 or L2, as torch.compile's Triton layer norm does: fewer
// registers, more workgroups resident.
template <class Register>
bool KernelWalker<Register>::heldRows(ExprPtr const& chunks) const {
    if (auto const hold = options_.schedule.find("HOLD");
        hold != options_.schedule.end() && hold->second == 0)
        return false;
    auto const count = atKnownSizes(chunks);
    return count && count->asInt() >= 1 && count->asInt() <= kMaxWrittenOutChunks;
}

template <class Register>
std::optional<Value> KernelWalker<Register>::atKnownSizes(ExprPtr const& e) const {
    if (options_.sizes.empty())
        return std::nullopt;
    Bindings sizes;
    sizes.sizes = options_.sizes;
    try {
        return evaluate(*e, BindingsEnvironment(sizes));
    } catch (UserError const&) { // a size the problem does not give, or an index
        return std::nullopt;
    }
}

template <class Register>
ExprPtr KernelWalker<Register>::KnownSize::holds() const {
    return binary(BinaryOp::Equal, kiln::argument(argument->name, argument->dtype), literal(value));
}

template <class Register>
std::vector<typename KernelWalker<Register>::KnownSize> KernelWalker<Register>::knownSizes() const {
    std::vector<KnownSize> sizes;
    for (auto const& [name, value] : options_.sizes)
        if (auto const* arg = graph_.findArgument(name);
            arg && arg->kind == KernelArgument::Kind::Size)
            sizes.push_back({arg, value});
    return sizes;
}

template <class Register>
void KernelWalker<Register>::assumeKnownSizes(std::vector<KnownSize> const& sizes,
                                              std::vector<std::string>& assumptions) {
    std::map<std::string, std::int64_t> values;
    for (KnownSize const& s : sizes) {
        values.emplace(s.argument->name, s.value);
        assume(s.holds(), assumptions);
    }
    facts_.assumeSizes(std::move(values));
}

template <class Register>
void KernelWalker<Register>::assume(ExprPtr const& condition,
                                    std::vector<std::string>& assumptions) {
    if (std::string const text = toString(condition);
        std::find(assumptions.begin(), assumptions.end(), text) == assumptions.end())
        assumptions.push_back(text);
}

// The workgroup's first element (workitem 0's, at chunk 0: the first chunk loads first) as an
// expression of its index w; the span between w and w + 1, the same from 1 to 2, at the sizes
// the kernel is made for. The layer norm of 8192 x 8192 f16 on the H100 (256 lanes a row, 660
// workgroups running): 89.35 -> 88.55 us at D = 330 by `kiln run`; its PTX edited by hand,
// 88.4 -> 87.9, 87.5 and 87.7 us at D = 264, 330 and 400
// (bench/results/2026-11-27-h100-ninth-layernorm.md).
template <class Register>
void KernelWalker<Register>::prefetchLaterRows(Id value, Held<Register> const& part, Id memory) {
    auto const ahead = options_.schedule.find("PREFETCH");
    if (ahead == options_.schedule.end() || ahead->second <= 0 || prefetchedRows_ ||
        part.elements.empty())
        return;
    prefetchedRows_ = true;
    auto const& w = shape_.workgroups[0];
    if (!w || units_.contains(*w) || !shape_.grid[0])
        return;
    for (std::size_t a = 1; a < 3; ++a)
        if (shape_.workgroups[a] && !units_.contains(*shape_.workgroups[a]))
            return; // more than one axis of workgroups: the next one's rows lie elsewhere
    std::map<Id, ExprPtr> first;
    for (auto const& d : shape_.workitems)
        if (d)
            first[*d] = literal(0);
    Held<Register> element;
    element.type = part.type;
    element.elements.push_back(part.elements.front());
    ExprPtr const start = substitute(place(value, element, memory).offsets[0], first);
    auto at = [&](ExprPtr const& workgroup) {
        return simplify(substitute(start, {{*w, workgroup}}));
    };
    auto const w0 = atKnownSizes(at(literal(0))), w1 = atKnownSizes(at(literal(1))),
               w2 = atKnownSizes(at(literal(2)));
    if (!w0 || !w1 || !w2)
        return;
    std::int64_t const span = w1->asInt() - w0->asInt();
    int const size = sizeInBytes(graph_.coordinates.node(memory).dtype.value_or(part.type));
    std::int64_t const bytes = span * size;
    if (span <= 0 || w2->asInt() - w1->asInt() != span || bytes % 16 != 0 ||
        (w0->asInt() * size) % 16 != 0)
        return;
    ExprPtr const later = index(*w) + literal(ahead->second);
    prefetch(memory, at(later), bytes,
             {binary(BinaryOp::Less, later + literal(1), shape_.grid[0]),
              binary(BinaryOp::Equal, simplify(substitute(linearWorkitem(shape_), known())),
                     literal(0))});
}

template <class Register>
void KernelWalker<Register>::computeRowPart(Id value, Held<Register>& part) {
    if (auto view = views_.find(value); view != views_.end()) {
        Id const op = view->second;
        if (graph_.control.node(op).kind != OperationKind::LoadTiled)
            throw UserError(fmt::format("value#{} is read again along its rows from a {}; only "
                                        "a tensor in global memory is written",
                                        value, name(graph_.control.node(op).kind)));
        // Loaded by an earlier pass (the chunks written out), which held these elements
        // among its own: each element's register is the held one at the same place.
        auto const valueAxes = axes(value);
        if (auto held = rowsHeld_.find(value); held != rowsHeld_.end()) {
            std::vector<Register> registers;
            for (auto const& element : part.elements) {
                auto const& theirs = held->second.elements;
                auto const at = std::find_if(theirs.begin(), theirs.end(), [&](auto const& h) {
                    return std::all_of(valueAxes.begin(), valueAxes.end(), [&](Id a) {
                        return equal(simplify(h.at(a)), simplify(element.at(a)));
                    });
                });
                if (at == theirs.end())
                    break;
                registers.push_back(
                    again(held->second.registers[static_cast<std::size_t>(at - theirs.begin())]));
            }
            if (registers.size() == part.elements.size()) {
                part.registers = std::move(registers);
                return;
            }
        }
        // An operand every row reads stays in L1; the store's pass (hoistingRows_) reads a row
        // for the last time: 90.1 us for the layer norm of 8192 x 8192 f16 on the H100, where
        // keeping the first pass's rows in L2 instead took 91.7 us
        // (bench/results/2026-11-26-h100-eighth-layernorm.md).
        Id const memory = graph_.mapping.get(op, role::source);
        Reuse const outer = reuse_;
        if (everyRowReads(memory))
            reuse_ = Reuse::Again;
        else if (hoistingRows_ && !holdingRows_)
            reuse_ = Reuse::Last;
        if (holdingRows_ && !everyRowReads(memory))
            prefetchLaterRows(value, part, memory);
        allocate(value, part);
        move(value, part, memory, /*isLoad=*/true);
        reuse_ = outer;
        if (holdingRows_) { // beside the parts of the chunks before
            Held<Register>& kept = rowsHeld_.try_emplace(value, Held<Register>{}).first->second;
            kept.type = part.type;
            kept.elements.insert(kept.elements.end(), part.elements.begin(), part.elements.end());
            kept.registers.insert(kept.registers.end(), part.registers.begin(),
                                  part.registers.end());
        }
        return;
    }
    auto const assignment = rowAssigns_.find(value);
    if (assignment == rowAssigns_.end())
        throw UserError(
            fmt::format("value#{} is read along its rows before it is computed", value));
    Operation const& o = graph_.control.node(assignment->second);
    std::vector<Id> operands;
    collectValues(*o.expression, operands);
    std::vector<Id> parts;
    for (Id d : operands) {
        if (broadcastInto(d, value)) {
            if (!held_.contains(d))
                throw UserError(fmt::format("value#{}, broadcast along the rows of value#{}, is "
                                            "not held by the workitems of its row",
                                            d, value));
            continue;
        }
        Held<Register> operand = partLike(d, value, part);
        computeRowPart(d, operand);
        held_.insert_or_assign(d, std::move(operand));
        parts.push_back(d);
    }
    allocate(value, part);
    currentId_ = value;
    ExprPtr const e = assigned(assignment->second, o);
    for (std::size_t c = 0; c < part.elements.size(); ++c)
        assignElement(part, c, hoistingRows_ ? withRowInvariants(e, value, part.elements[c]) : e);
    precision_ = Precision::Exact;
    for (Id d : parts)
        held_.erase(d);
}

// Each workitem loops over its chunks of its row, as a cooperative Reduce does: in each, the
// elements it owns (UNROLL x VEC of them: consecutive for a row-major tensor) computed from
// their rows and stored, the missing ones at the row's end masked, one step (VEC elements, a
// vector access) at a time: the step's other operands (a layer norm's gamma and beta) are loaded,
// its result computed and stored before the next step's, so that a step's worth of each, not
// UNROLL steps', is live beside the rows a held-row kernel holds (86 registers at 512 lanes
// x 16 elements, one workgroup a multiprocessor, where 64 let two run).
template <class Register>
void KernelWalker<Register>::storeRows(Id value, Id memory, bool roundedByStore) {
    auto const valueAxes = axes(value);
    auto const rows = cooperativeRows(graph_, shape_, valueAxes.back());
    KILN_ASSERT(rows, "value#{} is not tiled along its rows", value);
    std::vector<std::int64_t> sizes;
    std::int64_t steps = 1;
    for (Id u : rows->unrolled) {
        sizes.push_back(constantSize(graph_, u, "the elements a workitem stores in each step"));
        steps *= sizes.back();
    }
    ExprPtr const chunks = graph_.coordinates.node(rows->chunk).size;
    if (!chunks)
        throw UserError(
            fmt::format("the chunks of value#{}'s rows (#{}) have no size", value, rows->chunk));
    holdingRows_ = heldRows(chunks);
    hoistingRows_ = true;
    std::int64_t const width = sizes.empty() ? steps : sizes.back();
    forEachChunk(*rows, chunks, [&](std::optional<std::int64_t>) {
        for (std::int64_t first = 0; first < steps; first += width) {
            Held<Register> part;
            part.type = roundedByStore
                            ? DataType::F32
                            : graph_.coordinates.node(value).dtype.value_or(DataType::F32);
            for (std::int64_t s = first; s < first + width; ++s) {
                auto k = known();
                std::int64_t rest = s;
                for (std::size_t u = rows->unrolled.size(); u-- > 0;) {
                    k[rows->unrolled[u]] = literal(rest % sizes[u]);
                    rest /= sizes[u];
                }
                // The element exists where its axes lie inside theirs; its flattened index then
                // does.
                IndexSolution element = solveIndices(graph_, k, valueAxes, facts_);
                element.indices[value] = solveIndices(graph_, k, {value}, facts_).at(value);
                part.elements.push_back(std::move(element));
            }
            computeRowPart(value, part);
            if (!planningOnly())
                move(value, part, memory, /*isLoad=*/false);
        }
    });
    // What the chunks computed once per row is not computed before them.
    hoistingRows_ = false;
    rowInvariants_.clear();
    holdingRows_ = false;
    rowsHeld_.clear(); // the stored tensor may be one that was read
}

template <class Register>
std::optional<Register> KernelWalker<Register>::broadcastValue(Id d, Held<Register> const& h,
                                                               IndexSolution const& here) {
    if (!broadcastInto(d, currentId_))
        return std::nullopt;
    auto const mine = axes(d), theirs = axes(currentId_);
    for (std::size_t j = 0; j < h.elements.size(); ++j) {
        bool same = mine.size() < theirs.size();
        for (std::size_t a = 0; same && a < mine.size(); ++a)
            same = equal(simplify(h.elements[j].at(mine[a])), simplify(here.at(theirs[a])));
        if (same)
            return h.registers[j];
    }
    throw UserError(fmt::format("value#{} is broadcast along the rows of value#{}, but the "
                                "workitem computing an element does not hold its row's value",
                                d, currentId_));
}

template <class Register>
bool KernelWalker<Register>::rowInvariant(ExprPtr const& e, Id value) const {
    using namespace expr;
    return std::visit(
        [&](auto const& node) {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, DataValue>)
                return node.dimension >= 0 && broadcastInto(node.dimension, value) &&
                       held_.contains(node.dimension);
            else if constexpr (std::is_same_v<T, Literal> || std::is_same_v<T, Argument>)
                return true;
            else if constexpr (std::is_same_v<T, Unary> || std::is_same_v<T, Convert>)
                return rowInvariant(node.arg, value);
            else if constexpr (std::is_same_v<T, Binary>)
                return rowInvariant(node.lhs, value) && rowInvariant(node.rhs, value);
            else if constexpr (std::is_same_v<T, Select>)
                return rowInvariant(node.condition, value) && rowInvariant(node.ifTrue, value) &&
                       rowInvariant(node.ifFalse, value);
            else // a size, a stride, an index: left where it is
                return false;
        },
        static_cast<Expression::variant const&>(*e));
}

template <class Register>
ExprPtr KernelWalker<Register>::withRowInvariants(ExprPtr const& e, Id value,
                                                  IndexSolution const& at) {
    using namespace expr;
    bool const leafNode = std::holds_alternative<DataValue>(*e) ||
                          std::holds_alternative<Literal>(*e) ||
                          std::holds_alternative<Argument>(*e);
    if (leafNode)
        return e;
    // The row's register of `part`, computed at its first element in this loop body.
    auto const once = [&](ExprPtr const& part) {
        auto const valueAxes = axes(value);
        std::vector<ExprPtr> row;
        for (std::size_t a = 0; a + 1 < valueAxes.size(); ++a)
            row.push_back(simplify(at.at(valueAxes[a])));
        for (auto const& known : rowInvariants_)
            if (equal(known.expression, part) &&
                std::equal(row.begin(), row.end(), known.row.begin(), known.row.end(),
                           [](ExprPtr const& x, ExprPtr const& y) { return equal(x, y); }))
                return leaf(known.value, resultType(*part));
        Register const r = materialize(part, resultType(*part), at);
        rowInvariants_.push_back({part, std::move(row), r});
        return leaf(r, resultType(*part));
    };
    if (rowInvariant(e, value))
        return once(e);
    if (auto const* b = std::get_if<Binary>(e.get());
        b && b->op == BinaryOp::Divide && precision_ == Precision::Approximate &&
        resultType(*e) == DataType::F32 && rowInvariant(b->rhs, value)) {
        ExprPtr const reciprocal = literal(Value::real(1.0, DataType::F32)) / b->rhs;
        return withRowInvariants(b->lhs, value, at) * once(reciprocal);
    }
    return mapOperands(
        e, [&](ExprPtr const& operand) { return withRowInvariants(operand, value, at); });
}

// The targets' register types, as KernelWalker.cpp instantiates the rest.
#define KILN_ROWS_INSTANTIATE(Register)                                                            \
    template bool KernelWalker<Register>::rowChunked(Id) const;                                    \
    template bool KernelWalker<Register>::broadcastInto(Id, Id) const;                             \
    template Held<Register> KernelWalker<Register>::partLike(Id, Id, Held<Register> const&) const; \
    template void KernelWalker<Register>::computeRowPart(Id, Held<Register>&);                     \
    template void KernelWalker<Register>::storeRows(Id, Id, bool);                                 \
    template std::optional<Value> KernelWalker<Register>::atKnownSizes(ExprPtr const&) const;      \
    template bool KernelWalker<Register>::heldRows(ExprPtr const&) const;                          \
    template ExprPtr KernelWalker<Register>::KnownSize::holds() const;                             \
    template std::vector<typename KernelWalker<Register>::KnownSize>                               \
    KernelWalker<Register>::knownSizes() const;                                                    \
    template void KernelWalker<Register>::assumeKnownSizes(                                        \
        std::vector<KernelWalker<Register>::KnownSize> const&, std::vector<std::string>&);         \
    template void KernelWalker<Register>::assume(ExprPtr const&, std::vector<std::string>&);       \
    template void KernelWalker<Register>::prefetchLaterRows(Id, Held<Register> const&, Id);        \
    template bool KernelWalker<Register>::everyRowReads(Id) const;                                 \
    template std::optional<Register> KernelWalker<Register>::broadcastValue(                       \
        Id, Held<Register> const&, IndexSolution const&);                                          \
    template bool KernelWalker<Register>::rowInvariant(ExprPtr const&, Id) const;                  \
    template ExprPtr KernelWalker<Register>::withRowInvariants(ExprPtr const&, Id,                 \
                                                               IndexSolution const&);
KILN_ROWS_INSTANTIATE(std::string)
KILN_ROWS_INSTANTIATE(amdgcn::Value)
#undef KILN_ROWS_INSTANTIATE

} // namespace kiln::lowering::detail
