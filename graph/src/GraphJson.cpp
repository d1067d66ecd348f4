#include "kiln/graph/GraphJson.h"

#include "kiln/graph/JsonExpression.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kiln {

namespace {

using Json = OrderedJson;

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// How deep containers nest below `value`: 0 for a scalar.
int height(Json const& value) {
    int h = 0;
    if (value.is_structured())
        for (auto const& child : value)
            h = std::max(h, height(child));
    return value.is_structured() ? h + 1 : 0;
}

std::string scalarText(Json const& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

/// One line for small containers (an object of scalars and scalar arrays, an array of
/// scalars), one line per member or element for the others.
void write(std::string& out, Json const& value, int indent) {
    if (!value.is_structured()) {
        out += scalarText(value);
        return;
    }
    bool const isObject = value.is_object();
    char const open = isObject ? '{' : '[', close = isObject ? '}' : ']';
    int const h = height(value);
    bool const inline_ = value.empty() || h <= 1 || (h == 2 && isObject && indent > 0);
    out += open;
    bool first = true;
    std::string const pad(static_cast<std::size_t>(indent + 2), ' ');
    for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first)
            out += inline_ ? ", " : ",";
        first = false;
        if (!inline_) {
            out += '\n';
            out += pad;
        }
        if (isObject) {
            out += scalarText(Json(it.key()));
            out += ": ";
        }
        write(out, *it, indent + 2);
    }
    if (!inline_ && !value.empty()) {
        out += '\n';
        out += std::string(static_cast<std::size_t>(indent), ' ');
    }
    out += close;
}

Json ids(std::vector<Id> const& list) {
    Json out = Json::array();
    for (Id id : list)
        out.push_back(id);
    return out;
}

Json dimensionJson(Id id, Dimension const& d) {
    Json j = {{"id", id}, {"kind", name(d.kind)}};
    if (!d.name.empty())
        j["name"] = d.name;
    if (d.axis != -1)
        j["axis"] = d.axis;
    if (d.dtype)
        j["dtype"] = name(*d.dtype);
    if (d.size)
        j["size"] = toString(d.size);
    if (d.stride)
        j["stride"] = toString(d.stride);
    if (!d.shape.empty()) {
        Json shape = Json::array();
        for (auto const& s : d.shape)
            shape.push_back(s ? toString(s) : std::string());
        j["shape"] = std::move(shape);
    }
    return j;
}

Json operationJson(Id id, Operation const& op) {
    Json j = {{"id", id}, {"kind", name(op.kind)}};
    if (!op.name.empty())
        j["name"] = op.name;
    if (op.dtype)
        j["dtype"] = name(*op.dtype);
    if (op.expression)
        j["expression"] = toString(op.expression);
    if (op.transposeA)
        j["transA"] = true;
    if (op.transposeB)
        j["transB"] = true;
    if (op.combine != Combine::Sum)
        j["combine"] = name(op.combine);
    return j;
}

} // namespace

std::string saveGraph(KernelGraph const& graph) {
    Json root = {{"format", kGraphJsonFormat},
                 {"version", kGraphJsonVersion},
                 {"name", graph.name},
                 {"nextId", graph.nextId()}};
    Json arguments = Json::array();
    for (auto const& a : graph.arguments)
        arguments.push_back({{"name", a.name}, {"kind", name(a.kind)}, {"dtype", name(a.dtype)}});
    root["arguments"] = std::move(arguments);

    Json nodes = Json::array(), edges = Json::array();
    for (Id id : graph.coordinates.nodes())
        nodes.push_back(dimensionJson(id, graph.coordinates.node(id)));
    for (Id id : graph.coordinates.edges())
        edges.push_back({{"id", id},
                         {"kind", name(graph.coordinates.edge(id).kind)},
                         {"tails", ids(graph.coordinates.tails(id))},
                         {"heads", ids(graph.coordinates.heads(id))}});
    root["coordinates"] = {{"nodes", std::move(nodes)}, {"edges", std::move(edges)}};

    Json operations = Json::array(), controlEdges = Json::array();
    for (Id id : graph.control.nodes())
        operations.push_back(operationJson(id, graph.control.node(id)));
    for (Id id : graph.control.edges())
        controlEdges.push_back({{"id", id},
                                {"kind", name(graph.control.edge(id).kind)},
                                {"from", graph.control.tails(id).at(0)},
                                {"to", graph.control.heads(id).at(0)}});
    root["control"] = {{"operations", std::move(operations)}, {"edges", std::move(controlEdges)}};

    Json mapping = Json::array();
    for (auto const& [op, connections] : graph.mapping.all())
        for (auto const& c : connections)
            mapping.push_back({{"op", op}, {"role", c.role}, {"dimension", c.dimension}});
    root["mapping"] = std::move(mapping);

    std::string out;
    write(out, root, 0);
    out += '\n';
    return out;
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

namespace {

template <class E>
std::vector<std::string_view> names(std::span<E const> kinds) {
    std::vector<std::string_view> out;
    for (E kind : kinds)
        out.push_back(name(kind));
    return out;
}

constexpr std::array<DataType, 7> kDataTypes = {DataType::Bool, DataType::I32,  DataType::I64,
                                                DataType::F16,  DataType::BF16, DataType::F32,
                                                DataType::F64};
constexpr std::array<KernelArgument::Kind, 3> kArgumentKinds = {
    KernelArgument::Kind::Tensor, KernelArgument::Kind::Scalar, KernelArgument::Kind::Size};
constexpr std::array<Combine, 4> kCombines = {Combine::Sum, Combine::Max, Combine::Min,
                                              Combine::Mean};

template <class E>
E readChoice(JsonValue const& value, std::span<E const> choices, std::string_view what) {
    static_assert(std::is_enum_v<E>);
    auto const list = names(choices);
    return choices[value.asChoice(list, what)];
}

/// Every graph leaf (size#N, stride#N, index#N, value#N) in `e`.
void collectLeaves(Expression const& e, std::vector<std::pair<std::string, Id>>& leaves) {
    using namespace expr;
    if (auto const* s = std::get_if<DimensionSize>(&e))
        leaves.emplace_back(toString(e), s->dimension);
    else if (auto const* t = std::get_if<DimensionStride>(&e))
        leaves.emplace_back(toString(e), t->dimension);
    else if (auto const* i = std::get_if<Index>(&e))
        leaves.emplace_back(toString(e), i->dimension);
    else if (auto const* d = std::get_if<DataValue>(&e))
        leaves.emplace_back(toString(e), d->dimension);
    else if (auto const* u = std::get_if<Unary>(&e))
        collectLeaves(*u->arg, leaves);
    else if (auto const* b = std::get_if<Binary>(&e)) {
        collectLeaves(*b->lhs, leaves);
        collectLeaves(*b->rhs, leaves);
    } else if (auto const* sel = std::get_if<Select>(&e)) {
        collectLeaves(*sel->condition, leaves);
        collectLeaves(*sel->ifTrue, leaves);
        collectLeaves(*sel->ifFalse, leaves);
    } else if (auto const* c = std::get_if<Convert>(&e))
        collectLeaves(*c->arg, leaves);
}

/// Names in a graph's expressions: its arguments, and value#N of its data dimensions.
class GraphNames : public NameResolver {
public:
    GraphNames(KernelGraph const& graph, std::map<Id, std::optional<DataType>> const& dimensions)
        : graph_(graph)
        , dimensions_(dimensions) {}

    ExprPtr name(std::string_view n) const override {
        if (auto const* a = graph_.findArgument(n))
            return argument(a->name, a->dtype);
        return nullptr;
    }
    std::optional<DataType> dataType(Id dimension) const override {
        auto it = dimensions_.find(dimension);
        return it == dimensions_.end() ? std::nullopt : it->second;
    }

private:
    KernelGraph const& graph_;
    std::map<Id, std::optional<DataType>> const& dimensions_;
};

class GraphReader {
public:
    explicit GraphReader(JsonValue const& root)
        : root_(root) {}

    KernelGraph read() {
        root_.allowOnly({"$schema", "format", "version", "name", "nextId", "arguments",
                         "coordinates", "control", "mapping"});
        JsonValue const format = root_["format"];
        if (format.asString() != kGraphJsonFormat)
            format.fail(
                fmt::format("expected format '{}', got '{}'", kGraphJsonFormat, format.asString()));
        JsonValue const version = root_["version"];
        if (version.asInt() != kGraphJsonVersion)
            version.fail(fmt::format("unsupported {} version {}; this Kiln reads version {}",
                                     kGraphJsonFormat, version.asInt(), kGraphJsonVersion));
        graph_.name = root_["name"].asString();
        readArguments(root_["arguments"]);

        JsonValue const coordinates = root_["coordinates"];
        coordinates.allowOnly({"nodes", "edges"});
        JsonValue const control = root_["control"];
        control.allowOnly({"operations", "edges"});
        auto const nodes = coordinates["nodes"].elements();
        auto const operations = control["operations"].elements();
        // Ids and data types first: expressions may name any dimension (value#N needs its type).
        for (auto const& node : nodes) {
            Id const id = claimId(node);
            auto const kind = readChoice(node["kind"], allDimensionKinds(), "dimension kind");
            std::optional<DataType> dtype;
            if (auto t = node.find("dtype"))
                dtype = readChoice(*t, std::span<DataType const>(kDataTypes), "dtype");
            dimensions_[id] = holdsData(kind) ? dtype : std::nullopt;
        }
        for (auto const& op : operations)
            claimId(op);

        for (auto const& node : nodes)
            readDimension(node);
        for (auto const& edge : coordinates["edges"].elements())
            readCoordinateEdge(edge);
        for (auto const& op : operations)
            readOperation(op);
        for (auto const& edge : control["edges"].elements())
            readControlEdge(edge);
        for (auto const& entry : root_["mapping"].elements())
            readConnection(entry);

        Id const largest = ids_.empty() ? 0 : ids_.rbegin()->first;
        if (auto next = root_.find("nextId")) {
            Id const n = static_cast<Id>(next->asInt(1, kMaxGraphJsonId + 1));
            if (n <= largest)
                next->fail(fmt::format("nextId {} must be greater than every id in the graph (the "
                                       "largest is {})",
                                       n, largest));
            graph_.reserveId(n - 1);
        }
        graph_.reserveId(largest);
        return std::move(graph_);
    }

private:
    void readArguments(JsonValue const& arguments) {
        for (auto const& a : arguments.elements()) {
            a.allowOnly({"name", "kind", "dtype"});
            JsonValue const nameValue = a["name"];
            std::string const& n = nameValue.asNonEmptyString();
            if (graph_.findArgument(n))
                nameValue.fail(fmt::format("argument '{}' is declared twice", n));
            auto const kind = readChoice(
                a["kind"], std::span<KernelArgument::Kind const>(kArgumentKinds), "argument kind");
            auto const dtype =
                readChoice(a["dtype"], std::span<DataType const>(kDataTypes), "dtype");
            graph_.arguments.push_back({n, kind, dtype});
        }
    }

    Id claimId(JsonValue const& element) {
        JsonValue const idValue = element["id"];
        Id const id = static_cast<Id>(idValue.asInt(1, kMaxGraphJsonId));
        auto [it, fresh] = ids_.emplace(id, idValue.location());
        if (!fresh)
            idValue.fail(fmt::format("id {} is used twice; first at line {}, column {}", id,
                                     it->second.line, it->second.column));
        return id;
    }

    ExprPtr readExpression(JsonValue const& value) {
        ExprPtr e = parseExpression(value, GraphNames(graph_, dimensions_));
        std::vector<std::pair<std::string, Id>> leaves;
        collectLeaves(*e, leaves);
        for (auto const& [text, id] : leaves)
            if (!dimensions_.count(id)) {
                std::size_t const at = value.isString() ? value.asString().find(text) : 0;
                value.failInString(at == std::string::npos ? 0 : at,
                                   fmt::format("{} names no dimension of this graph", text));
            }
        return e;
    }

    void readDimension(JsonValue const& node) {
        node.allowOnly({"id", "kind", "name", "axis", "dtype", "size", "stride", "shape"});
        Id const id = static_cast<Id>(node["id"].asInt());
        Dimension d{.kind = readChoice(node["kind"], allDimensionKinds(), "dimension kind")};
        d.name = node.stringOr("name", "");
        if (auto axis = node.find("axis"))
            d.axis = static_cast<int>(axis->asInt(-1, 1 << 20));
        if (auto t = node.find("dtype"))
            d.dtype = readChoice(*t, std::span<DataType const>(kDataTypes), "dtype");
        if (auto size = node.find("size"))
            d.size = readExpression(*size);
        if (auto stride = node.find("stride"))
            d.stride = readExpression(*stride);
        if (auto shape = node.find("shape"))
            for (auto const& s : shape->elements())
                d.shape.push_back(readExpression(s));
        graph_.coordinates.addNode(id, std::move(d));
    }

    std::vector<Id> readEnds(JsonValue const& list, std::string_view role, int min, int max,
                             std::string_view kindName) {
        std::vector<Id> out;
        for (auto const& e : list.elements()) {
            Id const id = static_cast<Id>(e.asInt(1, kMaxGraphJsonId));
            if (!graph_.coordinates.isNode(id))
                e.fail(fmt::format("{} {} is not a dimension of this graph", role, id));
            out.push_back(id);
        }
        int const n = static_cast<int>(out.size());
        if (n < min || (max >= 0 && n > max)) {
            std::string const expected = max < 0      ? fmt::format("at least {}", min)
                                         : min == max ? fmt::format("{}", min)
                                                      : fmt::format("{} to {}", min, max);
            list.fail(fmt::format("{} takes {} {}{}, got {}", kindName, expected, role,
                                  max == 1 ? "" : "s", n));
        }
        return out;
    }

    void readCoordinateEdge(JsonValue const& edge) {
        edge.allowOnly({"id", "kind", "tails", "heads"});
        Id const id = claimId(edge);
        auto const kind =
            readChoice(edge["kind"], allCoordinateEdgeKinds(), "coordinate edge kind");
        Arity const a = arity(kind);
        auto const tails = readEnds(edge["tails"], "tail", a.minTails, a.maxTails, name(kind));
        auto const heads = readEnds(edge["heads"], "head", a.minHeads, a.maxHeads, name(kind));
        graph_.coordinates.addEdge(id, CoordinateEdge{kind}, tails, heads);
    }

    void readOperation(JsonValue const& op) {
        op.allowOnly({"id", "kind", "name", "dtype", "expression", "transA", "transB", "combine"});
        Id const id = static_cast<Id>(op["id"].asInt());
        Operation o{.kind = readChoice(op["kind"], allOperationKinds(), "operation kind")};
        o.name = op.stringOr("name", "");
        if (auto t = op.find("dtype"))
            o.dtype = readChoice(*t, std::span<DataType const>(kDataTypes), "dtype");
        if (auto e = op.find("expression"))
            o.expression = readExpression(*e);
        o.transposeA = op.boolOr("transA", false);
        o.transposeB = op.boolOr("transB", false);
        if (auto c = op.find("combine"))
            o.combine = readChoice(*c, std::span<Combine const>(kCombines), "combine");
        graph_.control.addNode(id, std::move(o));
    }

    Id readOperationId(JsonValue const& value, std::string_view role) {
        Id const id = static_cast<Id>(value.asInt(1, kMaxGraphJsonId));
        if (!graph_.control.isNode(id))
            value.fail(fmt::format("{} {} is not an operation of this graph", role, id));
        return id;
    }

    void readControlEdge(JsonValue const& edge) {
        edge.allowOnly({"id", "kind", "from", "to"});
        Id const id = claimId(edge);
        auto const kind = readChoice(edge["kind"], allControlEdgeKinds(), "control edge kind");
        Id const from = readOperationId(edge["from"], "from");
        Id const to = readOperationId(edge["to"], "to");
        graph_.control.addEdge(id, ControlEdge{kind}, {from}, {to});
    }

    void readConnection(JsonValue const& entry) {
        entry.allowOnly({"op", "role", "dimension"});
        Id const op = readOperationId(entry["op"], "op");
        JsonValue const roleValue = entry["role"];
        std::string const& role = roleValue.asNonEmptyString();
        if (graph_.mapping.find(op, role))
            roleValue.fail(fmt::format("operation {} has two '{}' connections", op, role));
        JsonValue const dimension = entry["dimension"];
        Id const d = static_cast<Id>(dimension.asInt(1, kMaxGraphJsonId));
        if (!graph_.coordinates.isNode(d))
            dimension.fail(fmt::format("dimension {} is not a dimension of this graph", d));
        graph_.mapping.connect(op, role, d);
    }

    JsonValue root_;
    KernelGraph graph_;
    std::map<Id, SourceLocation> ids_;
    std::map<Id, std::optional<DataType>> dimensions_;
};

} // namespace

KernelGraph readGraph(JsonValue const& root) {
    return GraphReader(root).read();
}

KernelGraph parseGraph(std::string_view text, std::string const& file) {
    return readGraph(parseJson(text, file));
}

KernelGraph loadGraph(std::string const& path) {
    return readGraph(readJsonFile(path));
}

} // namespace kiln
