#include "kiln/scheduler/Solver.h"

#include "kiln/graph/Evaluate.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace kiln::scheduler {

namespace {

// Answers the "@k" arguments of a parsed constraint from the point and the resolved facts.
class ConstraintEnvironment : public Environment {
public:
    ConstraintEnvironment(Constraint const& c, std::vector<std::int64_t> const& facts,
                          Point const& point)
        : constraint_(c)
        , facts_(facts)
        , point_(point) {}

    Value argument(expr::Argument const& a) const override {
        std::size_t k = 0;
        auto const* first = a.name.data() + 1;
        std::from_chars(first, a.name.data() + a.name.size(), k);
        int const p = constraint_.parameterOf[k];
        return Value::integer(p >= 0 ? point_[static_cast<std::size_t>(p)] : facts_[k]);
    }

private:
    Constraint const& constraint_;
    std::vector<std::int64_t> const& facts_;
    Point const& point_;
};

// The offset of `arch.NAME` (`command.NAME`) in the constraint text, for an error at that
// character.
std::size_t offsetOfFact(std::string const& text, std::string const& name,
                         std::string_view of = "arch") {
    std::string const word = fmt::format("{}.{}", of, name);
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        std::size_t const end = at + word.size();
        bool const whole =
            end == text.size() ||
            !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
        if (whole)
            return at;
    }
    return 0;
}

} // namespace

Solver::Solver(SearchSpace const& space, rules::ArchFacts const& arch, CommandFacts const& command)
    : space_(space)
    , checkAt_(space.parameters.size()) {
    for (std::size_t c = 0; c < space.constraints.size(); ++c) {
        Constraint const& constraint = space.constraints[c];
        std::vector<std::int64_t> facts(constraint.parameterOf.size(), 0);
        for (std::size_t k = 0; k < facts.size(); ++k) {
            if (constraint.parameterOf[k] >= 0)
                continue;
            std::string const& name = constraint.expression.placeholders[k].attribute;
            std::string const text = constraint.at.asString();
            if (constraint.expression.placeholders[k].kind ==
                rules::Placeholder::Kind::CommandFact) {
                if (!command)
                    constraint.at.failInString(
                        offsetOfFact(text, name, "command"),
                        fmt::format("'command.{}' needs the Command being tuned; none was given",
                                    name));
                auto value = command(name);
                if (!value)
                    constraint.at.failInString(
                        offsetOfFact(text, name, "command"),
                        fmt::format("the Command has no fact 'command.{}'; it has {}", name,
                                    fmt::join(commandFactNames(), ", ")));
                facts[k] = *value;
                continue;
            }
            if (!arch)
                constraint.at.failInString(
                    offsetOfFact(text, name),
                    fmt::format("'arch.{}' needs a target; none was given", name));
            auto value = arch(name);
            if (!value)
                constraint.at.failInString(
                    offsetOfFact(text, name),
                    fmt::format("the target has no fact or capability 'arch.{}' (kiln arch show "
                                "TARGET lists them)",
                                name));
            facts[k] = *value;
        }
        facts_.push_back(std::move(facts));
        if (constraint.lastParameter < 0)
            constant_.push_back(c);
        else
            checkAt_[static_cast<std::size_t>(constraint.lastParameter)].push_back(c);
    }
}

bool Solver::holds(std::size_t c, Point const& point) const {
    Constraint const& constraint = space_.constraints[c];
    try {
        return evaluate(*constraint.expression.tree,
                        ConstraintEnvironment(constraint, facts_[c], point))
            .asBool();
    } catch (UserError const& e) {
        std::vector<std::string> bound;
        for (std::size_t i = 0; i < point.size() && i <= std::size_t(constraint.lastParameter); ++i)
            bound.push_back(fmt::format("{}={}", space_.parameters[i].name, point[i]));
        constraint.at.fail(fmt::format("the constraint cannot be evaluated at {}: {}",
                                       fmt::join(bound, ","), e.message()));
    }
}

SolverStats Solver::enumerate(std::function<bool(Point const&)> const& visit,
                              std::int64_t maxVisits) const {
    SolverStats stats;
    stats.rejectedBy.assign(space_.constraints.size(), 0);
    std::size_t const depth = space_.parameters.size();
    Point point(depth, 0);
    for (std::size_t c : constant_)
        if (!holds(c, point)) {
            ++stats.rejectedBy[c];
            return stats;
        }
    // Iterative depth-first search: choice[d] is the index of the value bound at depth d.
    std::vector<std::size_t> choice(depth, 0);
    std::size_t d = 0;
    while (true) {
        auto const& values = space_.parameters[d].values;
        if (choice[d] == values.size()) {
            if (d == 0)
                return stats;
            choice[d] = 0;
            ++choice[--d];
            continue;
        }
        if (stats.partialPoints == maxVisits) {
            stats.complete = false;
            return stats;
        }
        point[d] = values[choice[d]];
        ++stats.partialPoints;
        bool ok = true;
        for (std::size_t c : checkAt_[d])
            if (!holds(c, point)) {
                ++stats.rejectedBy[c];
                ok = false;
                break;
            }
        if (!ok) {
            ++choice[d];
            continue;
        }
        if (d + 1 < depth) {
            ++d;
            continue;
        }
        ++stats.validPoints;
        if (!visit(point))
            return stats;
        ++choice[d];
    }
}

std::vector<Point> Solver::all(std::int64_t limit) const {
    std::vector<Point> points;
    bool tooMany = false;
    SolverStats const stats = enumerate(
        [&](Point const& p) {
            if (static_cast<std::int64_t>(points.size()) == limit) {
                tooMany = true;
                return false;
            }
            points.push_back(p);
            return true;
        },
        kMaxSolverVisits);
    if (!stats.complete)
        fail("search space '{}' is too large to enumerate: {} partial points visited and {} valid "
             "found so far; narrow its domains or put constraints on the first parameters",
             space_.name, stats.partialPoints, points.size());
    if (tooMany)
        fail("search space '{}' has more than {} valid points; narrow its domains or add "
             "constraints",
             space_.name, limit);
    if (!points.empty())
        return points;
    auto const worst = std::max_element(stats.rejectedBy.begin(), stats.rejectedBy.end());
    if (worst == stats.rejectedBy.end())
        fail("search space '{}' has no valid point", space_.name);
    auto const c = static_cast<std::size_t>(worst - stats.rejectedBy.begin());
    if (space_.constraints[c].lastParameter < 0)
        space_.constraints[c].at.fail(
            fmt::format("search space '{}' has no valid point: this constraint reads only facts "
                        "of the target, and they do not satisfy it",
                        space_.name));
    space_.constraints[c].at.fail(fmt::format(
        "search space '{}' has no valid point: this constraint rejected {} of the {} partial "
        "points tried ({} points before constraints)",
        space_.name, *worst, std::max<std::int64_t>(stats.partialPoints, 1),
        space_.unconstrainedSize()));
}

bool Solver::valid(Point const& point) const {
    if (point.size() != space_.parameters.size())
        return false;
    for (std::size_t i = 0; i < point.size(); ++i) {
        auto const& values = space_.parameters[i].values;
        if (std::find(values.begin(), values.end(), point[i]) == values.end())
            return false;
    }
    for (std::size_t c = 0; c < space_.constraints.size(); ++c)
        if (!holds(c, point))
            return false;
    return true;
}

std::map<std::string, std::int64_t> Solver::named(Point const& point) const {
    std::map<std::string, std::int64_t> out;
    for (std::size_t i = 0; i < point.size(); ++i)
        out[space_.parameters[i].name] = point[i];
    return out;
}

std::string Solver::text(Point const& point) const {
    std::string out;
    for (std::size_t i = 0; i < point.size(); ++i)
        out += fmt::format("{}{}={}", i ? "," : "", space_.parameters[i].name, point[i]);
    return out;
}

std::optional<Point> Solver::fromNamed(std::map<std::string, std::int64_t> const& named) const {
    if (named.size() != space_.parameters.size())
        return std::nullopt;
    Point point;
    for (auto const& p : space_.parameters) {
        auto it = named.find(p.name);
        if (it == named.end() ||
            std::find(p.values.begin(), p.values.end(), it->second) == p.values.end())
            return std::nullopt;
        point.push_back(it->second);
    }
    return point;
}

std::vector<Point> Solver::neighbours(Point const& point) const {
    std::vector<Point> out;
    for (std::size_t i = 0; i < point.size(); ++i) {
        auto const& values = space_.parameters[i].values;
        auto const at = std::find(values.begin(), values.end(), point[i]);
        if (at == values.end())
            continue;
        for (int step : {-1, 1}) {
            auto const index = (at - values.begin()) + step;
            if (index < 0 || index >= static_cast<std::ptrdiff_t>(values.size()))
                continue;
            Point p = point;
            p[i] = values[static_cast<std::size_t>(index)];
            if (valid(p))
                out.push_back(std::move(p));
        }
    }
    return out;
}

} // namespace kiln::scheduler
