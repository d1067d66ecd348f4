#include "kiln/graph/SemanticCheck.h"

#include "kiln/graph/Interpreter.h"
#include "kiln/graph/Reference.h"

#include <fmt/format.h>

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
            double const e =
                maxRelativeError(actual.tensors.at(op.tensor), c.expected.tensors.at(op.tensor));
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
