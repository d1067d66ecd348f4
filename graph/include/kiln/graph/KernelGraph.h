// KernelGraph.h: the intermediate representation every Kiln stage reads and rewrites.
//
// Three parts: the coordinate hypergraph (Dimensions and the transforms between their indices,
// plus DataFlow), the control graph (Operations and their order), and the Mapping, which says
// which dimensions each operation reads and writes, by role. The graph also keeps the kernel's
// arguments, taken from the Command, so that expressions can name them and launchers can check
// them. Translation builds a high-level KernelGraph; rule sets lower it step by step.
#pragma once

#include "kiln/graph/CoordinateTransform.h"
#include "kiln/graph/Dimension.h"
#include "kiln/graph/Hypergraph.h"
#include "kiln/graph/Operation.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

using CoordinateGraph = Hypergraph<Dimension, CoordinateEdge>;
using ControlGraph = Hypergraph<Operation, ControlEdge>;

/// A kernel parameter: a tensor's base pointer, a scalar value, or an integer size or stride.
struct KernelArgument {
    enum class Kind : std::uint8_t { Tensor, Scalar, Size };
    std::string name;
    Kind kind;
    DataType dtype; ///< Tensor: element type; Scalar: its type; Size: i64
};
std::string_view name(KernelArgument::Kind kind);

/// An operation's use of a dimension: the role says how ("user", "tile", "lhs", "dest", ...).
struct Connection {
    std::string role;
    Id dimension;
    bool operator==(Connection const&) const = default;
};

/// Which dimensions each operation reads and writes.
class Mapping {
public:
    void connect(Id operation, std::string role, Id dimension);
    /// Removes the connection of `operation` in `role`, if any.
    void disconnect(Id operation, std::string_view role);
    /// Removes every connection of `operation`.
    void forget(Id operation);

    /// The dimension `operation` uses in `role`, if any.
    std::optional<Id> find(Id operation, std::string_view role) const;
    /// The dimension `operation` uses in `role`; an InternalError when there is none.
    Id get(Id operation, std::string_view role) const;
    /// Every connection of `operation`, in the order they were made.
    std::vector<Connection> const& connections(Id operation) const;
    /// Operations that use `dimension`, in id order.
    std::vector<Id> users(Id dimension) const;
    /// Every operation that has connections, in id order.
    std::map<Id, std::vector<Connection>> const& all() const { return connections_; }

private:
    std::map<Id, std::vector<Connection>> connections_;
};

/// Where an element came from: the rule that created it, which application of that rule, and
/// the elements the rule matched. Elements made by translate have none.
struct Provenance {
    std::string rule;
    std::int64_t application = 0;
    std::vector<Id> parents;
};

class KernelGraph {
public:
    std::string name;
    std::vector<KernelArgument> arguments;
    CoordinateGraph coordinates;
    ControlGraph control;
    Mapping mapping;
    std::map<Id, Provenance> provenance;

    Id addDimension(Dimension d);
    Id addCoordinateEdge(CoordinateEdgeKind kind, std::vector<Id> const& tails,
                         std::vector<Id> const& heads);
    Id addOperation(Operation op);
    Id addControlEdge(ControlEdgeKind kind, Id from, Id to);

    /// Removes an operation, its control edges and its connections.
    void removeOperation(Id op);
    /// Removes a dimension and every coordinate edge that touches it.
    void removeDimension(Id dimension);

    /// The next id addX() will hand out; ids start at 1 and are never reused.
    Id nextId() const { return nextId_; }
    /// For loaders that restore ids: later ids start after `id`.
    void reserveId(Id id) { nextId_ = std::max(nextId_, id + 1); }

    /// The argument called `name`, or nullptr.
    KernelArgument const* findArgument(std::string_view name) const;

    /// The root Kernel operation; an InternalError when the graph has none.
    Id kernel() const;

    /// Operations reached from `op` through edges of `kind`, in edge insertion order.
    std::vector<Id> successors(Id op, ControlEdgeKind kind) const;
    /// The operations of a Body/Else list: the heads of `op`'s `kind` edges, followed along
    /// Sequence edges, each once, in a topological order.
    std::vector<Id> sequence(Id op, ControlEdgeKind kind) const;

private:
    Id nextId_ = 1;
};

} // namespace kiln
