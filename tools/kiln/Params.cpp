#include "Params.h"

#include "kiln/graph/Error.h"

#include <charconv>
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

} // namespace kiln::cli
