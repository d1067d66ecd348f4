// CheckLines.h: a tiny FileCheck for printed graphs and emitted code.
//
// The expected output is a list of directives, one per line, matched against the output's lines
// in order, each as a substring:
//   CHECK: text       some later line contains text
//   CHECK-NEXT: text  the line right after the previous match contains text
//   CHECK-NOT: text   no line between the previous match and the next one contains text
// Other lines (comments, blank lines) are ignored. Enough for tests that care about a few key
// lines of a long output and not about the rest.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::test {

/// Nothing when `output` satisfies `checks`; otherwise what failed, with the directive's line.
inline std::optional<std::string> checkLines(std::string_view output, std::string_view checks) {
    std::vector<std::string> lines;
    {
        std::istringstream in{std::string(output)};
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
    }
    std::size_t next = 0; // the first output line not yet consumed
    std::vector<std::string> forbidden;
    auto const failure = [](int directiveLine, std::string const& what) {
        return "check line " + std::to_string(directiveLine) + ": " + what;
    };

    std::istringstream in{std::string(checks)};
    int directiveLine = 0;
    for (std::string directive; std::getline(in, directive);) {
        ++directiveLine;
        std::size_t const start = directive.find_first_not_of(" \t");
        if (start == std::string::npos)
            continue;
        std::string_view d = std::string_view(directive).substr(start);
        auto const take = [&](std::string_view prefix) {
            if (d.substr(0, prefix.size()) != prefix)
                return false;
            d.remove_prefix(prefix.size());
            d.remove_prefix(std::min(d.find_first_not_of(' '), d.size()));
            return true;
        };
        if (take("CHECK-NOT:")) {
            forbidden.emplace_back(d);
            continue;
        }
        bool const nextLine = take("CHECK-NEXT:");
        if (!nextLine && !take("CHECK:"))
            continue;
        std::size_t found = next;
        if (nextLine) {
            if (next >= lines.size() || lines[next].find(d) == std::string::npos)
                return failure(directiveLine,
                               "expected the next line to contain '" + std::string(d) + "', got '" +
                                   (next < lines.size() ? lines[next] : "<end>") + "'");
        } else {
            while (found < lines.size() && lines[found].find(d) == std::string::npos)
                ++found;
            if (found == lines.size())
                return failure(directiveLine, "no line after line " + std::to_string(next) +
                                                  " contains '" + std::string(d) + "'");
        }
        for (std::size_t k = next; k < found; ++k)
            for (auto const& f : forbidden)
                if (lines[k].find(f) != std::string::npos)
                    return failure(directiveLine, "line " + std::to_string(k + 1) + " contains '" +
                                                      f + "', which CHECK-NOT forbids: '" +
                                                      lines[k] + "'");
        forbidden.clear();
        next = found + 1;
    }
    for (std::size_t k = next; k < lines.size(); ++k)
        for (auto const& f : forbidden)
            if (lines[k].find(f) != std::string::npos)
                return failure(directiveLine, "line " + std::to_string(k + 1) + " contains '" + f +
                                                  "', which CHECK-NOT forbids");
    return std::nullopt;
}

} // namespace kiln::test
