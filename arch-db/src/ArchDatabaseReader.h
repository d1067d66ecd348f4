// ArchDatabaseReader.h: JSON text -> targets, with errors that point into the JSON.
//
// Every problem (bad JSON, a missing or misspelt key, a wrong type, an unknown capability or
// wait queue) is an ArchError naming the origin and the JSON pointer of the offending value, so
// a hand-edited KILN_ARCH_FILE can be fixed from the message alone.
#pragma once

#include "kiln/arch-db/Arch.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::arch::detail {

/// Parses and checks a whole database.
std::vector<Arch> readDatabase(std::string_view text, std::string const& origin);

} // namespace kiln::arch::detail
