// Check.h: running a Command both ways and comparing, shared by `kiln interp` and `kiln demo`.
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/graph/KernelGraph.h"

#include <cstdint>
#include <map>
#include <string>

namespace kiln::cli {

struct CheckResult {
    std::map<std::string, double> errorByTensor; ///< max relative error of each stored tensor
    double worst = 0;
};

/// Interprets `graph` and runs the direct semantics of `command` on the same random inputs.
CheckResult checkAgainstReference(Command const& command, KernelGraph const& graph,
                                  std::map<std::string, double> const& problem, std::uint64_t seed);

} // namespace kiln::cli
