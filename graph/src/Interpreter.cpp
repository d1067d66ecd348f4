#include "kiln/graph/Interpreter.h"

#include "kiln/graph/CoordinatePlan.h"
#include "kiln/graph/Distribution.h"
#include "kiln/graph/Translate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

namespace kiln {

namespace {

bool perWorkitem(DimensionKind kind) {
    return kind == DimensionKind::Register || kind == DimensionKind::ThreadTile;
}

bool perWorkgroup(DimensionKind kind) {
    return kind == DimensionKind::MacroTile || kind == DimensionKind::WaveTile ||
           kind == DimensionKind::Shared;
}

class Interpreter : public BindingsEnvironment {
public:
    Interpreter(KernelGraph const& graph, Bindings& bindings, InterpreterOptions const& options)
        : BindingsEnvironment(bindings)
        , graph_(graph)
        , bindings_(bindings)
        , options_(options) {
        for (Id d : graph.coordinates.nodes()) {
            auto kind = graph.coordinates.node(d).kind;
            if (kind == DimensionKind::Workgroup)
                workgroups_.push_back(d);
            else if (kind == DimensionKind::Workitem)
                workitems_.push_back(d);
        }
    }

    void run() {
        groups_ = count(workgroups_);
        lanes_ = count(workitems_);
        runList(sequence(graph_.kernel(), ControlEdgeKind::Body));
    }

    // Environment: what expressions read.
    Value dimensionSize(Id d) const override { return Value::integer(size(d)); }
    Value dimensionStride(Id d) const override {
        auto const& dim = graph_.coordinates.node(d);
        if (!dim.stride)
            fail("dimension #{} has no stride", d);
        return Value::integer(evaluateInt(*dim.stride, *this));
    }
    Value index(Id d) const override {
        auto it = coordinates_.find(d);
        if (it == coordinates_.end())
            fail("the index of dimension #{} ({}) is not set where it is read", d,
                 name(graph_.coordinates.node(d).kind));
        return Value::integer(it->second);
    }
    Value dataValue(expr::DataValue const& d) const override {
        auto const& values = storage(d.dimension);
        auto const row = rowLengths_.find(d.dimension);
        std::size_t const at = values.size() == 1         ? 0
                               : row != rowLengths_.end() ? element_ / row->second
                                                          : element_;
        if (at >= values.size())
            fail("value#{} has {} elements; element {} was read", d.dimension, values.size(), at);
        double const v = values[at];
        return isFloat(d.type) ? Value::real(v, d.type)
                               : Value::integer(static_cast<std::int64_t>(v), d.type);
    }

private:
    std::int64_t count(std::vector<Id> const& dims) const {
        std::int64_t n = 1;
        for (Id d : dims)
            n *= size(d);
        return n;
    }

    // Sets the indices of `dims` from one linear number (the last dimension fastest).
    void bind(std::vector<Id> const& dims, std::int64_t linear) {
        for (std::size_t k = dims.size(); k-- > 0;) {
            std::int64_t const s = size(dims[k]);
            coordinates_[dims[k]] = linear % s;
            linear /= s;
        }
    }

    std::int64_t size(Id d) const {
        if (auto it = sizes_.find(d); it != sizes_.end())
            return it->second;
        auto const& dim = graph_.coordinates.node(d);
        if (!dim.size)
            fail("dimension #{} ({}) has no size", d, name(dim.kind));
        std::int64_t const s = evaluateInt(*dim.size, *this);
        if (s < 0)
            fail("dimension #{} ({}) has negative size {}", d, name(dim.kind), s);
        sizes_[d] = s;
        return s;
    }

    std::optional<std::int64_t> optionalSize(Id d) const {
        return graph_.coordinates.node(d).size ? std::optional(size(d)) : std::nullopt;
    }
    std::optional<std::int64_t> optionalStride(Id d) const {
        return graph_.coordinates.node(d).stride ? std::optional(dimensionStride(d).i)
                                                 : std::nullopt;
    }

    // Storage of a data dimension for the current workgroup (and workitem, where per-thread).
    // A value distributed over the grid has one owner per element, so its elements live in one
    // place that every reader sees, whichever workgroup asks.
    std::vector<double>& storage(Id d) const {
        auto const kind = graph_.coordinates.node(d).kind;
        bool const local = (perWorkitem(kind) || perWorkgroup(kind)) && !distributed(d);
        std::int64_t const group = local ? group_ : -1;
        std::int64_t const lane = local && perWorkitem(kind) ? lane_ : -1;
        KILN_ASSERT(group >= 0 || !local, "#{} read outside a workgroup", d);
        auto& values = storage_[{d, group, lane}];
        if (values.empty())
            values.assign(static_cast<std::size_t>(size(d)), 0.0);
        return values;
    }

    HostTensor& tensor(Id user) {
        auto const& name = graph_.coordinates.node(user).name;
        auto it = bindings_.tensors.find(name);
        if (it == bindings_.tensors.end())
            fail("tensor '{}' has no value", name);
        return it->second;
    }

    std::vector<Id> const& sequence(Id op, ControlEdgeKind kind) {
        auto key = std::pair(op, kind);
        auto it = sequences_.find(key);
        if (it == sequences_.end())
            it = sequences_.emplace(key, graph_.sequence(op, kind)).first;
        return it->second;
    }

    void runList(std::vector<Id> const& ops) {
        for (Id op : ops)
            execute(op);
    }

    void execute(Id op) {
        auto const& operation = graph_.control.node(op);
        switch (operation.kind) {
        case OperationKind::ForLoop:
            return runLoop(op, operation);
        case OperationKind::If:
            if (evaluate(*operation.expression, *this).asBool())
                runList(sequence(op, ControlEdgeKind::Body));
            else
                runList(sequence(op, ControlEdgeKind::Else));
            return;
        case OperationKind::Kernel:
        case OperationKind::Barrier:
        case OperationKind::Nop:
            return; // workitems run in lockstep, so a barrier holds by construction
        default:
            break;
        }
        executeData(op, operation);
    }

    void runLoop(Id op, Operation const& loop) {
        for (Id init : successors(op, ControlEdgeKind::Initialize))
            execute(init);
        std::int64_t iterations = 0;
        while (evaluate(*loop.expression, *this).asBool()) {
            if (++iterations > options_.maxLoopIterations)
                fail("ForLoop #{} ({}) ran {} iterations without ending", op, loop.name,
                     options_.maxLoopIterations);
            runList(sequence(op, ControlEdgeKind::Body));
            for (Id step : successors(op, ControlEdgeKind::ForLoopIncrement))
                execute(step);
        }
    }

    std::vector<Id> const& successors(Id op, ControlEdgeKind kind) {
        auto key = std::pair(op, kind);
        auto it = successors_.find(key);
        if (it == successors_.end())
            it = successors_.emplace(key, graph_.successors(op, kind)).first;
        return it->second;
    }

    void executeData(Id op, Operation const& operation) {
        auto const& mapping = graph_.mapping;
        switch (operation.kind) {
        case OperationKind::LoadLinear:
        case OperationKind::LoadTiled:
        case OperationKind::LoadShared:
            return move(op, mapping.get(op, role::source), mapping.get(op, role::dest),
                        /*load=*/true);
        case OperationKind::StoreLinear:
        case OperationKind::StoreTiled:
        case OperationKind::StoreShared:
            return move(op, mapping.get(op, role::source), mapping.get(op, role::dest),
                        /*load=*/false);
        case OperationKind::Assign:
            return assign(op, operation);
        case OperationKind::Multiply:
            return multiply(op, operation);
        case OperationKind::Reduce:
            return reduce(op, operation);
        default:
            KILN_ASSERT(false, "operation {} ({}) is not a data operation", op,
                        name(operation.kind));
        }
    }

    // The plan computing `target` from the dimensions `known`, made once per operation and set.
    CoordinatePlan const& plan(Id op, std::vector<Id> const& known, Id target) {
        auto key = std::tuple(op, known, target);
        auto it = plans_.find(key);
        if (it == plans_.end()) {
            CoordinatePlan::Extents const extents{[this](Id d) { return optionalSize(d); },
                                                  [this](Id d) { return optionalStride(d); }};
            it = plans_
                     .emplace(key, std::make_unique<CoordinatePlan>(
                                       graph_, known, std::vector<Id>{target}, extents))
                     .first;
        }
        return *it->second;
    }

    bool distributed(Id d) const {
        auto it = distributions_.find(d);
        if (it == distributions_.end())
            it = distributions_.emplace(d, distributionOf(graph_, d)).first;
        return it->second.distributed;
    }

    Distribution const& distribution(Id d) {
        auto it = distributions_.find(d);
        if (it == distributions_.end())
            it = distributions_.emplace(d, distributionOf(graph_, d)).first;
        return it->second;
    }

    void bindGroup(std::int64_t g) {
        group_ = g;
        bind(workgroups_, g);
    }
    void bindLane(std::int64_t lane) {
        lane_ = lane;
        bind(workitems_, lane);
    }
    void unbindGrid() {
        for (Id d : workgroups_)
            coordinates_.erase(d);
        for (Id d : workitems_)
            coordinates_.erase(d);
        group_ = lane_ = -1;
    }

    // Calls fn() once per instance of a value of `d`: per workgroup, per workitem, or once.
    template <class F>
    void forEachInstance(Id d, F&& fn) {
        auto const kind = graph_.coordinates.node(d).kind;
        if (perWorkgroup(kind) || perWorkitem(kind)) {
            for (std::int64_t g = 0; g < groups_; ++g) {
                bindGroup(g);
                if (perWorkitem(kind))
                    for (std::int64_t lane = 0; lane < lanes_; ++lane) {
                        bindLane(lane);
                        fn();
                    }
                else
                    fn();
            }
            unbindGrid();
        } else
            fn();
    }

    // Calls fn(e) for every element e of data dimension `domain`, in the context of the
    // workgroup and workitem that own it.
    template <class F>
    void forEachElement(Id op, Id domain, F&& fn) {
        Distribution const& dist = distribution(domain);
        if (!dist.distributed) {
            forEachInstance(domain, [&] {
                std::int64_t const n = static_cast<std::int64_t>(storage(domain).size());
                for (std::int64_t e = 0; e < n; ++e)
                    fn(e);
            });
            return;
        }
        std::vector<std::int64_t> localSizes;
        std::int64_t combinations = 1;
        for (Id l : dist.locals) {
            localSizes.push_back(size(l));
            combinations *= localSizes.back();
        }
        // A value spread over workgroups only is computed once per workgroup, as any one of its
        // workitems would.
        std::int64_t const lanes = dist.overWorkitems ? lanes_ : 1;
        for (std::int64_t g = 0; g < groups_; ++g) {
            bindGroup(g);
            for (std::int64_t lane = 0; lane < lanes; ++lane) {
                if (dist.overWorkitems)
                    bindLane(lane);
                std::vector<Id> known;
                std::vector<std::int64_t> values;
                for (auto const& [d, v] : coordinates_) {
                    known.push_back(d);
                    values.push_back(v);
                }
                known.insert(known.end(), dist.locals.begin(), dist.locals.end());
                values.resize(known.size(), 0);
                CoordinatePlan const& p = plan(op, known, domain);
                std::int64_t e = 0;
                for (std::int64_t c = 0; c < combinations; ++c) {
                    std::int64_t rest = c;
                    for (std::size_t k = dist.locals.size(); k-- > 0;) {
                        values[values.size() - dist.locals.size() + k] = rest % localSizes[k];
                        rest /= localSizes[k];
                    }
                    if (p.run(values, std::span(&e, 1)) && e < size(domain))
                        fn(e);
                }
            }
        }
        unbindGrid();
    }

    // Loads (memory -> domain) and stores (domain -> memory), element by element of the
    // non-memory side, with addresses from the coordinate transforms.
    void move(Id op, Id source, Id dest, bool load) {
        Id const memory = load ? source : dest;
        Id const domain = load ? dest : source;
        bool const global = graph_.coordinates.node(memory).kind == DimensionKind::User;
        DataType const domainType = graph_.coordinates.node(domain).dtype.value_or(DataType::F64);
        DataType const memoryType =
            global ? tensor(memory).dtype
                   : graph_.coordinates.node(memory).dtype.value_or(DataType::F64);
        // The plan and the buffers depend only on the workgroup and workitem bound, so they are
        // looked up once per instance rather than once per element.
        std::optional<std::pair<std::int64_t, std::int64_t>> instance;
        CoordinatePlan const* p = nullptr;
        std::vector<double>* memoryValues = nullptr;
        std::vector<double>* domainValues = nullptr;
        std::vector<std::int64_t> values;
        std::int64_t address = 0;
        forEachElement(op, domain, [&](std::int64_t e) {
            if (instance != std::pair(group_, lane_)) {
                instance = std::pair(group_, lane_);
                std::vector<Id> known;
                for (auto const& [d, v] : coordinates_)
                    if (d != domain)
                        known.push_back(d);
                known.push_back(domain);
                p = &plan(op, known, memory);
                memoryValues = global ? &tensor(memory).data : &storage(memory);
                domainValues = &storage(domain);
            }
            values.clear();
            for (auto const& [d, v] : coordinates_)
                if (d != domain)
                    values.push_back(v);
            values.push_back(e);
            bool const inside = p->run(values, std::span(&address, 1));
            bool const valid =
                inside && address >= 0 && static_cast<std::size_t>(address) < memoryValues->size();
            auto const at = static_cast<std::size_t>(e);
            if (load)
                (*domainValues)[at] =
                    valid ? roundTo(domainType, (*memoryValues)[static_cast<std::size_t>(address)])
                          : 0.0;
            else if (valid)
                (*memoryValues)[static_cast<std::size_t>(address)] =
                    roundTo(memoryType, (*domainValues)[at]);
        });
    }

    void assign(Id op, Operation const& operation) {
        Id const dest = graph_.mapping.get(op, role::dest);
        auto const& dim = graph_.coordinates.node(dest);
        if (!holdsData(dim.kind)) { // a loop counter or other index
            coordinates_[dest] = evaluateInt(*operation.expression, *this);
            return;
        }
        DataType const type = dim.dtype.value_or(operation.dtype.value_or(DataType::F64));
        rowLengths_ = broadcastRows(*operation.expression, dest);
        forEachElement(op, dest, [&](std::int64_t e) {
            element_ = static_cast<std::size_t>(e);
            storage(dest)[element_] =
                convertValue(type, evaluate(*operation.expression, *this)).asDouble();
        });
        element_ = 0;
        rowLengths_.clear();
    }

    // The operands of an Assign into `dest` whose shape is the dest's without its last axis (a
    // Reduce's result), each with that axis's length: element e of the dest reads their element
    // e / length, the value of its row, broadcast along the axis (docs/command.md, Execute).
    std::map<Id, std::size_t> broadcastRows(Expression const& e, Id dest) const {
        std::map<Id, std::size_t> rows;
        auto const full = shape(dest);
        auto visit = [&](auto const& self, Expression const& node) -> void {
            using namespace expr;
            if (auto const* d = std::get_if<DataValue>(&node)) {
                auto const operand = shape(d->dimension);
                if (!operand.empty() && operand.size() + 1 == full.size() &&
                    std::equal(operand.begin(), operand.end(), full.begin()))
                    rows[d->dimension] =
                        static_cast<std::size_t>(std::max<std::int64_t>(1, full.back()));
            } else if (auto const* u = std::get_if<Unary>(&node))
                self(self, *u->arg);
            else if (auto const* b = std::get_if<Binary>(&node)) {
                self(self, *b->lhs);
                self(self, *b->rhs);
            } else if (auto const* s = std::get_if<Select>(&node)) {
                self(self, *s->condition);
                self(self, *s->ifTrue);
                self(self, *s->ifFalse);
            } else if (auto const* c = std::get_if<Convert>(&node))
                self(self, *c->arg);
        };
        visit(visit, e);
        return rows;
    }

    std::vector<std::int64_t> shape(Id d) const {
        std::vector<std::int64_t> result;
        for (auto const& s : graph_.coordinates.node(d).shape)
            result.push_back(evaluateInt(*s, *this));
        return result;
    }

    // Each element (i, j) of the dest is the dot product of row i of op(lhs) and column j of
    // op(rhs), computed by the element's owner.
    void multiply(Id op, Operation const& operation) {
        Id const lhs = graph_.mapping.get(op, role::lhs), rhs = graph_.mapping.get(op, role::rhs);
        Id const dest = graph_.mapping.get(op, role::dest);
        auto const a = shape(lhs), b = shape(rhs);
        if (a.size() != 2 || b.size() != 2)
            fail("Multiply #{} needs two-axis tiles", op);
        std::int64_t const m = a[operation.transposeA ? 1 : 0], k = a[operation.transposeA ? 0 : 1];
        std::int64_t const n = b[operation.transposeB ? 0 : 1];
        if (b[operation.transposeB ? 1 : 0] != k)
            fail("Multiply #{}: inner sizes {} and {} differ", op, k,
                 b[operation.transposeB ? 1 : 0]);
        if (size(dest) != m * n)
            fail("Multiply #{}: dest has {} elements, not {} x {}", op, size(dest), m, n);
        DataType const type = graph_.coordinates.node(dest).dtype.value_or(DataType::F32);
        forEachElement(op, dest, [&](std::int64_t e) {
            std::int64_t const i = e / n, j = e % n;
            auto const& x = storage(lhs);
            auto const& y = storage(rhs);
            double sum = 0;
            for (std::int64_t p = 0; p < k; ++p)
                sum += x[static_cast<std::size_t>(operation.transposeA ? p * m + i : i * k + p)] *
                       y[static_cast<std::size_t>(operation.transposeB ? j * k + p : p * n + j)];
            storage(dest)[static_cast<std::size_t>(e)] = roundTo(type, sum);
        });
    }

    // Each row of the source is combined into one element of the dest, by that element's owner.
    void reduce(Id op, Operation const& operation) {
        Id const source = graph_.mapping.get(op, role::source),
                 dest = graph_.mapping.get(op, role::dest);
        DataType const type = graph_.coordinates.node(dest).dtype.value_or(DataType::F64);
        forEachElement(op, dest, [&](std::int64_t row) {
            auto const s = shape(source);
            std::int64_t const last = s.empty() ? 1 : s.back();
            auto const& in = storage(source);
            if ((row + 1) * last > static_cast<std::int64_t>(in.size()))
                fail("Reduce #{}: row {} is outside the source's {} elements", op, row, in.size());
            bool const sum =
                operation.combine == Combine::Sum || operation.combine == Combine::Mean;
            double acc = sum ? 0.0
                         : operation.combine == Combine::Max
                             ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity();
            for (std::int64_t c = 0; c < last; ++c) {
                double const v = in[static_cast<std::size_t>(row * last + c)];
                acc = sum                                 ? acc + v
                      : operation.combine == Combine::Max ? std::max(acc, v)
                                                          : std::min(acc, v);
            }
            if (operation.combine == Combine::Mean)
                acc /= static_cast<double>(last);
            storage(dest)[static_cast<std::size_t>(row)] = roundTo(type, acc);
        });
    }

    KernelGraph const& graph_;
    Bindings& bindings_;
    InterpreterOptions options_;
    std::vector<Id> workgroups_, workitems_;
    std::int64_t groups_ = 1, lanes_ = 1, lane_ = -1, group_ = -1;
    std::size_t element_ = 0;
    std::map<Id, std::size_t> rowLengths_; ///< broadcast operands of the Assign being run
    std::map<Id, std::int64_t> coordinates_;
    mutable std::map<Id, std::int64_t> sizes_;
    mutable std::map<std::tuple<Id, std::int64_t, std::int64_t>, std::vector<double>> storage_;
    std::map<std::pair<Id, ControlEdgeKind>, std::vector<Id>> sequences_, successors_;
    std::map<std::tuple<Id, std::vector<Id>, Id>, std::unique_ptr<CoordinatePlan>> plans_;
    mutable std::map<Id, Distribution> distributions_;
};

} // namespace

void interpret(KernelGraph const& graph, Bindings& bindings, InterpreterOptions const& options) {
    Interpreter(graph, bindings, options).run();
}

} // namespace kiln
