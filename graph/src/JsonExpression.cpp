#include "kiln/graph/JsonExpression.h"

#include <cctype>
#include <fmt/format.h>

namespace kiln {

namespace {

/// The offset at which `text` nests parentheses and prefix operators deeper than the limit.
std::optional<std::size_t> tooDeep(std::string_view text) {
    int parentheses = 0;
    int prefixes = 0;
    bool afterOperand = false;
    for (std::size_t k = 0; k < text.size(); ++k) {
        char const c = text[k];
        if (std::isspace(static_cast<unsigned char>(c)))
            continue;
        if (c == '(') {
            ++parentheses;
            afterOperand = false;
        } else if (c == ')') {
            --parentheses;
            afterOperand = true;
            prefixes = 0;
        } else if (!afterOperand && (c == '-' || c == '!' || c == '~' || c == '+')) {
            ++prefixes;
        } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                   c == '$' || c == '#') {
            afterOperand = true;
            prefixes = 0;
        } else {
            afterOperand = false;
        }
        if (parentheses + prefixes > kMaxExpressionNesting)
            return k;
    }
    return std::nullopt;
}

} // namespace

ExprPtr parseExpression(JsonValue const& value, NameResolver const& names, bool allowInteger) {
    if (allowInteger && value.isNumber())
        return literal(value.asInt());
    if (!value.isString())
        value.fail(fmt::format("expected {}, got {}",
                               allowInteger ? "an expression (a string or an integer)"
                                            : "an expression (a string)",
                               value.typeName()));
    std::string const& text = value.asString();
    if (auto at = tooDeep(text))
        value.failInString(
            *at, fmt::format("the expression nests deeper than {} levels", kMaxExpressionNesting));
    try {
        return parseExpression(text, names);
    } catch (ExpressionError const& error) {
        value.failInString(error.offset(), error.message());
    }
}

} // namespace kiln
