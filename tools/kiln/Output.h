// Output.h: writing what a subcommand produces to the files the user named.
#pragma once

#include <string>

namespace kiln::cli {

/// Writes `text` to `path`, replacing it; a UserError naming the file when it cannot.
void writeFile(std::string const& path, std::string const& text);

} // namespace kiln::cli
