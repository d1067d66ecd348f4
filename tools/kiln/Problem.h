// Problem.h: the problem sizes and scalar values a subcommand runs a Command with.
//
// They come from the Command's "problem" defaults, overridden by `--size NAME=VALUE` options,
// and the tolerance a check uses follows the types the Command stores.
#pragma once

#include "kiln/graph/Command.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// The Command's defaults with each "NAME=VALUE" of `overrides` applied; bad text is a UserError.
std::map<std::string, double> problemOf(Command const& command,
                                        std::vector<std::string> const& overrides);

/// The relative error a check allows: 1e-2 when the Command stores a 16-bit float, else 1e-5.
double toleranceOf(Command const& command);

} // namespace kiln::cli
