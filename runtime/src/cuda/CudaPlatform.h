// CudaPlatform.h: the CUDA platform (internal): the driver and its devices.
#pragma once

#include "kiln/runtime/Platform.h"

namespace kiln::runtime::cuda {

/// Loads the CUDA driver of `options` and counts its devices (NoDriver / NoDevice otherwise).
Expected<std::shared_ptr<Platform>> loadCudaPlatform(PlatformOptions const& options);

} // namespace kiln::runtime::cuda
