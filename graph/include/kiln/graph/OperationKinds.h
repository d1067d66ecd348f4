// OperationKinds.h: each kind of control operation of a KernelGraph, declared once.
//
// A row gives a kind's name (JSON files, printed graphs, rules and messages spell it so), the
// Mapping roles it connects and what each must name, what its expression means, which
// attributes it has and which control edges may start at it. The name lists, the verifier and
// the printers (text, DOT) read this table instead of listing kinds themselves; what a kind does
// is the interpreter's and the code generators' (docs/architecture.md, "Adding an operation").
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace kiln {

/// The kind of a control operation; the order of the rows of operationKinds below.
enum class OperationKind : std::uint8_t {
    Kernel,      ///< the root; its Body runs once per workitem of every workgroup
    ForLoop,     ///< runs its Body while `expression` (the condition) holds
    If,          ///< runs its Body when `expression` holds, else its Else
    LoadLinear,  ///< reads a User tensor into a Linear or tile dimension, element by element
    StoreLinear, ///< writes a Linear or tile dimension to a User tensor
    LoadTiled,   ///< reads a User tensor into a tile (MacroTile, ThreadTile, ...)
    StoreTiled,  ///< writes a tile to a User tensor
    LoadShared,  ///< reads a Shared dimension into a tile
    StoreShared, ///< writes a tile to a Shared dimension
    Assign,      ///< dest = expression, element by element (or a loop counter); an operand
                 ///< of the dest's shape without its last axis is read at the element's row
    Multiply,    ///< dest = lhs x rhs, matrix product of two tiles (with transposes)
    Reduce,      ///< dest = combine of source over its last axis
    Barrier,     ///< all workitems of a workgroup meet here
    Nop,         ///< does nothing; keeps a place in the control graph
};

/// The Mapping roles, named once so that translate, the verifier, the interpreter and rules
/// agree on their spelling.
namespace role {
inline constexpr char const* source = "source";
inline constexpr char const* dest = "dest";
inline constexpr char const* lhs = "lhs";
inline constexpr char const* rhs = "rhs";
inline constexpr char const* counter = "counter";
} // namespace role

/// What the dimension a Mapping role names must be.
enum class RoleNeeds : std::uint8_t {
    User,    ///< a User tensor
    Value,   ///< a data dimension other than User (a tile, a vector, registers, shared memory)
    Shared,  ///< shared memory
    Counter, ///< a ForLoop dimension, or an Unroll dimension (the loop is unrolled)
    Target,  ///< what an Assign writes: a Value or a loop counter
};

/// One Mapping role of an operation kind.
struct RoleRule {
    char const* role;
    RoleNeeds needs;
};

/// What an operation's `expression` is.
enum class ExpressionUse : std::uint8_t {
    None,      ///< it has none
    Value,     ///< the value it computes (required)
    Condition, ///< the condition it tests (required)
};

/// One operation kind.
struct OperationKindInfo {
    OperationKind kind;
    std::string_view name;
    std::span<RoleRule const> roles;
    ExpressionUse expression = ExpressionUse::None;
    /// Whether its `combine` means something (and is printed).
    bool combines = false;
    /// The control edges that may start at it besides Sequence.
    bool body = false, elseBranch = false, loopAssignments = false;
};

namespace operation_roles {
inline constexpr RoleRule loop[] = {{role::counter, RoleNeeds::Counter}};
inline constexpr RoleRule load[] = {{role::source, RoleNeeds::User},
                                    {role::dest, RoleNeeds::Value}};
inline constexpr RoleRule store[] = {{role::source, RoleNeeds::Value},
                                     {role::dest, RoleNeeds::User}};
inline constexpr RoleRule loadShared[] = {{role::source, RoleNeeds::Shared},
                                          {role::dest, RoleNeeds::Value}};
inline constexpr RoleRule storeShared[] = {{role::source, RoleNeeds::Value},
                                           {role::dest, RoleNeeds::Shared}};
inline constexpr RoleRule assign[] = {{role::dest, RoleNeeds::Target}};
inline constexpr RoleRule multiply[] = {
    {role::lhs, RoleNeeds::Value}, {role::rhs, RoleNeeds::Value}, {role::dest, RoleNeeds::Value}};
inline constexpr RoleRule reduce[] = {{role::source, RoleNeeds::Value},
                                      {role::dest, RoleNeeds::Value}};
} // namespace operation_roles

inline constexpr std::array operationKinds = {
    OperationKindInfo{.kind = OperationKind::Kernel, .name = "Kernel", .body = true},
    OperationKindInfo{.kind = OperationKind::ForLoop,
                      .name = "ForLoop",
                      .roles = operation_roles::loop,
                      .expression = ExpressionUse::Condition,
                      .body = true,
                      .loopAssignments = true},
    OperationKindInfo{.kind = OperationKind::If,
                      .name = "If",
                      .expression = ExpressionUse::Condition,
                      .body = true,
                      .elseBranch = true},
    OperationKindInfo{
        .kind = OperationKind::LoadLinear, .name = "LoadLinear", .roles = operation_roles::load},
    OperationKindInfo{
        .kind = OperationKind::StoreLinear, .name = "StoreLinear", .roles = operation_roles::store},
    OperationKindInfo{
        .kind = OperationKind::LoadTiled, .name = "LoadTiled", .roles = operation_roles::load},
    OperationKindInfo{
        .kind = OperationKind::StoreTiled, .name = "StoreTiled", .roles = operation_roles::store},
    OperationKindInfo{.kind = OperationKind::LoadShared,
                      .name = "LoadShared",
                      .roles = operation_roles::loadShared},
    OperationKindInfo{.kind = OperationKind::StoreShared,
                      .name = "StoreShared",
                      .roles = operation_roles::storeShared},
    OperationKindInfo{.kind = OperationKind::Assign,
                      .name = "Assign",
                      .roles = operation_roles::assign,
                      .expression = ExpressionUse::Value},
    OperationKindInfo{
        .kind = OperationKind::Multiply, .name = "Multiply", .roles = operation_roles::multiply},
    OperationKindInfo{.kind = OperationKind::Reduce,
                      .name = "Reduce",
                      .roles = operation_roles::reduce,
                      .combines = true},
    OperationKindInfo{.kind = OperationKind::Barrier, .name = "Barrier"},
    OperationKindInfo{.kind = OperationKind::Nop, .name = "Nop"},
};

static_assert(
    [] {
        for (std::size_t k = 0; k < operationKinds.size(); ++k)
            if (static_cast<std::size_t>(operationKinds[k].kind) != k)
                return false;
        return true;
    }(),
    "the rows of operationKinds are in the order of OperationKind");

/// The row of `kind`.
constexpr OperationKindInfo const& info(OperationKind kind) {
    return operationKinds[static_cast<std::size_t>(kind)];
}

} // namespace kiln
