#include "kiln/rules/Limits.h"

#include <fmt/format.h>

namespace kiln::rules {

std::string_view name(Limit limit) {
    static constexpr std::string_view names[] = {"applications", "steps", "candidates", "time"};
    return names[static_cast<int>(limit)];
}

std::string describe(Limit limit, Limits const& limits) {
    switch (limit) {
    case Limit::Applications:
        return fmt::format("{} rule applications", limits.applications);
    case Limit::Steps:
        return fmt::format("{} strategy steps", limits.steps);
    case Limit::Candidates:
        return fmt::format("{} candidate bindings tried by the matcher", limits.candidates);
    case Limit::Time:
        return fmt::format("{:g} s of wall time", limits.seconds);
    }
    return "";
}

std::chrono::steady_clock::time_point deadline(std::chrono::steady_clock::time_point start,
                                               Limits const& limits) {
    using Clock = std::chrono::steady_clock;
    // Beyond about a century (or not a number) there is no deadline to count to.
    if (!(limits.seconds < 3e9))
        return Clock::time_point::max();
    auto const budget =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.seconds));
    if (budget >= Clock::time_point::max() - start)
        return Clock::time_point::max();
    return start + budget;
}

} // namespace kiln::rules
