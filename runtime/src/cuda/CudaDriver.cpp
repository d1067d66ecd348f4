// CudaDriver.cpp: dlopen of the CUDA driver and versioned symbol resolution.
#include "kiln/runtime/cuda/CudaDriver.h"

#include "kiln/runtime/Platform.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace kiln::runtime::cuda {
namespace {

/// A function pointer from a symbol address (memcpy: ISO C++ has no cast between the two).
template <class F>
void assign(F& out, void* address) {
    static_assert(sizeof(F) == sizeof(void*));
    std::memcpy(&out, &address, sizeof(void*));
}

std::string versionText(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace

Expected<std::shared_ptr<CudaDriver>> CudaDriver::load(std::string const& requested) {
    std::string library = requested;
    if (library.empty()) {
        char const* variable = std::getenv(kCudaDriverVariable);
        library = variable && *variable ? variable : "libcuda.so.1";
    }
    std::string const where = " (the driver library '" + library + "'";
    // Never dlclose'd: the driver does not support being unloaded while the process runs.
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        char const* reason = dlerror();
        return Error(ErrorCode::NoDriver, "no CUDA driver: cannot load '" + library +
                                              "': " + (reason ? reason : "unknown dlopen error") +
                                              " (install the NVIDIA driver, or set " +
                                              kCudaDriverVariable +
                                              " to the path of libcuda.so.1)");
    }

    std::shared_ptr<CudaDriver> driver(new CudaDriver());
    driver->library_ = library;
    CudaFunctions& api = driver->api_;

    // The unversioned entry points needed before cuInit, by their stable names.
    assign(api.cuGetErrorName, dlsym(handle, "cuGetErrorName"));
    assign(api.cuGetErrorString, dlsym(handle, "cuGetErrorString"));
    assign(api.cuInit, dlsym(handle, "cuInit"));
    assign(api.cuDriverGetVersion, dlsym(handle, "cuDriverGetVersion"));
    PFN_cuGetProcAddress_v12000 getProcAddress2 = nullptr;
    PFN_cuGetProcAddress_v11030 getProcAddress1 = nullptr;
    assign(getProcAddress2, dlsym(handle, "cuGetProcAddress_v2"));
    if (!getProcAddress2)
        assign(getProcAddress1, dlsym(handle, "cuGetProcAddress"));
    if (!api.cuInit || !api.cuDriverGetVersion || !api.cuGetErrorName || !api.cuGetErrorString ||
        (!getProcAddress1 && !getProcAddress2)) {
        return Error(ErrorCode::NoDriver, "no usable CUDA driver: '" + library +
                                              "' lacks cuInit, cuDriverGetVersion or "
                                              "cuGetProcAddress (a CUDA driver of 11.3 or newer "
                                              "is needed)");
    }

    if (CUresult const result = api.cuInit(0); result != CUDA_SUCCESS) {
        ErrorCode const code =
            result == CUDA_ERROR_NO_DEVICE ? ErrorCode::NoDevice : ErrorCode::NoDriver;
        std::string const what =
            result == CUDA_ERROR_NO_DEVICE ? "no CUDA device: " : "no usable CUDA driver: ";
        return Error(code, what + "cuInit failed: " + driver->describe(result) + where + ")");
    }
    KILN_RETURN_IF_ERROR(
        driver->check(api.cuDriverGetVersion(&driver->version_), "cuDriverGetVersion"));

    // Everything else through cuGetProcAddress, at the ABI version its pointer type names.
    auto resolve = [&](char const* name, int version, void** out) -> CUresult {
        *out = nullptr;
        if (version > driver->version_)
            return CUDA_ERROR_NOT_FOUND;
        if (getProcAddress2) {
            CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
            CUresult const result =
                getProcAddress2(name, out, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
            if (result == CUDA_SUCCESS && found != CU_GET_PROC_ADDRESS_SUCCESS) {
                *out = nullptr;
                return CUDA_ERROR_NOT_FOUND;
            }
            return result;
        }
        return getProcAddress1(name, out, version, CU_GET_PROC_ADDRESS_DEFAULT);
    };
    Status failure;
    auto require = [&](auto& slot, char const* name, int version) {
        void* address = nullptr;
        CUresult const result = resolve(name, version, &address);
        if (failure.ok() && (result != CUDA_SUCCESS || !address)) {
            failure =
                Error(ErrorCode::NoDriver,
                      "no usable CUDA driver: cuGetProcAddress('" + std::string(name) + "', CUDA " +
                          versionText(version) + ") failed: " + driver->describe(result) + where +
                          ", CUDA " + versionText(driver->version_) + ")");
        }
        assign(slot, address);
    };
    auto optional = [&](auto& slot, char const* name, int version) {
        void* address = nullptr;
        if (resolve(name, version, &address) == CUDA_SUCCESS)
            assign(slot, address);
    };

    require(api.cuGetErrorName, "cuGetErrorName", 6000);
    require(api.cuGetErrorString, "cuGetErrorString", 6000);
    require(api.cuInit, "cuInit", 2000);
    require(api.cuDriverGetVersion, "cuDriverGetVersion", 2020);
    require(api.cuDeviceGet, "cuDeviceGet", 2000);
    require(api.cuDeviceGetCount, "cuDeviceGetCount", 2000);
    require(api.cuDeviceGetName, "cuDeviceGetName", 2000);
    require(api.cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000);
    require(api.cuDeviceTotalMem, "cuDeviceTotalMem", 3020);
    require(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
    require(api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000);
    require(api.cuCtxGetCurrent, "cuCtxGetCurrent", 4000);
    require(api.cuCtxPushCurrent, "cuCtxPushCurrent", 4000);
    require(api.cuCtxPopCurrent, "cuCtxPopCurrent", 4000);
    require(api.cuCtxSynchronize, "cuCtxSynchronize", 2000);
    require(api.cuMemAlloc, "cuMemAlloc", 3020);
    require(api.cuMemFree, "cuMemFree", 3020);
    require(api.cuMemHostAlloc, "cuMemHostAlloc", 2020);
    require(api.cuMemFreeHost, "cuMemFreeHost", 2000);
    require(api.cuMemcpyHtoD, "cuMemcpyHtoD", 3020);
    require(api.cuMemcpyDtoH, "cuMemcpyDtoH", 3020);
    require(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync", 3020);
    require(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync", 3020);
    require(api.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync", 3020);
    require(api.cuMemsetD32Async, "cuMemsetD32Async", 3020);
    require(api.cuModuleLoadDataEx, "cuModuleLoadDataEx", 2010);
    require(api.cuModuleUnload, "cuModuleUnload", 2000);
    require(api.cuModuleGetFunction, "cuModuleGetFunction", 2000);
    require(api.cuFuncGetAttribute, "cuFuncGetAttribute", 2020);
    require(api.cuFuncSetAttribute, "cuFuncSetAttribute", 9000);
    require(api.cuLaunchKernel, "cuLaunchKernel", 4000);
    require(api.cuStreamCreate, "cuStreamCreate", 2000);
    require(api.cuStreamDestroy, "cuStreamDestroy", 4000);
    require(api.cuStreamSynchronize, "cuStreamSynchronize", 2000);
    require(api.cuStreamWaitEvent, "cuStreamWaitEvent", 3020);
    require(api.cuStreamBeginCapture, "cuStreamBeginCapture", 10010);
    require(api.cuStreamEndCapture, "cuStreamEndCapture", 10000);
    require(api.cuGraphLaunch, "cuGraphLaunch", 10000);
    require(api.cuGraphExecDestroy, "cuGraphExecDestroy", 10000);
    require(api.cuGraphDestroy, "cuGraphDestroy", 10000);
    require(api.cuEventCreate, "cuEventCreate", 2000);
    require(api.cuEventDestroy, "cuEventDestroy", 4000);
    require(api.cuEventRecord, "cuEventRecord", 2000);
    require(api.cuEventSynchronize, "cuEventSynchronize", 2000);
    // CUDA 12.8 added cuEventElapsedTime_v2 (same signature); take it where the driver has it.
    optional(api.cuEventElapsedTime, "cuEventElapsedTime", 12080);
    if (!api.cuEventElapsedTime)
        require(api.cuEventElapsedTime, "cuEventElapsedTime", 2000);
    optional(api.cuFuncGetParamInfo, "cuFuncGetParamInfo", 12040);
    optional(api.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040);
    optional(api.cuLaunchKernelEx, "cuLaunchKernelEx", 11060);
    optional(api.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", 12000);
    if (!failure.ok())
        return failure.error();
    return driver;
}

std::string CudaDriver::describe(CUresult result) const {
    char const* name = nullptr;
    char const* text = nullptr;
    if (api_.cuGetErrorName)
        api_.cuGetErrorName(result, &name);
    if (api_.cuGetErrorString)
        api_.cuGetErrorString(result, &text);
    std::string description = name ? name : "CUresult " + std::to_string(result);
    if (text)
        description += std::string(" (") + text + ")";
    return description;
}

Status CudaDriver::check(CUresult result, std::string_view call, std::string_view context) const {
    if (result == CUDA_SUCCESS)
        return {};
    std::string message = std::string(call) + " failed: " + describe(result);
    if (!context.empty())
        message += std::string(": ") + std::string(context);
    ErrorCode const code = result == CUDA_ERROR_NO_DEVICE || result == CUDA_ERROR_INVALID_DEVICE
                               ? ErrorCode::NoDevice
                               : ErrorCode::DriverError;
    return Error(code, std::move(message));
}

ScopedContext::ScopedContext(CudaFunctions const& api, CUcontext context)
    : api_(api) {
    CUcontext current = nullptr;
    if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context) {
        pushed_ = api_.cuCtxPushCurrent(context) == CUDA_SUCCESS;
    }
}

ScopedContext::~ScopedContext() {
    if (pushed_) {
        CUcontext popped = nullptr;
        api_.cuCtxPopCurrent(&popped);
    }
}

} // namespace kiln::runtime::cuda
