#include "Params.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/lowering/Codegen.h"

#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>
#include <span>
#include <sstream>

namespace kiln::cli {

std::map<std::string, std::int64_t> parseParams(std::vector<std::string> const& items) {
    std::map<std::string, std::int64_t> params;
    for (auto const& item : items) {
        std::stringstream list(item);
        std::string pair;
        while (std::getline(list, pair, ',')) {
            auto const eq = pair.find('=');
            if (eq == std::string::npos || eq == 0)
                fail("--params expects NAME=INTEGER, not '{}'", pair);
            std::string const value = pair.substr(eq + 1);
            std::int64_t v = 0;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
            if (ec != std::errc() || end != value.data() + value.size())
                fail("--params {}: '{}' is not an integer", pair, value);
            params[pair.substr(0, eq)] = v;
        }
    }
    return params;
}

void checkParams(std::map<std::string, std::int64_t> const& params, rules::Pipeline const& pipeline,
                 std::string const& file) {
    std::set<std::string> known = rules::parameterNames(pipeline);
    for (char const* name : lowering::kCodegenParameters)
        known.insert(name);
    std::vector<std::string> const names(known.begin(), known.end());
    for (auto const& [name, value] : params) {
        if (known.count(name))
            continue;
        auto const near = closestMatch(name, std::span<std::string const>(names));
        fail("--params {}={}: '{}' is not a parameter of pipeline '{}' ({}){}; it reads {}", name,
             value, name, pipeline.name, file,
             near ? fmt::format(" (did you mean '{}'?)", *near) : "", fmt::join(names, ", "));
    }
}

} // namespace kiln::cli
