// Params.h: schedule parameters on the command line, "MT_M=64,MT_N=64" (repeatable).
#pragma once

#include "kiln/rules/Pipeline.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// Parses every "NAME=INT[,NAME=INT...]" item; a UserError on bad text.
std::map<std::string, std::int64_t> parseParams(std::vector<std::string> const& items);

/// A UserError for a parameter neither `pipeline` (read from `file`) nor code generation reads,
/// naming the nearest known one and listing them all.
void checkParams(std::map<std::string, std::int64_t> const& params, rules::Pipeline const& pipeline,
                 std::string const& file);

} // namespace kiln::cli
