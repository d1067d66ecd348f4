// Platform.h: a GPU vendor's driver, loaded at run time, and its devices.
//
// loadPlatform("cuda") dlopens libcuda.so.1 and resolves the driver API through
// cuGetProcAddress; loadPlatform("hip") dlopens libamdhip64 and calls hipInit. A build or
// machine without them gets an Error (NoDriver, NoDevice, Unsupported) instead of a crash or a
// link failure, so every binary starts anywhere. Both are implementations of Platform and
// Device behind the same name lookup.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/Status.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// The environment variable that names the CUDA driver library to load instead of libcuda.so.1.
inline constexpr char const* kCudaDriverVariable = "KILN_CUDA_DRIVER";
/// The environment variable that names the HIP runtime library to load instead of libamdhip64.
inline constexpr char const* kHipRuntimeVariable = "KILN_HIP_RUNTIME";

/// How to load a platform.
struct PlatformOptions {
    /// The driver library to dlopen; empty: for "cuda" $KILN_CUDA_DRIVER, else libcuda.so.1; for
    /// "hip" $KILN_HIP_RUNTIME, else libamdhip64.so (and the sonames and paths ROCm installs).
    std::string driverLibrary;
};

/// A vendor's driver and its devices.
class Platform {
public:
    virtual ~Platform() = default;
    /// "cuda" or "hip".
    virtual std::string_view name() const = 0;
    /// The driver's version, e.g. "CUDA 13.0 (driver library libcuda.so.1)" or
    /// "HIP 6.3.42134 (runtime library libamdhip64.so)".
    virtual std::string version() const = 0;
    /// How many devices the driver sees.
    virtual int deviceCount() const = 0;
    /// Opens device `ordinal` (NoDevice when out of range). Each call opens a new handle on the
    /// same device context.
    virtual Expected<std::shared_ptr<Device>> device(int ordinal) = 0;
};

/// Loads the platform of this name ("cuda" or "hip"): NoDriver when the driver library cannot be
/// loaded or used, NoDevice when it sees no device, Unsupported for a name this build does not
/// have.
Expected<std::shared_ptr<Platform>> loadPlatform(std::string_view name,
                                                 PlatformOptions const& options = {});

/// The platform names this build knows, whether or not their drivers are present.
std::vector<std::string> platformNames();

} // namespace kiln::runtime
