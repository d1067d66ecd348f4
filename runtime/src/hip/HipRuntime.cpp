// HipRuntime.cpp: dlopen of libamdhip64, its entry points by name, and hipInit.
#include "kiln/runtime/hip/HipRuntime.h"

#include "kiln/runtime/Platform.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace kiln::runtime::hip {
namespace {

/// A function pointer from a symbol address (memcpy: ISO C++ has no cast between the two).
template <class F>
void assign(F& out, void* address) {
    static_assert(sizeof(F) == sizeof(void*));
    std::memcpy(&out, &address, sizeof(void*));
}

/// Where ROCm puts the runtime, in the order tried (kHipRuntimeNames).
std::vector<std::string> defaultLibraries() {
    std::vector<std::string> names(kHipRuntimeNames.begin(), kHipRuntimeNames.end());
    if (char const* rocm = std::getenv("ROCM_PATH"); rocm && *rocm)
        names.push_back(std::string(rocm) + "/lib/libamdhip64.so");
    names.emplace_back(kHipRuntimeInRocmTree);
    return names;
}

/// What to do about a missing runtime, ending each NoDriver message of a library that did not load.
std::string installHint() {
    return std::string(" (install ROCm's HIP runtime, or set ") + kHipRuntimeVariable +
           " to the path of libamdhip64.so)";
}

} // namespace

Expected<std::shared_ptr<HipRuntime>> HipRuntime::load(std::string const& requested) {
    std::vector<std::string> candidates;
    if (!requested.empty()) {
        candidates.push_back(requested);
    } else if (char const* variable = std::getenv(kHipRuntimeVariable); variable && *variable) {
        candidates.emplace_back(variable);
    } else {
        candidates = defaultLibraries();
    }

    // Never dlclose'd: the runtime keeps threads and device queues for the life of the process.
    void* handle = nullptr;
    std::string library;
    std::string firstReason;
    for (std::string const& candidate : candidates) {
        handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            library = candidate;
            break;
        }
        if (firstReason.empty()) {
            char const* reason = dlerror();
            firstReason = reason ? reason : "unknown dlopen error";
        }
    }
    if (!handle) {
        if (candidates.size() == 1) {
            return Error(ErrorCode::NoDriver, "no HIP runtime: cannot load '" + candidates[0] +
                                                  "': " + firstReason + installHint());
        }
        std::string tried;
        for (std::size_t i = 1; i < candidates.size(); ++i)
            tried += (i == 1 ? "" : ", ") + candidates[i];
        return Error(ErrorCode::NoDriver, "no HIP runtime: cannot load " + candidates[0] +
                                              " (nor " + tried + "): " + firstReason +
                                              installHint());
    }

    std::shared_ptr<HipRuntime> runtime(new HipRuntime());
    runtime->library_ = library;
    HipFunctions& api = runtime->api_;
    std::vector<std::string> missing;
    auto require = [&](auto& slot, char const* name) {
        assign(slot, dlsym(handle, name));
        if (!slot)
            missing.emplace_back(name);
    };

    require(api.hipInit, "hipInit");
    require(api.hipGetDeviceCount, "hipGetDeviceCount");
    require(api.hipGetErrorName, "hipGetErrorName");
    if (!missing.empty()) {
        return Error(ErrorCode::NoDriver, "no usable HIP runtime: '" + library +
                                              "' lacks hipInit, hipGetDeviceCount or "
                                              "hipGetErrorName (it is not libamdhip64)");
    }
    require(api.hipGetErrorString, "hipGetErrorString");
    require(api.hipRuntimeGetVersion, "hipRuntimeGetVersion");
    require(api.hipDeviceGet, "hipDeviceGet");
    require(api.hipDeviceGetName, "hipDeviceGetName");
    require(api.hipDeviceGetAttribute, "hipDeviceGetAttribute");
    require(api.hipDeviceTotalMem, "hipDeviceTotalMem");
    require(api.hipGetDevice, "hipGetDevice");
    require(api.hipSetDevice, "hipSetDevice");
    require(api.hipDeviceSynchronize, "hipDeviceSynchronize");
    require(api.hipMalloc, "hipMalloc");
    require(api.hipFree, "hipFree");
    require(api.hipHostMalloc, "hipHostMalloc");
    require(api.hipHostFree, "hipHostFree");
    require(api.hipMemcpyHtoD, "hipMemcpyHtoD");
    require(api.hipMemcpyDtoH, "hipMemcpyDtoH");
    require(api.hipMemcpyHtoDAsync, "hipMemcpyHtoDAsync");
    require(api.hipMemcpyDtoHAsync, "hipMemcpyDtoHAsync");
    require(api.hipMemcpyDtoDAsync, "hipMemcpyDtoDAsync");
    require(api.hipMemsetD32Async, "hipMemsetD32Async");
    require(api.hipStreamCreateWithFlags, "hipStreamCreateWithFlags");
    require(api.hipStreamDestroy, "hipStreamDestroy");
    require(api.hipStreamSynchronize, "hipStreamSynchronize");
    require(api.hipStreamWaitEvent, "hipStreamWaitEvent");
    require(api.hipStreamBeginCapture, "hipStreamBeginCapture");
    require(api.hipStreamEndCapture, "hipStreamEndCapture");
    require(api.hipGraphInstantiate, "hipGraphInstantiate");
    require(api.hipGraphLaunch, "hipGraphLaunch");
    require(api.hipGraphExecDestroy, "hipGraphExecDestroy");
    require(api.hipGraphDestroy, "hipGraphDestroy");
    require(api.hipEventCreate, "hipEventCreate");
    require(api.hipEventDestroy, "hipEventDestroy");
    require(api.hipEventRecord, "hipEventRecord");
    require(api.hipEventSynchronize, "hipEventSynchronize");
    require(api.hipEventElapsedTime, "hipEventElapsedTime");
    require(api.hipModuleLoadData, "hipModuleLoadData");
    require(api.hipModuleUnload, "hipModuleUnload");
    require(api.hipModuleGetFunction, "hipModuleGetFunction");
    require(api.hipFuncGetAttribute, "hipFuncGetAttribute");
    require(api.hipModuleLaunchKernel, "hipModuleLaunchKernel");
    // ROCm 6.0 renamed the structure's layout R0600 and kept the old one as R0000; ROCm 5 has
    // only the plain name, with the old layout.
    assign(api.hipGetDevicePropertiesR0600, dlsym(handle, "hipGetDevicePropertiesR0600"));
    if (!api.hipGetDevicePropertiesR0600) {
        assign(api.hipGetDevicePropertiesR0000, dlsym(handle, "hipGetDevicePropertiesR0000"));
        if (!api.hipGetDevicePropertiesR0000)
            require(api.hipGetDevicePropertiesR0000, "hipGetDeviceProperties");
    }
    if (!missing.empty()) {
        std::string names;
        for (std::string const& name : missing)
            names += (names.empty() ? "" : ", ") + name;
        return Error(ErrorCode::NoDriver, "no usable HIP runtime: '" + library + "' lacks " +
                                              names + " (ROCm 5.0 or newer is needed)");
    }

    if (HipError const result = api.hipInit(0); result != kHipSuccess) {
        bool const noDevice = result == kHipErrorNoDevice || result == kHipErrorInvalidDevice;
        return Error(noDevice ? ErrorCode::NoDevice : ErrorCode::NoDriver,
                     std::string(noDevice ? "no AMD device: " : "no usable HIP runtime: ") +
                         "hipInit failed: " + runtime->describe(result) + " (the HIP runtime '" +
                         library + "')");
    }
    KILN_RETURN_IF_ERROR(
        runtime->check(api.hipRuntimeGetVersion(&runtime->version_), "hipRuntimeGetVersion"));
    return runtime;
}

std::string HipRuntime::versionText() const {
    return std::to_string(version_ / 10000000) + "." + std::to_string(version_ / 100000 % 100) +
           "." + std::to_string(version_ % 100000);
}

std::string HipRuntime::describe(HipError result) const {
    char const* name = api_.hipGetErrorName ? api_.hipGetErrorName(result) : nullptr;
    char const* text = api_.hipGetErrorString ? api_.hipGetErrorString(result) : nullptr;
    std::string description = name ? name : "hipError_t " + std::to_string(result);
    if (text && *text)
        description += std::string(" (") + text + ")";
    return description;
}

Status HipRuntime::check(HipError result, std::string_view call, std::string_view context) const {
    if (result == kHipSuccess)
        return {};
    std::string message = std::string(call) + " failed: " + describe(result);
    if (!context.empty())
        message += std::string(": ") + std::string(context);
    ErrorCode const code = result == kHipErrorNoDevice || result == kHipErrorInvalidDevice
                               ? ErrorCode::NoDevice
                               : ErrorCode::DriverError;
    return Error(code, std::move(message));
}

ScopedDevice::ScopedDevice(HipFunctions const& api, int ordinal)
    : api_(api) {
    int current = -1;
    if (api_.hipGetDevice(&current) != kHipSuccess || current != ordinal) {
        if (api_.hipSetDevice(ordinal) == kHipSuccess)
            previous_ = current;
    }
}

ScopedDevice::~ScopedDevice() {
    if (previous_ >= 0)
        (void)api_.hipSetDevice(previous_);
}

} // namespace kiln::runtime::hip
