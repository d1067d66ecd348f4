#include "kiln/scheduler/Compare.h"

#include <cmath>
#include <map>

namespace kiln::scheduler {

std::optional<double> kendallTau(std::vector<double> const& x, std::vector<double> const& y) {
    std::size_t const n = std::min(x.size(), y.size());
    if (n < 2)
        return std::nullopt;
    // O(n^2): sweeps have hundreds to a few thousand points.
    double concordant = 0, discordant = 0, tiesX = 0, tiesY = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            double const dx = x[i] - x[j], dy = y[i] - y[j];
            if (dx == 0 && dy == 0)
                continue;
            if (dx == 0)
                ++tiesX;
            else if (dy == 0)
                ++tiesY;
            else if ((dx > 0) == (dy > 0))
                ++concordant;
            else
                ++discordant;
        }
    double const denominator =
        std::sqrt((concordant + discordant + tiesX) * (concordant + discordant + tiesY));
    if (denominator == 0)
        return std::nullopt;
    return (concordant - discordant) / denominator;
}

Comparison compareResults(std::vector<TuningRecord> const& predicted,
                          std::vector<TuningRecord> const& measured) {
    std::map<std::map<std::string, std::int64_t>, double> first, second;
    for (auto const& r : predicted)
        if (r.status == RecordStatus::Ok)
            first[r.point] = r.microseconds;
    for (auto const& r : measured)
        if (r.status == RecordStatus::Ok)
            second[r.point] = r.microseconds;
    Comparison c;
    std::vector<double> x, y;
    std::vector<TuningRecord> firstCommon, secondCommon;
    for (auto const& [point, t] : first) {
        auto it = second.find(point);
        if (it == second.end())
            continue;
        x.push_back(t);
        y.push_back(it->second);
        TuningRecord a, b;
        a.point = b.point = point;
        a.microseconds = t;
        b.microseconds = it->second;
        firstCommon.push_back(a);
        secondCommon.push_back(b);
    }
    c.common = x.size();
    c.tau = kendallTau(x, y);
    auto const bestFirst = bestOf(firstCommon), bestSecond = bestOf(secondCommon);
    if (bestFirst && bestSecond) {
        c.predictedBest = bestFirst->point;
        c.measuredBest = bestSecond->point;
        c.pickRatio = second.at(bestFirst->point) / bestSecond->microseconds;
    }
    return c;
}

} // namespace kiln::scheduler
