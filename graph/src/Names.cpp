// The spelling of every enum of the graph library, in one table each. JSON files, printed graphs
// and messages use these names.
#include "kiln/graph/Command.h"
#include "kiln/graph/CoordinateTransform.h"
#include "kiln/graph/Dimension.h"
#include "kiln/graph/KernelGraph.h"
#include "kiln/graph/Operation.h"

#include <array>

namespace kiln {

namespace {
template <class E, std::size_t N>
struct EnumNames {
    std::array<E, N> values;
    std::array<std::string_view, N> names;

    std::string_view name(E e) const { return names[static_cast<std::size_t>(e)]; }
    std::optional<E> parse(std::string_view s) const {
        for (std::size_t i = 0; i < N; ++i)
            if (names[i] == s)
                return values[i];
        return std::nullopt;
    }
};

using DK = DimensionKind;
constexpr EnumNames<DK, 14> kDimensions{
    {DK::User, DK::SubDimension, DK::Linear, DK::MacroTile, DK::MacroTileNumber, DK::MacroTileIndex,
     DK::WaveTile, DK::ThreadTile, DK::Workgroup, DK::Workitem, DK::ForLoop, DK::Unroll,
     DK::Register, DK::Shared},
    {"User", "SubDimension", "Linear", "MacroTile", "MacroTileNumber", "MacroTileIndex", "WaveTile",
     "ThreadTile", "Workgroup", "Workitem", "ForLoop", "Unroll", "Register", "Shared"}};

using CE = CoordinateEdgeKind;
constexpr EnumNames<CE, 9> kCoordinateEdges{
    {CE::Split, CE::Join, CE::Flatten, CE::Tile, CE::PassThrough, CE::Forget, CE::Inherit,
     CE::Sunder, CE::DataFlow},
    {"Split", "Join", "Flatten", "Tile", "PassThrough", "Forget", "Inherit", "Sunder", "DataFlow"}};

using CK = ControlEdgeKind;
constexpr EnumNames<CK, 5> kControlEdges{
    {CK::Sequence, CK::Body, CK::Else, CK::Initialize, CK::ForLoopIncrement},
    {"Sequence", "Body", "Else", "Initialize", "ForLoopIncrement"}};

constexpr EnumNames<Combine, 4> kCombines{{Combine::Sum, Combine::Max, Combine::Min, Combine::Mean},
                                          {"sum", "max", "min", "mean"}};

} // namespace

std::span<DimensionKind const> allDimensionKinds() {
    return kDimensions.values;
}
std::string_view name(DimensionKind kind) {
    return kDimensions.name(kind);
}
std::optional<DimensionKind> parseDimensionKind(std::string_view s) {
    return kDimensions.parse(s);
}

std::span<CoordinateEdgeKind const> allCoordinateEdgeKinds() {
    return kCoordinateEdges.values;
}
std::string_view name(CoordinateEdgeKind kind) {
    return kCoordinateEdges.name(kind);
}
std::optional<CoordinateEdgeKind> parseCoordinateEdgeKind(std::string_view s) {
    return kCoordinateEdges.parse(s);
}

std::span<OperationKind const> allOperationKinds() {
    static constexpr auto kinds = [] {
        std::array<OperationKind, operationKinds.size()> out{};
        for (std::size_t k = 0; k < out.size(); ++k)
            out[k] = operationKinds[k].kind;
        return out;
    }();
    return kinds;
}
std::string_view name(OperationKind kind) {
    return info(kind).name;
}
std::optional<OperationKind> parseOperationKind(std::string_view s) {
    for (auto const& row : operationKinds)
        if (row.name == s)
            return row.kind;
    return std::nullopt;
}

std::span<ControlEdgeKind const> allControlEdgeKinds() {
    return kControlEdges.values;
}
std::string_view name(ControlEdgeKind kind) {
    return kControlEdges.name(kind);
}
std::optional<ControlEdgeKind> parseControlEdgeKind(std::string_view s) {
    return kControlEdges.parse(s);
}

std::string_view name(Combine c) {
    return kCombines.name(c);
}
std::optional<Combine> parseCombine(std::string_view s) {
    return kCombines.parse(s);
}

std::span<CommandOpKind const> allCommandOpKinds() {
    static constexpr auto kinds = [] {
        std::array<CommandOpKind, commandOps.size()> out{};
        for (std::size_t k = 0; k < out.size(); ++k)
            out[k] = commandOps[k].kind;
        return out;
    }();
    return kinds;
}
std::string_view name(CommandOpKind kind) {
    return info(kind).name;
}
std::optional<CommandOpKind> parseCommandOpKind(std::string_view s) {
    for (auto const& row : commandOps)
        if (row.name == s)
            return row.kind;
    return std::nullopt;
}

std::string_view name(KernelArgument::Kind kind) {
    switch (kind) {
    case KernelArgument::Kind::Tensor:
        return "tensor";
    case KernelArgument::Kind::Scalar:
        return "scalar";
    case KernelArgument::Kind::Size:
        return "size";
    }
    return "?";
}

bool holdsData(DimensionKind kind) {
    switch (kind) {
    case DK::User:
    case DK::Linear:
    case DK::MacroTile:
    case DK::WaveTile:
    case DK::ThreadTile:
    case DK::Register:
    case DK::Shared:
        return true;
    default:
        return false;
    }
}

} // namespace kiln
