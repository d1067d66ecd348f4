// Fact.h: one named number about a target (wave_size, shared_bytes, l2_bytes, ...).
//
// Facts are generic so that the rule expression language can read any of them by name
// (`arch.shared_bytes`) without a C++ change when a fact is added. Each carries its unit and
// where the figure comes from; a fact a live device reported keeps the database value beside it
// so both can be shown side by side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::arch {

/// Where the current value of a fact comes from.
enum class FactOrigin : std::uint8_t {
    Database, ///< the generated (or KILN_ARCH_FILE) database
    Device,   ///< measured or queried on a live device by the runtime (Arch::withOverlay)
};

/// One named number about a target.
struct Fact {
    std::string name;
    std::int64_t value = 0;
    std::string unit;   ///< bytes, threads, registers, count, MHz, GB/s, GFLOP/s, ...
    std::string source; ///< the document the figure comes from, or "estimate: ..."
    FactOrigin origin = FactOrigin::Database;
    /// When origin is Device: the database's value for the same fact, if it had one.
    std::optional<std::int64_t> databaseValue;
    bool operator==(Fact const&) const = default;
};

} // namespace kiln::arch
