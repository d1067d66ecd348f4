// Operation.h: the nodes and edges of the control graph.
//
// Operations say what the kernel does and in which order: Sequence edges order siblings, Body
// edges hang the contents of a Kernel, ForLoop or If under it, Else the alternative of an If,
// Initialize and ForLoopIncrement the assignments that start and step a loop's counter. Which
// coordinates an operation reads and writes is not stored here but in the graph's Mapping. The
// kinds of operations and what each needs are declared in OperationKinds.h.
#pragma once

#include "kiln/graph/DataType.h"
#include "kiln/graph/Expression.h"
#include "kiln/graph/OperationKinds.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

std::span<OperationKind const> allOperationKinds();
std::string_view name(OperationKind kind);
std::optional<OperationKind> parseOperationKind(std::string_view name);

/// How a Reduce combines values (Mean: the sum over the row's length).
enum class Combine : std::uint8_t { Sum, Max, Min, Mean };
std::string_view name(Combine c);
std::optional<Combine> parseCombine(std::string_view name);

struct Operation {
    OperationKind kind;
    /// Assign: the value; ForLoop, If: the condition.
    ExprPtr expression;
    /// Loads, Assign, Multiply, Reduce: the type of the values produced.
    std::optional<DataType> dtype;
    /// Multiply: whether lhs (rhs) is stored transposed.
    bool transposeA = false, transposeB = false;
    /// Reduce: how values combine.
    Combine combine = Combine::Sum;
    /// ForLoop: the loop's name (e.g. "K"); others: a note for readers.
    std::string name;
};

enum class ControlEdgeKind : std::uint8_t { Sequence, Body, Else, Initialize, ForLoopIncrement };

std::span<ControlEdgeKind const> allControlEdgeKinds();
std::string_view name(ControlEdgeKind kind);
std::optional<ControlEdgeKind> parseControlEdgeKind(std::string_view name);

struct ControlEdge {
    ControlEdgeKind kind;
};

} // namespace kiln
