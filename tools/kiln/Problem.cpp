#include "Problem.h"

#include "kiln/graph/Bindings.h"
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

std::map<std::string, std::int64_t> sizesOf(Command const& command,
                                            std::map<std::string, double> const& problem) {
    std::map<std::string, std::int64_t> sizes;
    for (auto const& name : command.sizes()) {
        if (auto it = problem.find(name); it != problem.end())
            sizes[name] = problemSize(name, it->second);
        else if (auto d = command.defaults.find(name); d != command.defaults.end())
            sizes[name] = problemSize(name, d->second);
    }
    return sizes;
}

} // namespace kiln::cli
