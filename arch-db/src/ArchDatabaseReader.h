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

/// A whole database: its targets and the names of its default targets, in the file's order.
struct Database {
    std::vector<Arch> targets;
    std::vector<std::string> defaultTargets;
};

/// Parses and checks a whole database; every default target must be one of its targets.
Database readDatabase(std::string_view text, std::string const& origin);

} // namespace kiln::arch::detail
