// Params.h: schedule parameters on the command line, "MT_M=64,MT_N=64" (repeatable).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// Parses every "NAME=INT[,NAME=INT...]" item; a UserError on bad text.
std::map<std::string, std::int64_t> parseParams(std::vector<std::string> const& items);

} // namespace kiln::cli
