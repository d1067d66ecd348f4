#include "kiln/graph/SemanticCheck.h"

#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace kiln {

namespace {

// `problem` with every size a different small prime below it (sizes of 3 or less stay): no
// tile, vector width or workgroup divides them, and a swap of two sizes shows.
std::map<std::string, double> ragged(Command const& command,
                                     std::map<std::string, double> problem) {
    std::int64_t const primes[] = {23, 19, 17, 13, 11, 7, 5, 3};
    std::size_t next = 0;
    for (auto const& size : command.sizes()) {
        auto it = problem.find(size);
        if (it == problem.end())
            continue;
        while (next < std::size(primes) && static_cast<double>(primes[next]) >= it->second)
            ++next;
        if (next < std::size(primes))
            it->second = static_cast<double>(primes[next++]);
    }
    return problem;
}

std::string sizesText(Command const& command, std::map<std::string, double> const& problem) {
    std::string text;
    for (auto const& size : command.sizes())
        if (auto it = problem.find(size); it != problem.end())
            text += fmt::format("{}{}={}", text.empty() ? "" : ", ", size, it->second);
    return text;
}

// The tags an expression reads.
void tagsOf(Expression const& e, std::set<std::string>& out) {
    std::visit(
        [&](auto const& node) {
            using T = std::decay_t<decltype(node)>;
            if constexpr (std::is_same_v<T, expr::Tag>) {
                out.insert(node.name);
            } else if constexpr (std::is_same_v<T, expr::Unary> ||
                                 std::is_same_v<T, expr::Convert>) {
                tagsOf(*node.arg, out);
            } else if constexpr (std::is_same_v<T, expr::Binary>) {
                tagsOf(*node.lhs, out);
                tagsOf(*node.rhs, out);
            } else if constexpr (std::is_same_v<T, expr::Select>) {
                tagsOf(*node.condition, out);
                tagsOf(*node.ifTrue, out);
                tagsOf(*node.ifFalse, out);
            }
        },
        static_cast<Expression::variant const&>(e));
}

bool sums(CommandOperation const& op) {
    return op.kind == CommandOpKind::Multiply ||
           (op.kind == CommandOpKind::Reduce &&
            (op.combine == Combine::Sum || op.combine == Combine::Mean));
}

// The unit roundoff of `type`: half the distance from 1 to the next value.
double unitRoundoff(DataType type) {
    switch (type) {
    case DataType::F16:
        return 0x1p-11;
    case DataType::BF16:
        return 0x1p-8;
    case DataType::F64:
        return 0x1p-53;
    default:
        return 0x1p-24;
    }
}

// gamma_K of the Command's longest sum at `b`'s sizes, in its accumulator's type (0: it sums
// nothing; 1 where the bound says nothing, K u >= 1).
double sumGamma(Command const& command, Bindings const& b) {
    double gamma = 0;
    BindingsEnvironment const env(b);
    for (auto const& op : command.operations()) {
        if (!sums(op))
            continue;
        auto const& input = command.values().at(op.inputs[0]);
        std::size_t const axis = op.kind == CommandOpKind::Multiply && !op.transposeA ? 1 : 0;
        std::size_t const reduced =
            op.kind == CommandOpKind::Reduce ? input.shape.size() - 1 : axis;
        auto const k = static_cast<double>(evaluateInt(*input.shape.at(reduced), env));
        double const ku = k * unitRoundoff(command.values().at(op.tag).dtype);
        gamma = std::max(gamma, ku < 1 ? ku / (1 - ku) : 1.0);
    }
    return gamma;
}

// The inputs' magnitudes: every tensor element and scalar by its absolute value.
Bindings magnitudesOf(Bindings b) {
    for (auto& [name, t] : b.tensors)
        for (double& x : t.data)
            x = std::fabs(x);
    for (auto& [name, v] : b.scalars)
        if (v.isFloat())
            v.f = std::fabs(v.f);
        else
            v.i = v.i < 0 ? -v.i : v.i;
    return b;
}

// maxRelativeError (Bindings.h), each element also relative to `weight` times its magnitude.
double maxRelativeError(HostTensor const& actual, HostTensor const& reference,
                        HostTensor const& magnitude, double weight) {
    double const floor = std::max(1e-2 * largestMagnitude(reference), 1e-300);
    double worst = 0;
    std::vector<std::int64_t> index(reference.shape.size(), 0);
    for (std::int64_t n = 0; n < reference.elements(); ++n) {
        for (std::size_t k = index.size(); k-- > 0;) { // the next index, the last axis fastest
            if (n == 0)
                break;
            if (++index[k] < reference.shape[k])
                break;
            index[k] = 0;
        }
        double const a = actual.data[static_cast<std::size_t>(actual.offset(index))];
        double const r = reference.data[static_cast<std::size_t>(reference.offset(index))];
        double const m = magnitude.data[static_cast<std::size_t>(magnitude.offset(index))];
        double const scale = std::max({std::fabs(r), floor, std::isfinite(m) ? weight * m : 0.0});
        double const error = (std::isnan(a) != std::isnan(r)) ? INFINITY
                             : std::isnan(a)                  ? 0.0
                                                              : std::fabs(a - r) / scale;
        worst = std::max(worst, error);
    }
    return worst;
}

} // namespace

SemanticCheck::SemanticCheck(Command const& command, std::map<std::string, double> const& problem,
                             std::uint64_t seed)
    : command_(command) {
    for (auto const& p : {problem, ragged(command, problem)}) {
        if (!cases_.empty() && p == cases_.front().problem)
            break;
        Case& c = cases_.emplace_back(Case{p, randomBindings(command, p, seed), {}});
        c.expected = c.inputs;
        runReference(command, c.expected);
    }
    // A value rounded to 16 bits on the way (an f16 Execute stored as f32) turns a reordered
    // f32 sum's last-bit difference into a 16-bit one, as a 16-bit store does.
    auto const half = [](DataType type) { return type == DataType::F16 || type == DataType::BF16; };
    for (auto const& op : command.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            if (half(command.findTensor(op.tensor)->dtype))
                tolerance_ = 1e-2;
        } else if (op.kind != CommandOpKind::LoadLinear && op.kind != CommandOpKind::LoadTiled &&
                   half(command.values().at(op.tag).dtype)) {
            tolerance_ = 1e-2;
        }
    // Which values depend on a sum, in the order the operations compute them; the stores of
    // those are compared with the sums' bound.
    std::set<std::string> dependent;
    for (auto const& op : command.operations()) {
        std::set<std::string> read(op.inputs.begin(), op.inputs.end());
        if (op.expression)
            tagsOf(*op.expression, read);
        bool const depends = sums(op) || std::any_of(read.begin(), read.end(), [&](auto const& t) {
                                 return dependent.contains(t);
                             });
        if (!depends)
            continue;
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled)
            summed_.insert(op.tensor);
        else
            dependent.insert(op.tag);
    }
    if (summed_.empty())
        return;
    for (Case& c : cases_) {
        c.sumWeight = sumGamma(command, c.inputs) / tolerance_;
        c.magnitudes = magnitudesOf(c.inputs);
        runReference(command, c.magnitudes);
    }
}

std::vector<std::map<std::string, double>> SemanticCheck::problems() const {
    std::vector<std::map<std::string, double>> out;
    for (auto const& c : cases_)
        out.push_back(c.problem);
    return out;
}

double SemanticCheck::measure(KernelGraph const& graph, Case const& c) const {
    Bindings actual = c.inputs;
    interpret(graph, actual);
    errors_.clear();
    lastError_ = 0;
    for (auto const& op : command_.operations())
        if (op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled) {
            double const e = summed_.contains(op.tensor)
                                 ? maxRelativeError(actual.tensors.at(op.tensor),
                                                    c.expected.tensors.at(op.tensor),
                                                    c.magnitudes.tensors.at(op.tensor), c.sumWeight)
                                 : maxRelativeError(actual.tensors.at(op.tensor),
                                                    c.expected.tensors.at(op.tensor));
            errors_[op.tensor] = e;
            if (!(e <= lastError_))
                lastError_ = e;
        }
    return lastError_;
}

// The worst case's errors stay in errors_: the first problem whose error passes the tolerance,
// else the one with the largest error.
double SemanticCheck::measure(KernelGraph const& graph) const {
    std::map<std::string, double> worstErrors;
    double worst = -1;
    for (auto const& c : cases_) {
        double const e = measure(graph, c);
        if (!(e <= worst)) {
            worst = e;
            worstErrors = errors_;
        }
        if (!(e <= tolerance_))
            break;
    }
    errors_ = std::move(worstErrors);
    lastError_ = worst;
    return worst;
}

void SemanticCheck::check(KernelGraph const& graph, std::string const& what) const {
    for (std::size_t k = 0; k < cases_.size(); ++k) {
        if (measure(graph, cases_[k]) <= tolerance_)
            continue;
        auto worst = errors_.begin();
        for (auto it = errors_.begin(); it != errors_.end(); ++it)
            if (!(it->second <= worst->second))
                worst = it;
        fail("{} changed the result{}: tensor '{}' differs from the Command's meaning by {:.3g} "
             "(tolerance {:.0e})",
             what, k == 0 ? "" : " at " + sizesText(command_, cases_[k].problem), worst->first,
             worst->second, tolerance_);
    }
}

} // namespace kiln
