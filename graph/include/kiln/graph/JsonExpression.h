// JsonExpression.h: expressions written as JSON strings, with errors at the exact character.
//
// Commands, KernelGraph files, rule sets and search spaces all hold expressions as JSON strings
// ("M * K", "ceildiv(row.size, $MT_M)"). parseExpression(JsonValue) parses one with the
// caller's NameResolver and turns an ExpressionError's offset into a UserError at the line and
// column of the offending character inside the string (see JsonValue::failInString()). Integers
// are accepted too, as literals, where a file may write 64 for "64".
#pragma once

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/SourceJson.h"

namespace kiln {

/// The deepest nesting of parentheses and prefix operators parseExpression(JsonValue) accepts;
/// deeper text is refused before parsing, so that no input can exhaust the parser's stack.
inline constexpr int kMaxExpressionNesting = 128;
/// The deepest expression tree it accepts ("a + a + ... + a" is as deep as it has terms): the
/// passes that walk expressions recurse, so no input may make them exhaust the stack.
inline constexpr int kMaxExpressionDepth = 1024;

/// Parses the expression in `value`: a string, or (where `allowInteger`) a JSON integer.
ExprPtr parseExpression(JsonValue const& value, NameResolver const& names,
                        bool allowInteger = true);

} // namespace kiln
