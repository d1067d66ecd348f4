#include "kiln/graph/ExpressionText.h"

#include "kiln/graph/Error.h"

#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace kiln {

using namespace expr;

ExprPtr NameResolver::name(std::string_view) const {
    return nullptr;
}
std::optional<DataType> NameResolver::dataType(Id) const {
    return std::nullopt;
}

namespace {

constexpr int kUnaryPrecedence = 11;
constexpr int kPrimaryPrecedence = 12;

struct InfixOp {
    std::string_view text;
    BinaryOp op;
    int precedence;
};
// Longest spellings first, so that "<<" is not read as "<".
constexpr InfixOp kInfix[] = {
    {"||", BinaryOp::LogicalOr, 1}, {"&&", BinaryOp::LogicalAnd, 2},
    {"==", BinaryOp::Equal, 6},     {"!=", BinaryOp::NotEqual, 6},
    {"<=", BinaryOp::LessEqual, 7}, {">=", BinaryOp::GreaterEqual, 7},
    {"<<", BinaryOp::ShiftLeft, 8}, {">>", BinaryOp::ShiftRight, 8},
    {"|", BinaryOp::BitwiseOr, 3},  {"^", BinaryOp::BitwiseXor, 4},
    {"&", BinaryOp::BitwiseAnd, 5}, {"<", BinaryOp::Less, 7},
    {">", BinaryOp::Greater, 7},    {"+", BinaryOp::Add, 9},
    {"-", BinaryOp::Subtract, 9},   {"*", BinaryOp::Multiply, 10},
    {"/", BinaryOp::Divide, 10},    {"%", BinaryOp::Modulo, 10},
};

struct CallOp {
    std::string_view name;
    BinaryOp op;
};
constexpr CallOp kBinaryCalls[] = {{"min", BinaryOp::Min},
                                   {"max", BinaryOp::Max},
                                   {"ceildiv", BinaryOp::CeilDivide},
                                   {"gcd", BinaryOp::Gcd}};

std::optional<int> infixPrecedence(BinaryOp op) {
    for (auto const& i : kInfix)
        if (i.op == op)
            return i.precedence;
    return std::nullopt;
}

bool isNameStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}
bool isNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

class Parser {
public:
    Parser(std::string_view text, NameResolver const& names)
        : text_(text)
        , names_(names) {}

    ExprPtr parse() {
        ExprPtr e = parseBinary(1);
        skipSpace();
        if (pos_ < text_.size())
            throw ExpressionError(pos_, fmt::format("unexpected '{}' after the expression",
                                                    characterAt(text_, pos_)));
        return e;
    }

private:
    void skipSpace() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
    }

    bool accept(std::string_view token) {
        skipSpace();
        if (text_.substr(pos_, token.size()) != token)
            return false;
        pos_ += token.size();
        return true;
    }

    void expect(std::string_view token, std::string_view what) {
        if (!accept(token))
            throw ExpressionError(pos_, fmt::format("expected '{}' {}", token, what));
    }

    std::optional<InfixOp> peekInfix() {
        skipSpace();
        for (auto const& i : kInfix)
            if (text_.substr(pos_, i.text.size()) == i.text)
                return i;
        return std::nullopt;
    }

    // Every walk over an expression recurses, so the parser refuses text that would make a tree
    // too deep for them (or for itself): too many operands and operators, or too deep a nesting.
    void countNode() {
        if (++nodes_ > kMaxExpressionNodes)
            throw ExpressionError(pos_,
                                  fmt::format("expression has more than {} operands and operators",
                                              kMaxExpressionNodes));
    }

    struct Nest {
        explicit Nest(Parser& p)
            : parser(p) {
            if (++parser.nesting_ > kMaxParserNesting)
                throw ExpressionError(
                    parser.pos_,
                    fmt::format("expression nests deeper than {} levels", kMaxParserNesting));
        }
        ~Nest() { --parser.nesting_; }
        Nest(Nest const&) = delete;
        Nest& operator=(Nest const&) = delete;
        Parser& parser;
    };

    ExprPtr parseBinary(int minPrecedence) {
        Nest const nest(*this);
        ExprPtr lhs = parseUnary();
        while (auto op = peekInfix()) {
            if (op->precedence < minPrecedence)
                break;
            countNode();
            pos_ += op->text.size();
            ExprPtr rhs = parseBinary(op->precedence + 1);
            lhs = binary(op->op, lhs, rhs);
        }
        return lhs;
    }

    ExprPtr parseUnary() {
        Nest const nest(*this);
        countNode();
        skipSpace();
        std::size_t const start = pos_;
        if (accept("-")) {
            minusEnd_ = pos_;
            ExprPtr arg = parseUnary();
            if (auto const* l = std::get_if<Literal>(arg.get());
                l && start + 1 == pos_ - literalLength_)
                return negateLiteral(l->value);
            return unary(UnaryOp::Negate, arg);
        }
        if (accept("!"))
            return unary(UnaryOp::LogicalNot, parseUnary());
        if (accept("~"))
            return unary(UnaryOp::BitwiseNot, parseUnary());
        return parsePrimary();
    }

    static ExprPtr negateLiteral(Value v) {
        if (v.isFloat())
            return literal(Value::real(-v.f, v.type));
        return literal(
            Value::integer(static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(v.i)), v.type));
    }

    ExprPtr parsePrimary() {
        skipSpace();
        literalLength_ = 0;
        if (pos_ >= text_.size())
            throw ExpressionError(pos_,
                                  text_.empty() ? "empty expression" : "expression ends too soon");
        char const c = text_[pos_];
        if (c == '(') {
            ++pos_;
            ExprPtr e = parseBinary(1);
            expect(")", "to close '('");
            return e;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) ||
            (c == '.' && pos_ + 1 < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))))
            return parseNumber();
        if (isNameStart(c))
            return parseName();
        throw ExpressionError(pos_, fmt::format("unexpected '{}'", characterAt(text_, pos_)));
    }

    ExprPtr parseNumber() {
        std::size_t const start = pos_;
        bool isReal = false;
        if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
            pos_ += 2;
            std::uint64_t value = 0;
            std::size_t const digits = pos_;
            while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
                if (value > (std::numeric_limits<std::uint64_t>::max() >> 4))
                    throw ExpressionError(start, "integer literal is too large");
                char const d =
                    static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_++])));
                value = value * 16 + static_cast<std::uint64_t>(d <= '9' ? d - '0' : d - 'a' + 10);
            }
            if (pos_ == digits)
                throw ExpressionError(start, "'0x' needs hexadecimal digits");
            literalLength_ = pos_ - start;
            return literal(Value::integer(static_cast<std::int64_t>(value)));
        }
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
        if (pos_ < text_.size() && text_[pos_] == '.') {
            isReal = true;
            ++pos_;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
                ++pos_;
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            std::size_t p = pos_ + 1;
            if (p < text_.size() && (text_[p] == '+' || text_[p] == '-'))
                ++p;
            if (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) {
                isReal = true;
                pos_ = p;
                while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
                    ++pos_;
            }
        }
        if (pos_ < text_.size() && isNameStart(text_[pos_]))
            throw ExpressionError(
                pos_, fmt::format("unexpected '{}' after a number", characterAt(text_, pos_)));
        std::string const digits(text_.substr(start, pos_ - start));
        literalLength_ = pos_ - start;
        if (isReal)
            return literal(Value::real(std::strtod(digits.c_str(), nullptr)));
        // Right after a unary '-', 2^63 is allowed: "-9223372036854775808" is the smallest i64.
        std::uint64_t const limit =
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) +
            (start == minusEnd_ ? 1 : 0);
        std::uint64_t value = 0;
        for (char d : digits) {
            std::uint64_t const next = value * 10 + static_cast<std::uint64_t>(d - '0');
            if (value > std::numeric_limits<std::uint64_t>::max() / 10 || next < value ||
                next > limit)
                throw ExpressionError(start, "integer literal is too large for i64");
            value = next;
        }
        return literal(Value::integer(static_cast<std::int64_t>(value)));
    }

    std::vector<ExprPtr> parseArguments(std::string_view function, std::size_t at,
                                        std::size_t count) {
        std::vector<ExprPtr> args;
        if (!accept(")")) {
            do
                args.push_back(parseBinary(1));
            while (accept(","));
            expect(")", fmt::format("to close the arguments of {}", function));
        }
        if (args.size() != count)
            throw ExpressionError(at, fmt::format("{} takes {} argument{}, not {}", function, count,
                                                  count == 1 ? "" : "s", args.size()));
        return args;
    }

    ExprPtr parseName() {
        std::size_t const start = pos_;
        while (pos_ < text_.size() && isNameChar(text_[pos_]))
            ++pos_;
        std::string_view const word = text_.substr(start, pos_ - start);

        if (pos_ < text_.size() && text_[pos_] == '#')
            return parseGraphLeaf(word, start);

        if (accept("(")) {
            for (auto const& call : kBinaryCalls)
                if (call.name == word) {
                    auto args = parseArguments(word, start, 2);
                    return binary(call.op, args[0], args[1]);
                }
            for (auto const& f : unaryOps)
                if (f.call && f.name == word)
                    return unary(f.op, parseArguments(word, start, 1)[0]);
            if (word == "select") {
                auto args = parseArguments(word, start, 3);
                return select(args[0], args[1], args[2]);
            }
            if (auto type = parseDataType(word))
                return convert(*type, parseArguments(word, start, 1)[0]);
            throw ExpressionError(start, fmt::format("unknown function '{}'", word));
        }
        if (word == "inf")
            return literal(Value::real(std::numeric_limits<double>::infinity()));
        if (word == "nan")
            return literal(Value::real(std::numeric_limits<double>::quiet_NaN()));
        if (word == "true" || word == "false")
            return literal(Value::boolean(word == "true"));

        ExprPtr resolved;
        try {
            resolved = names_.name(word);
        } catch (UserError const& e) {
            throw ExpressionError(start, e.message());
        }
        if (!resolved)
            throw ExpressionError(start, fmt::format("unknown name '{}'", word));
        return resolved;
    }

    ExprPtr parseGraphLeaf(std::string_view word, std::size_t start) {
        ++pos_; // '#'
        std::size_t const digits = pos_;
        Id id = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            if (id > 100'000'000)
                throw ExpressionError(digits, "dimension id is too large");
            id = id * 10 + (text_[pos_++] - '0');
        }
        if (pos_ == digits)
            throw ExpressionError(digits, fmt::format("'{}#' needs a dimension id", word));
        if (word == "size")
            return dimensionSize(id);
        if (word == "stride")
            return dimensionStride(id);
        if (word == "index")
            return index(id);
        if (word == "value") {
            auto type = names_.dataType(id);
            if (!type)
                throw ExpressionError(start, fmt::format("value#{} names no data dimension", id));
            return dataValue(id, *type);
        }
        throw ExpressionError(
            start, fmt::format("unknown graph leaf '{}#' (size#, stride#, index#, value#)", word));
    }

    std::string_view text_;
    NameResolver const& names_;
    std::size_t pos_ = 0;
    std::size_t literalLength_ = 0;
    int nodes_ = 0;
    int nesting_ = 0;
    std::size_t minusEnd_ = std::string_view::npos; // just after the latest unary '-'
};

std::string formatValue(Value v) {
    if (v.type == DataType::Bool)
        return v.i != 0 ? "true" : "false";
    if (!v.isFloat()) {
        std::string s = fmt::format("{}", v.i);
        return v.type == DataType::I64 ? s : fmt::format("{}({})", name(v.type), s);
    }
    std::string s;
    if (std::isnan(v.f))
        s = "nan";
    else if (std::isinf(v.f))
        s = v.f > 0 ? "inf" : "-inf";
    else {
        s = fmt::format("{}", v.f);
        if (s.find_first_of(".e") == std::string::npos)
            s += ".0";
    }
    return v.type == DataType::F64 ? s : fmt::format("{}({})", name(v.type), s);
}

struct Printer {
    std::string out;

    static int precedence(Expression const& e) {
        if (auto const* b = std::get_if<Binary>(&e))
            return infixPrecedence(b->op).value_or(kPrimaryPrecedence);
        if (auto const* u = std::get_if<Unary>(&e); u && !info(u->op).call)
            return kUnaryPrecedence;
        if (auto const* l = std::get_if<Literal>(&e)) {
            bool const negative = l->value.isFloat() ? std::signbit(l->value.f) : l->value.i < 0;
            return negative && l->value.type == (l->value.isFloat() ? DataType::F64 : DataType::I64)
                       ? kUnaryPrecedence
                       : kPrimaryPrecedence;
        }
        return kPrimaryPrecedence;
    }

    // A literal printed as bare digits, which a '-' before it would fold into.
    static bool isPlainNumber(Expression const& e) {
        auto const* l = std::get_if<Literal>(&e);
        if (!l || l->value.type != (l->value.isFloat() ? DataType::F64 : DataType::I64))
            return false;
        return l->value.isFloat() ? std::isfinite(l->value.f) && !std::signbit(l->value.f)
                                  : l->value.i >= 0;
    }

    void operand(Expression const& e, int minPrecedence) {
        bool const parens = precedence(e) < minPrecedence;
        if (parens)
            out += '(';
        print(e);
        if (parens)
            out += ')';
    }

    void call(std::string_view fn, std::initializer_list<Expression const*> args) {
        out += fn;
        out += '(';
        bool first = true;
        for (auto const* a : args) {
            if (!first)
                out += ", ";
            first = false;
            print(*a);
        }
        out += ')';
    }

    void print(Expression const& e) {
        if (auto const* l = std::get_if<Literal>(&e))
            out += formatValue(l->value);
        else if (auto const* a = std::get_if<Argument>(&e))
            out += a->name;
        else if (auto const* t = std::get_if<Tag>(&e))
            out += t->name;
        else if (auto const* size = std::get_if<DimensionSize>(&e))
            out += fmt::format("size#{}", size->dimension);
        else if (auto const* stride = std::get_if<DimensionStride>(&e))
            out += fmt::format("stride#{}", stride->dimension);
        else if (auto const* i = std::get_if<Index>(&e))
            out += fmt::format("index#{}", i->dimension);
        else if (auto const* d = std::get_if<DataValue>(&e))
            out += fmt::format("value#{}", d->dimension);
        else if (auto const* u = std::get_if<Unary>(&e)) {
            if (!info(u->op).call) {
                out += name(u->op);
                // "- -x" rather than "--x", which would not parse back.
                if (u->op == UnaryOp::Negate && precedence(*u->arg) == kUnaryPrecedence)
                    out += ' ';
                // "-(3)" rather than "-3", which parses as the literal -3 (and "-0" as 0).
                if (u->op == UnaryOp::Negate && isPlainNumber(*u->arg)) {
                    out += '(';
                    print(*u->arg);
                    out += ')';
                } else
                    operand(*u->arg, kUnaryPrecedence);
            } else
                call(name(u->op), {u->arg.get()});
        } else if (auto const* b = std::get_if<Binary>(&e)) {
            if (auto p = infixPrecedence(b->op)) {
                operand(*b->lhs, *p);
                out += ' ';
                out += name(b->op);
                out += ' ';
                operand(*b->rhs, *p + 1);
            } else
                call(name(b->op), {b->lhs.get(), b->rhs.get()});
        } else if (auto const* s = std::get_if<Select>(&e))
            call("select", {s->condition.get(), s->ifTrue.get(), s->ifFalse.get()});
        else {
            auto const& c = std::get<Convert>(e);
            call(name(c.type), {c.arg.get()});
        }
    }
};

} // namespace

ExprPtr parseExpression(std::string_view text, NameResolver const& names) {
    return Parser(text, names).parse();
}

ExprPtr expansion(UnaryOp op, ExprPtr const& x) {
    std::string_view const text = info(op).expansion;
    if (text.empty())
        return nullptr;
    struct Operand : NameResolver {
        ExprPtr x;
        ExprPtr name(std::string_view n) const override { return n == "x" ? x : nullptr; }
    } operand;
    operand.x = x;
    return parseExpression(text, operand);
}

std::string toString(Expression const& e) {
    Printer p;
    p.print(e);
    return std::move(p.out);
}

std::string toString(ExprPtr const& e) {
    return e ? toString(*e) : std::string("<none>");
}

} // namespace kiln
