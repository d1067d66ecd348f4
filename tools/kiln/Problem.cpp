#include "Problem.h"

#include "kiln/graph/Error.h"

#include <charconv>

namespace kiln::cli {

std::map<std::string, double> problemOf(Command const& command,
                                        std::vector<std::string> const& overrides) {
    std::map<std::string, double> problem = command.defaults;
    for (auto const& item : overrides) {
        auto const eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            fail("--size expects NAME=VALUE, not '{}'", item);
        std::string const name = item.substr(0, eq), text = item.substr(eq + 1);
        if (!command.isSize(name) && !command.findScalar(name))
            fail("--size {}: the command has no size or scalar called '{}'", item, name);
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size())
            fail("--size {}: '{}' is not a number", item, text);
        problem[name] = value;
    }
    return problem;
}

} // namespace kiln::cli
