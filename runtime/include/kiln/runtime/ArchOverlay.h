// ArchOverlay.h: a live device's facts laid over the architecture database's target.
//
// The database holds a reference part per target (an H100 SXM5 for sm_90); the device in hand
// may be a PCIe part with fewer SMs, or an H200 with more L2. liveArch() returns the database
// target with the device's own figures in place (origin Device, the database value kept beside),
// so codegen and the cost model use what is really there.
#pragma once

#include "kiln/arch-db/Arch.h"
#include "kiln/runtime/DeviceDescription.h"
#include "kiln/runtime/Status.h"

#include <string_view>
#include <vector>

namespace kiln::runtime {

/// The facts a device reports, named as the architecture database names them.
std::vector<arch::FactOverlay> deviceFacts(DeviceDescription const& device);

/// The database target (`target`, or the device's own, e.g. "sm_90") with the device's facts
/// overlaid; NotFound when the database has no such target.
Expected<arch::Arch> liveArch(DeviceDescription const& device, std::string_view target = {});

} // namespace kiln::runtime
