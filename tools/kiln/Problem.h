// Problem.h: the problem sizes and scalar values a subcommand runs a Command with.
//
// They come from the Command's "problem" defaults, overridden by `--size NAME=VALUE` options.
#pragma once

#include "kiln/graph/Command.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// The Command's defaults with each "NAME=VALUE" of `overrides` applied; bad text is a UserError.
std::map<std::string, double> problemOf(Command const& command,
                                        std::vector<std::string> const& overrides);

/// The Command's sizes in `problem` (its defaults where `problem` has none), for code made for
/// this one problem (lowering::CodegenOptions::sizes); sizes without a value are left out, and
/// one that is not a whole number from 0 to 2^40 is a UserError (problemSize()).
std::map<std::string, std::int64_t> sizesOf(Command const& command,
                                            std::map<std::string, double> const& problem);

} // namespace kiln::cli
