// Solver.h: the valid points of a search space for one target.
//
// A point assigns one value of its domain to every parameter. The solver binds parameters in
// the order the file declares them and checks each constraint as soon as the last parameter it
// reads is bound, so a subtree that breaks a constraint is never entered: enumeration costs in
// proportion to the valid partial points, not to the product of the domains. Arch facts and
// the Command's facts are resolved once, when the solver is made; an unknown fact is an error at
// its character in the constraint.
#pragma once

#include "kiln/rules/ArchFacts.h"
#include "kiln/scheduler/CommandFacts.h"
#include "kiln/scheduler/SearchSpace.h"

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// Values of the parameters, in the order of SearchSpace::parameters.
using Point = std::vector<std::int64_t>;

/// How the constraints pruned an enumeration.
struct SolverStats {
    std::int64_t partialPoints = 0;       ///< nodes of the search tree visited
    std::int64_t validPoints = 0;         ///< leaves that passed every constraint
    std::vector<std::int64_t> rejectedBy; ///< per constraint: partial points it cut
    bool complete = true;                 ///< false when the visit limit stopped the enumeration
};

/// The most partial points all() visits before it calls a space too large to enumerate.
inline constexpr std::int64_t kMaxSolverVisits = std::int64_t(1) << 26;

class Solver {
public:
    /// A solver for `space` on the target whose facts `arch` gives (may be empty when no
    /// constraint reads arch facts), for the Command whose facts `command` gives (may be empty
    /// when no constraint reads `command.NAME`: CommandFacts.h). Throws a UserError at an
    /// unknown fact.
    Solver(SearchSpace const& space, rules::ArchFacts const& arch,
           CommandFacts const& command = {});

    SearchSpace const& space() const { return space_; }

    /// Calls `visit` for each valid point in lexicographic order of the domains, until it returns
    /// false or `maxVisits` partial points have been visited. Returns what it did.
    SolverStats enumerate(std::function<bool(Point const&)> const& visit,
                          std::int64_t maxVisits = std::numeric_limits<std::int64_t>::max()) const;

    /// Every valid point; a UserError when there is none, naming the constraint that cut most
    /// (at its location), when there are more than `limit`, and when finding them would visit
    /// more than kMaxSolverVisits partial points.
    std::vector<Point> all(std::int64_t limit = std::int64_t(1) << 24) const;

    /// Whether `point` (one value per parameter, each in its domain) satisfies every constraint.
    bool valid(Point const& point) const;

    /// The point as NAME -> value, for the pipeline and the database.
    std::map<std::string, std::int64_t> named(Point const& point) const;
    /// The point as "MT_M=64,MT_N=128" (declaration order).
    std::string text(Point const& point) const;
    /// The point `named` describes, if every parameter is given a value of its domain.
    std::optional<Point> fromNamed(std::map<std::string, std::int64_t> const& named) const;

    /// Points that differ from `point` in one parameter by one step of its domain, valid only.
    std::vector<Point> neighbours(Point const& point) const;

private:
    bool holds(std::size_t constraint, Point const& point) const;

    SearchSpace const& space_;
    /// Per constraint, the value of each arch-fact placeholder (unused for parameters).
    std::vector<std::vector<std::int64_t>> facts_;
    /// Per depth (parameter index), the constraints to check once it is bound.
    std::vector<std::vector<std::size_t>> checkAt_;
    std::vector<std::size_t> constant_; ///< constraints that read no parameter
};

} // namespace kiln::scheduler
