// ArchJson.h: one target as JSON, in the database's own format.
//
// `kiln arch show --json` prints this, and a target printed this way can be pasted into a
// KILN_ARCH_FILE replacement: the text round-trips through ArchLibrary::fromJson.
#pragma once

#include "kiln/arch-db/Arch.h"

#include <array>
#include <string>
#include <string_view>

namespace kiln::arch {

/// The target as one element of the database's "targets" array, indented by `indent` spaces
/// (negative: one line). Overlaid device facts are written with their origin.
std::string toJsonText(Arch const& arch, int indent = 2);

/// The database format version this library reads and the generator writes.
inline constexpr int kSchemaVersion = 1;

/// Facts every target must have, because codegen and the cost model read them without asking
/// (arch-db.schema.json lists the same names).
inline constexpr std::array<std::string_view, 11> kRequiredFacts{"wave_size",
                                                                 "max_threads_per_block",
                                                                 "shared_bytes",
                                                                 "shared_bytes_per_multiprocessor",
                                                                 "multiprocessor_count",
                                                                 "l2_bytes",
                                                                 "boost_clock_mhz",
                                                                 "memory_bandwidth_gbps",
                                                                 "peak_fp32_gflops",
                                                                 "peak_fp16_matrix_gflops",
                                                                 "peak_bf16_matrix_gflops"};

} // namespace kiln::arch
