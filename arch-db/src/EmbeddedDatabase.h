// EmbeddedDatabase.h: the generated database text compiled into the library.
//
// The definition is written by the generator (arch-db/generator) into the build folder as
// EmbeddedArchDatabase.cpp, so the library never reads a file unless KILN_ARCH_FILE says so.
#pragma once

#include <string_view>

namespace kiln::arch::detail {

/// The database JSON exactly as the generator wrote it.
std::string_view embeddedDatabaseText();

} // namespace kiln::arch::detail
