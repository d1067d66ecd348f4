// CommandOps.h: each kind of Command operation, declared once with its JSON fields.
//
// A row gives the op's name and the fields a Command's JSON gives it, in the order the reader
// reads them (which is the order its messages follow), with what each field is; the JSON
// reader, the name lists and the schema test (docs/schema/command.schema.json) take them from
// here. What an op computes, its type rule, translation and reference value, are in
// Command.cpp, Translate.cpp and Reference.cpp (docs/architecture.md, "Adding an operation").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kiln {

/// The kind of a Command operation; the order of the rows of commandOps below.
enum class CommandOpKind : std::uint8_t {
    LoadLinear,  ///< tag = the tensor, seen as a flat vector
    LoadTiled,   ///< tag = the tensor, with its shape
    StoreLinear, ///< tensor = value, flat
    StoreTiled,  ///< tensor = value, with its shape
    Execute,     ///< tag = element-wise expression over tags and scalars
    Multiply,    ///< tag = op(lhs) x op(rhs), op a transpose where asked
    Reduce,      ///< tag = combine of value along its last axis
};
std::span<CommandOpKind const> allCommandOpKinds();
std::string_view name(CommandOpKind kind);
std::optional<CommandOpKind> parseCommandOpKind(std::string_view name);

/// What a field of an operation's JSON is, and where CommandOperation keeps it.
enum class CommandField : std::uint8_t {
    Tag,        ///< the new tag the op defines (`tag`); required
    Tensor,     ///< a tensor argument (`tensor`); required
    Input,      ///< a tag an earlier op defined, the next of `inputs`; required
    Expression, ///< an element-wise expression over tags and scalars; required
    DataType,   ///< the result type; optional
    TransposeA, ///< a bool, false by default
    TransposeB, ///< a bool, false by default
    Combine,    ///< sum (default), max, min or mean
};

/// Whether an operation's JSON must give a field of this kind.
constexpr bool isRequired(CommandField field) {
    return field == CommandField::Tag || field == CommandField::Tensor ||
           field == CommandField::Input || field == CommandField::Expression;
}

struct CommandFieldRule {
    std::string_view key;
    CommandField field;
};

/// One Command operation kind.
struct CommandOpInfo {
    CommandOpKind kind;
    std::string_view name;
    std::span<CommandFieldRule const> fields;
    /// The field whose place in the input messages about the whole operation point at (the
    /// value a store or reduction reads, an expression); empty: the operation object.
    std::string_view locatedAt = {};
};

namespace command_fields {
inline constexpr CommandFieldRule load[] = {{"tag", CommandField::Tag},
                                            {"tensor", CommandField::Tensor}};
inline constexpr CommandFieldRule store[] = {{"tensor", CommandField::Tensor},
                                             {"value", CommandField::Input}};
inline constexpr CommandFieldRule execute[] = {{"tag", CommandField::Tag},
                                               {"expr", CommandField::Expression},
                                               {"dtype", CommandField::DataType}};
inline constexpr CommandFieldRule multiply[] = {
    {"tag", CommandField::Tag},           {"lhs", CommandField::Input},
    {"rhs", CommandField::Input},         {"transA", CommandField::TransposeA},
    {"transB", CommandField::TransposeB}, {"dtype", CommandField::DataType}};
inline constexpr CommandFieldRule reduce[] = {
    {"tag", CommandField::Tag}, {"value", CommandField::Input}, {"combine", CommandField::Combine}};
} // namespace command_fields

inline constexpr std::array commandOps = {
    CommandOpInfo{CommandOpKind::LoadLinear, "LoadLinear", command_fields::load},
    CommandOpInfo{CommandOpKind::LoadTiled, "LoadTiled", command_fields::load},
    CommandOpInfo{CommandOpKind::StoreLinear, "StoreLinear", command_fields::store, "value"},
    CommandOpInfo{CommandOpKind::StoreTiled, "StoreTiled", command_fields::store, "value"},
    CommandOpInfo{CommandOpKind::Execute, "Execute", command_fields::execute, "expr"},
    CommandOpInfo{CommandOpKind::Multiply, "Multiply", command_fields::multiply},
    CommandOpInfo{CommandOpKind::Reduce, "Reduce", command_fields::reduce, "value"},
};

static_assert(
    [] {
        for (std::size_t k = 0; k < commandOps.size(); ++k)
            if (static_cast<std::size_t>(commandOps[k].kind) != k)
                return false;
        return true;
    }(),
    "the rows of commandOps are in the order of CommandOpKind");

/// The row of `kind`.
constexpr CommandOpInfo const& info(CommandOpKind kind) {
    return commandOps[static_cast<std::size_t>(kind)];
}

/// Whether the op defines a tag (it has a Tag field).
constexpr bool definesTag(CommandOpKind kind) {
    for (auto const& f : info(kind).fields)
        if (f.field == CommandField::Tag)
            return true;
    return false;
}

} // namespace kiln
