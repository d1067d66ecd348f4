#include "kiln/graph/Translate.h"

#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <map>

namespace kiln {

namespace {

ExprPtr product(std::vector<ExprPtr> const& shape) {
    ExprPtr p = literal(1);
    for (auto const& s : shape)
        p = p * s;
    return simplify(p);
}

// Replaces Tag leaves by the DataValue of the dimension holding that tag's value.
ExprPtr bindTags(ExprPtr const& e, std::map<std::string, Id> const& tiles) {
    using namespace expr;
    if (auto const* t = std::get_if<Tag>(e.get()))
        return dataValue(tiles.at(t->name), t->type);
    if (auto const* u = std::get_if<Unary>(e.get()))
        return unary(u->op, bindTags(u->arg, tiles));
    if (auto const* b = std::get_if<Binary>(e.get()))
        return binary(b->op, bindTags(b->lhs, tiles), bindTags(b->rhs, tiles));
    if (auto const* s = std::get_if<Select>(e.get()))
        return select(bindTags(s->condition, tiles), bindTags(s->ifTrue, tiles),
                      bindTags(s->ifFalse, tiles));
    if (auto const* c = std::get_if<Convert>(e.get()))
        return convert(c->type, bindTags(c->arg, tiles));
    return e;
}

class Translator {
public:
    explicit Translator(Command const& command)
        : command_(command) {}

    KernelGraph run() {
        graph_.name = command_.name();
        for (auto const& t : command_.tensors())
            graph_.arguments.push_back({t.name, KernelArgument::Kind::Tensor, t.dtype});
        for (auto const& s : command_.scalars())
            graph_.arguments.push_back({s.name, KernelArgument::Kind::Scalar, s.dtype});
        for (auto const& s : command_.sizes())
            graph_.arguments.push_back({s, KernelArgument::Kind::Size, DataType::I64});

        kernel_ = graph_.addOperation({.kind = OperationKind::Kernel, .name = command_.name()});
        for (auto const& op : command_.operations())
            append(translate(op));
        return std::move(graph_);
    }

private:
    // The User dimension of a tensor and its SubDimensions, one per axis.
    struct UserDims {
        Id user;
        std::vector<Id> subs;
    };

    UserDims userDimensions(std::string const& tensorName) {
        auto const& t = *command_.findTensor(tensorName);
        UserDims dims;
        dims.user = graph_.addDimension({.kind = DimensionKind::User,
                                         .size = product(t.shape),
                                         .name = t.name,
                                         .dtype = t.dtype});
        for (std::size_t k = 0; k < t.shape.size(); ++k)
            dims.subs.push_back(graph_.addDimension({.kind = DimensionKind::SubDimension,
                                                     .size = t.shape[k],
                                                     .stride = t.strides[k],
                                                     .axis = static_cast<int>(k)}));
        return dims;
    }

    Id valueDimension(std::string const& tagName, DimensionKind kind) {
        auto const& info = command_.values().at(tagName);
        Id const id = graph_.addDimension({.kind = kind,
                                           .size = product(info.shape),
                                           .name = tagName,
                                           .dtype = info.dtype,
                                           .shape = info.shape});
        tiles_[tagName] = id;
        return id;
    }

    Id translate(CommandOperation const& op) {
        switch (op.kind) {
        case CommandOpKind::LoadTiled:
        case CommandOpKind::LoadLinear: {
            bool const linear = op.kind == CommandOpKind::LoadLinear;
            auto const dims = userDimensions(op.tensor);
            Id const tile =
                valueDimension(op.tag, linear ? DimensionKind::Linear : DimensionKind::MacroTile);
            graph_.addCoordinateEdge(CoordinateEdgeKind::Split, {dims.user}, dims.subs);
            graph_.addCoordinateEdge(CoordinateEdgeKind::Flatten, dims.subs, {tile});
            graph_.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {dims.user}, {tile});
            Id const load = graph_.addOperation(
                {.kind = linear ? OperationKind::LoadLinear : OperationKind::LoadTiled,
                 .dtype = command_.findTensor(op.tensor)->dtype});
            graph_.mapping.connect(load, role::source, dims.user);
            graph_.mapping.connect(load, role::dest, tile);
            return load;
        }
        case CommandOpKind::StoreTiled:
        case CommandOpKind::StoreLinear: {
            bool const linear = op.kind == CommandOpKind::StoreLinear;
            auto const dims = userDimensions(op.tensor);
            Id const tile = tiles_.at(op.inputs[0]);
            graph_.addCoordinateEdge(CoordinateEdgeKind::Join, dims.subs, {dims.user});
            graph_.addCoordinateEdge(CoordinateEdgeKind::Flatten, dims.subs, {tile});
            graph_.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {tile}, {dims.user});
            Id const store = graph_.addOperation(
                {.kind = linear ? OperationKind::StoreLinear : OperationKind::StoreTiled,
                 .dtype = command_.findTensor(op.tensor)->dtype});
            graph_.mapping.connect(store, role::source, tile);
            graph_.mapping.connect(store, role::dest, dims.user);
            return store;
        }
        case CommandOpKind::Execute: {
            ExprPtr const body = bindTags(op.expression, tiles_);
            std::vector<Id> operands;
            collectOperands(*body, operands);
            // The dest is held as the operand of its shape is; an operand of one axis fewer (a
            // Reduce's result, broadcast along the last axis) is read at the dest's row.
            auto const& shape = command_.values().at(op.tag).shape;
            Id const like = *std::find_if(operands.begin(), operands.end(), [&](Id d) {
                return graph_.coordinates.node(d).shape.size() == shape.size();
            });
            Id const dest = valueDimension(op.tag, graph_.coordinates.node(like).kind);
            graph_.addCoordinateEdge(CoordinateEdgeKind::DataFlow, operands, {dest});
            Id const assign = graph_.addOperation({.kind = OperationKind::Assign,
                                                   .expression = body,
                                                   .dtype = command_.values().at(op.tag).dtype});
            graph_.mapping.connect(assign, role::dest, dest);
            return assign;
        }
        case CommandOpKind::Multiply: {
            Id const lhs = tiles_.at(op.inputs[0]), rhs = tiles_.at(op.inputs[1]);
            Id const dest = valueDimension(op.tag, DimensionKind::MacroTile);
            graph_.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {lhs, rhs}, {dest});
            Id const multiply = graph_.addOperation({.kind = OperationKind::Multiply,
                                                     .dtype = command_.values().at(op.tag).dtype,
                                                     .transposeA = op.transposeA,
                                                     .transposeB = op.transposeB});
            graph_.mapping.connect(multiply, role::lhs, lhs);
            graph_.mapping.connect(multiply, role::rhs, rhs);
            graph_.mapping.connect(multiply, role::dest, dest);
            return multiply;
        }
        case CommandOpKind::Reduce: {
            Id const source = tiles_.at(op.inputs[0]);
            Id const dest = valueDimension(op.tag, DimensionKind::MacroTile);
            graph_.addCoordinateEdge(CoordinateEdgeKind::DataFlow, {source}, {dest});
            Id const reduce = graph_.addOperation({.kind = OperationKind::Reduce,
                                                   .dtype = command_.values().at(op.tag).dtype,
                                                   .combine = op.combine});
            graph_.mapping.connect(reduce, role::source, source);
            graph_.mapping.connect(reduce, role::dest, dest);
            return reduce;
        }
        }
        KILN_ASSERT(false, "unhandled Command operation {}", name(op.kind));
        return 0;
    }

    static void collectOperands(Expression const& e, std::vector<Id>& ids) {
        using namespace expr;
        if (auto const* d = std::get_if<DataValue>(&e)) {
            if (std::find(ids.begin(), ids.end(), d->dimension) == ids.end())
                ids.push_back(d->dimension);
        } else if (auto const* u = std::get_if<Unary>(&e))
            collectOperands(*u->arg, ids);
        else if (auto const* b = std::get_if<Binary>(&e)) {
            collectOperands(*b->lhs, ids);
            collectOperands(*b->rhs, ids);
        } else if (auto const* s = std::get_if<Select>(&e)) {
            collectOperands(*s->condition, ids);
            collectOperands(*s->ifTrue, ids);
            collectOperands(*s->ifFalse, ids);
        } else if (auto const* c = std::get_if<Convert>(&e))
            collectOperands(*c->arg, ids);
    }

    // Places `op` after the previous operation (or first in the Kernel's body).
    void append(Id op) {
        if (last_)
            graph_.addControlEdge(ControlEdgeKind::Sequence, *last_, op);
        else
            graph_.addControlEdge(ControlEdgeKind::Body, kernel_, op);
        last_ = op;
    }

    Command const& command_;
    KernelGraph graph_;
    Id kernel_ = 0;
    std::optional<Id> last_;
    std::map<std::string, Id> tiles_;
};

} // namespace

KernelGraph translate(Command const& command) {
    return Translator(command).run();
}

} // namespace kiln
