// Problem.h: the problem sizes and scalar values a subcommand runs a Command with.
//
// They come from the Command's "problem" defaults, overridden by `--size NAME=VALUE` options.
#pragma once

#include "kiln/graph/Command.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// The Command's defaults with each "NAME=VALUE" of `overrides` applied; bad text is a UserError.
std::map<std::string, double> problemOf(Command const& command,
                                        std::vector<std::string> const& overrides);

} // namespace kiln::cli
