// ArchJson.h: one target as JSON, in the database's own format.
//
// `kiln arch show --json` prints this, and a target printed this way can be pasted into a
// KILN_ARCH_FILE replacement: the text round-trips through ArchLibrary::fromJson.
#pragma once

#include "kiln/arch-db/Arch.h"

#include <string>

namespace kiln::arch {

/// The target as one element of the database's "targets" array, indented by `indent` spaces
/// (negative: one line). Overlaid device facts are written with their origin.
std::string toJsonText(Arch const& arch, int indent = 2);

/// The database format version this library reads and the generator writes.
inline constexpr int kSchemaVersion = 1;

} // namespace kiln::arch
