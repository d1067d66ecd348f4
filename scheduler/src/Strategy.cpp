#include "kiln/scheduler/Strategy.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace kiln::scheduler {

std::uint64_t drawBelow(std::mt19937_64& rng, std::uint64_t n) {
    // Rejection sampling: no modulo bias, and no library distribution whose algorithm varies.
    std::uint64_t const limit =
        std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
    std::uint64_t x = rng();
    while (x >= limit)
        x = rng();
    return x % n;
}

namespace {

// Hands out a fixed order of points, skipping those already seen.
class OrderedStrategy : public Strategy {
public:
    explicit OrderedStrategy(std::vector<Point> order)
        : order_(std::move(order)) {}

    std::vector<Point> propose(std::size_t most) override {
        std::vector<Point> out;
        while (next_ < order_.size() && out.size() < most) {
            Point const& p = order_[next_++];
            if (seen_.insert(p).second)
                out.push_back(p);
        }
        return out;
    }
    void observe(Outcome const& o) override { seen_.insert(o.point); }

private:
    std::vector<Point> order_;
    std::size_t next_ = 0;
    std::set<Point> seen_;
};

std::vector<Point> shuffled(std::vector<Point> points, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = points.size(); i > 1; --i)
        std::swap(points[i - 1], points[drawBelow(rng, i)]);
    return points;
}

class EvolutionaryStrategy : public Strategy {
public:
    EvolutionaryStrategy(Solver const& solver, std::vector<Point> valid, StrategyOptions const& o)
        : solver_(solver)
        , valid_(std::move(valid))
        , rng_(o.seed)
        , population_(std::max<std::size_t>(o.population, 2)) {}

    std::vector<Point> propose(std::size_t most) override {
        std::vector<Point> out;
        // The first generation: random valid points.
        if (results_.size() < population_) {
            while (out.size() < most && seen_.size() < valid_.size() &&
                   seen_.size() < population_) {
                Point const& p = valid_[drawBelow(rng_, valid_.size())];
                if (seen_.insert(p).second)
                    out.push_back(p);
            }
            if (!out.empty())
                return out;
        }
        if (results_.empty())
            return out;
        // Later generations: children of tournament winners among the best `population_`.
        std::vector<std::pair<double, Point>> ranked(results_.begin(), results_.end());
        std::sort(ranked.begin(), ranked.end());
        ranked.resize(std::min(ranked.size(), population_));
        std::size_t attempts = 0;
        while (out.size() < most && seen_.size() < valid_.size() && attempts < 64 * most + 256) {
            ++attempts;
            Point const& a = tournament(ranked);
            Point const& b = tournament(ranked);
            Point child = a;
            for (std::size_t i = 0; i < child.size(); ++i)
                if (drawBelow(rng_, 2))
                    child[i] = b[i];
            // Mutation: one parameter moves one or two steps in its domain.
            std::size_t const i = drawBelow(rng_, child.size());
            auto const& values = solver_.space().parameters[i].values;
            auto const at = std::find(values.begin(), values.end(), child[i]) - values.begin();
            auto const step = static_cast<std::ptrdiff_t>(drawBelow(rng_, 5)) - 2;
            auto const to = std::clamp<std::ptrdiff_t>(
                at + step, 0, static_cast<std::ptrdiff_t>(values.size()) - 1);
            child[i] = values[static_cast<std::size_t>(to)];
            if (!seen_.count(child) && solver_.valid(child)) {
                seen_.insert(child);
                out.push_back(std::move(child));
            }
        }
        // Converged on a neighbourhood: fall back to unseen random points.
        while (out.empty() && seen_.size() < valid_.size()) {
            Point const& p = valid_[drawBelow(rng_, valid_.size())];
            if (seen_.insert(p).second)
                out.push_back(p);
        }
        return out;
    }

    void observe(Outcome const& o) override {
        seen_.insert(o.point);
        results_.emplace(o.ok ? o.microseconds : std::numeric_limits<double>::infinity(), o.point);
    }

private:
    Point const& tournament(std::vector<std::pair<double, Point>> const& ranked) {
        std::size_t const x = drawBelow(rng_, ranked.size()), y = drawBelow(rng_, ranked.size());
        return ranked[std::min(x, y)].second; // ranked is sorted: the smaller index wins
    }

    Solver const& solver_;
    std::vector<Point> valid_;
    std::mt19937_64 rng_;
    std::size_t population_;
    std::set<Point> seen_;
    std::multimap<double, Point> results_;
};

class ModelGuidedStrategy : public Strategy {
public:
    ModelGuidedStrategy(Solver const& solver, std::vector<Point> const& valid,
                        StrategyOptions const& o)
        : solver_(solver)
        , predict_(o.predict)
        , topK_(std::max<std::size_t>(o.topK, 1)) {
        if (!predict_)
            fail("the model-guided strategy needs a cost model");
        for (auto const& p : valid)
            ranked_.emplace_back(predict_(p), p);
        std::stable_sort(ranked_.begin(), ranked_.end(),
                         [](auto const& a, auto const& b) { return a.first < b.first; });
    }

    std::vector<Point> propose(std::size_t most) override {
        std::vector<Point> out;
        // Phase 1: the model's top k.
        while (next_ < ranked_.size() && next_ < topK_ && out.size() < most) {
            Point const& p = ranked_[next_++].second;
            if (seen_.insert(p).second)
                out.push_back(p);
        }
        if (!out.empty() || next_ < std::min(topK_, ranked_.size()))
            return out;
        // Phase 2: refine around the best measured, neighbours in model order.
        if (!best_)
            return continueRanking(most);
        std::vector<std::pair<double, Point>> around;
        for (auto& n : solver_.neighbours(*best_))
            if (!seen_.count(n))
                around.emplace_back(predict_(n), std::move(n));
        std::stable_sort(around.begin(), around.end(),
                         [](auto const& a, auto const& b) { return a.first < b.first; });
        for (auto& [t, p] : around) {
            if (out.size() == most)
                break;
            seen_.insert(p);
            out.push_back(std::move(p));
        }
        // No unmeasured neighbour left: a local optimum; go on down the model's ranking.
        return out.empty() ? continueRanking(most) : out;
    }

    void observe(Outcome const& o) override {
        seen_.insert(o.point);
        if (o.ok && (!best_ || o.microseconds < bestTime_)) {
            best_ = o.point;
            bestTime_ = o.microseconds;
        }
    }

private:
    std::vector<Point> continueRanking(std::size_t most) {
        std::vector<Point> out;
        while (next_ < ranked_.size() && out.size() < most) {
            Point const& p = ranked_[next_++].second;
            if (seen_.insert(p).second)
                out.push_back(p);
        }
        return out;
    }

    Solver const& solver_;
    Predictor predict_;
    std::size_t topK_;
    std::vector<std::pair<double, Point>> ranked_;
    std::size_t next_ = 0;
    std::set<Point> seen_;
    std::optional<Point> best_;
    double bestTime_ = 0;
};

} // namespace

std::vector<std::string> strategyNames() {
    return {"exhaustive", "random", "evolutionary", "model-guided"};
}

std::unique_ptr<Strategy> makeStrategy(Solver const& solver, StrategyOptions const& options) {
    auto const names = strategyNames();
    if (std::find(names.begin(), names.end(), options.name) == names.end()) {
        auto near = closestMatch(options.name, std::span<std::string const>(names));
        fail("unknown strategy '{}'{}; expected one of {}", options.name,
             near ? fmt::format(" (did you mean '{}'?)", *near) : "", fmt::join(names, ", "));
    }
    std::vector<Point> valid = solver.all();
    if (options.name == "exhaustive")
        return std::make_unique<OrderedStrategy>(std::move(valid));
    if (options.name == "random")
        return std::make_unique<OrderedStrategy>(shuffled(std::move(valid), options.seed));
    if (options.name == "evolutionary")
        return std::make_unique<EvolutionaryStrategy>(solver, std::move(valid), options);
    return std::make_unique<ModelGuidedStrategy>(solver, valid, options);
}

} // namespace kiln::scheduler
