// ExpressionText.h: Expressions as text, printed and parsed.
//
// One syntax everywhere a user writes an expression: Command shapes and element-wise bodies,
// rule guards and attributes, search-space constraints, and the JSON form of a KernelGraph.
// C operators and precedence; min, max, ceildiv, gcd, the functions of ElementwiseFunctions.h
// (abs, exp, ...) and select(c, a, b) as calls; conversions as calls of the type name (f16(x));
// graph leaves as size#N, stride#N, index#N and value#N. Names are resolved by the caller, so
// that each client decides what `M`, `row.size` or `$MT_M` mean. print(parse(s)) is stable.
#pragma once

#include "kiln/graph/Expression.h"

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// A syntax or name error at a byte offset of the expression text; callers that know where the
/// text came from turn it into a UserError pointing at the exact character.
class ExpressionError : public std::exception {
public:
    ExpressionError(std::size_t offset, std::string message)
        : offset_(offset)
        , message_(std::move(message)) {}
    std::size_t offset() const { return offset_; }
    std::string const& message() const { return message_; }
    char const* what() const noexcept override { return message_.c_str(); }

private:
    std::size_t offset_;
    std::string message_;
};

/// What names mean. Return nullptr (or nullopt) for "unknown"; the parser reports it at the
/// name's position. A UserError thrown from here is reported at the name's position too.
class NameResolver {
public:
    virtual ~NameResolver() = default;
    /// An identifier (letters, digits, '_', '.', a leading '$').
    virtual ExprPtr name(std::string_view name) const;
    /// The element type of data dimension #id, for value#id.
    virtual std::optional<DataType> dataType(Id dimension) const;
};

/// The most operands and operators parseExpression() accepts in one expression, and the deepest
/// nesting (parentheses, prefix operators, right operands): walks over expressions recurse, so no
/// text may build a tree deep enough to exhaust the stack.
inline constexpr int kMaxExpressionNodes = 4096;
inline constexpr int kMaxParserNesting = 512;

/// Parses `text`; throws ExpressionError.
ExprPtr parseExpression(std::string_view text, NameResolver const& names = NameResolver{});

/// `op` applied to `x` written out as its row's expansion (ElementwiseFunctions.h), for code
/// generators that have no instructions of their own for it; nullptr where the row has none.
ExprPtr expansion(UnaryOp op, ExprPtr const& x);

/// The text of `e`, with the fewest parentheses that keep its structure.
std::string toString(Expression const& e);
std::string toString(ExprPtr const& e);

} // namespace kiln
