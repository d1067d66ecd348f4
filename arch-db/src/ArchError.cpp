// ArchError.cpp: error messages that list the known names and suggest the closest one.
#include "kiln/arch-db/ArchError.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kiln::arch {

namespace {

std::size_t editDistance(std::string_view a, std::string_view b) {
    auto lower = [](char c) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    };
    std::vector<std::size_t> previous(b.size() + 1);
    std::vector<std::size_t> current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        previous[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t substitution =
                previous[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
        }
        std::swap(previous, current);
    }
    return previous[b.size()];
}

} // namespace

ArchError::ArchError(Kind kind, std::string message, std::string suggestion)
    : std::runtime_error(std::move(message))
    , kind_(kind)
    , suggestion_(std::move(suggestion)) {}

std::string closestName(std::string_view name, std::span<std::string const> known) {
    std::string best;
    std::size_t bestDistance = std::max<std::size_t>(2, name.size() / 3) + 1;
    for (auto const& candidate : known) {
        std::size_t distance = editDistance(name, candidate);
        if (distance < bestDistance) {
            bestDistance = distance;
            best = candidate;
        }
    }
    return best;
}

ArchError ArchError::unknownName(Kind kind, std::string_view what, std::string_view name,
                                 std::string_view context, std::span<std::string const> known) {
    std::vector<std::string> sorted(known.begin(), known.end());
    std::sort(sorted.begin(), sorted.end());
    std::string suggestion = closestName(name, sorted);
    std::string message = std::string(what) + " '" + std::string(name) + "' is unknown";
    message += context;
    message += suggestion.empty() ? std::string(";") : "; did you mean '" + suggestion + "'?";
    message += " known " + std::string(what) + "s: ";
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        message += (i == 0 ? "" : ", ") + sorted[i];
    }
    if (sorted.empty()) {
        message += "(none)";
    }
    return ArchError(kind, std::move(message), std::move(suggestion));
}

} // namespace kiln::arch
