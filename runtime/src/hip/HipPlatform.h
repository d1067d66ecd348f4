// HipPlatform.h: the HIP platform (internal): the runtime and its AMD devices.
#pragma once

#include "kiln/runtime/Platform.h"

namespace kiln::runtime::hip {

/// Loads the HIP runtime of `options` and counts its devices (NoDriver / NoDevice otherwise).
Expected<std::shared_ptr<Platform>> loadHipPlatform(PlatformOptions const& options);

} // namespace kiln::runtime::hip
