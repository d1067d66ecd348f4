// ArchFacts.h: what `arch.NAME` means in a rule expression, for one target.
//
// A numeric fact of the architecture database (arch.shared_bytes, arch.wave_size) is its value;
// a capability (arch.HasWGMMA) is 1 when the target has it and 0 when it does not. So a guard
// such as `$MT_M * $MT_K * 2 <= arch.shared_bytes && arch.HasCpAsync == 1` reads one database.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kiln::rules {

using ArchFacts = std::function<std::optional<std::int64_t>(std::string const&)>;

/// The facts of `target` (e.g. "sm_90a"); a UserError listing the known targets when unknown.
ArchFacts archFacts(std::string const& target);

/// Whether `name` is a fact or a capability of any known target (so that `arch.NAME` can be
/// checked where it is written, whatever target a run gives later).
bool isArchFact(std::string const& name);

} // namespace kiln::rules
