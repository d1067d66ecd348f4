#include "kiln/graph/JsonExpression.h"

#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <vector>

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

/// The depth of the tree under `root` (a leaf is 1), found without recursion.
int depth(Expression const& root) {
    using namespace expr;
    int deepest = 0;
    std::vector<std::pair<Expression const*, int>> stack{{&root, 1}};
    while (!stack.empty()) {
        auto const [e, level] = stack.back();
        stack.pop_back();
        deepest = std::max(deepest, level);
        auto const push = [&, level = level](ExprPtr const& child) {
            if (child)
                stack.emplace_back(child.get(), level + 1);
        };
        if (auto const* u = std::get_if<Unary>(e))
            push(u->arg);
        else if (auto const* b = std::get_if<Binary>(e)) {
            push(b->lhs);
            push(b->rhs);
        } else if (auto const* s = std::get_if<Select>(e)) {
            push(s->condition);
            push(s->ifTrue);
            push(s->ifFalse);
        } else if (auto const* c = std::get_if<Convert>(e))
            push(c->arg);
    }
    return deepest;
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
    ExprPtr e;
    try {
        e = parseExpression(text, names);
    } catch (ExpressionError const& error) {
        value.failInString(error.offset(), error.message());
    }
    if (depth(*e) > kMaxExpressionDepth)
        value.fail(fmt::format("the expression is more than {} operators deep; split it into "
                               "several",
                               kMaxExpressionDepth));
    if (ExprPtr const zero = divisionByZero(simplify(e)))
        value.fail(fmt::format("'{}' divides by zero{}", text,
                               toString(zero) == text ? std::string()
                                                      : fmt::format(" (at '{}')", toString(zero))));
    return e;
}

} // namespace kiln
