// CudaDriver.h: the CUDA driver API, loaded at run time (dlopen + cuGetProcAddress).
//
// Kiln never links libcuda: it dlopens libcuda.so.1 (or KILN_CUDA_DRIVER), takes
// cuGetProcAddress_v2 (or the CUDA 11.3 cuGetProcAddress) with dlsym, and resolves every other
// entry point through it at the ABI version its pointer type names (PFN_cuMemAlloc_v3020 at
// 3020, ...). That is what picks cuMemAlloc_v2 rather than the 32-bit cuMemAlloc: dlsym by the
// plain name would return the old ABI. Entry points newer than some drivers Kiln runs on
// (cuFuncGetParamInfo, CUDA 12.4; cuGraphInstantiateWithFlags, CUDA 11.4; cuLaunchKernelEx,
// 11.8; cuTensorMapEncodeTiled, 12.0) are optional and null when missing. Only this header and the
// CUDA platform's sources include <cuda.h>; it is available when KILN_HAVE_CUDA is 1.
#pragma once

#include "kiln/runtime/Status.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::runtime::cuda {

/// The resolved driver entry points. Each member is named for the API function.
struct CudaFunctions {
    PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
    PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
    PFN_cuInit_v2000 cuInit = nullptr;
    PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
    PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
    PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
    PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
    PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
    PFN_cuDeviceTotalMem_v3020 cuDeviceTotalMem = nullptr;
    PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
    PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
    PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
    PFN_cuCtxPushCurrent_v4000 cuCtxPushCurrent = nullptr;
    PFN_cuCtxPopCurrent_v4000 cuCtxPopCurrent = nullptr;
    PFN_cuCtxSynchronize_v2000 cuCtxSynchronize = nullptr;
    PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
    PFN_cuMemFree_v3020 cuMemFree = nullptr;
    PFN_cuMemHostAlloc_v2020 cuMemHostAlloc = nullptr;
    PFN_cuMemFreeHost_v2000 cuMemFreeHost = nullptr;
    PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD = nullptr;
    PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH = nullptr;
    PFN_cuMemcpyHtoDAsync_v3020 cuMemcpyHtoDAsync = nullptr;
    PFN_cuMemcpyDtoHAsync_v3020 cuMemcpyDtoHAsync = nullptr;
    PFN_cuMemcpyDtoDAsync_v3020 cuMemcpyDtoDAsync = nullptr;
    PFN_cuMemsetD32Async_v3020 cuMemsetD32Async = nullptr;
    PFN_cuModuleLoadDataEx_v2010 cuModuleLoadDataEx = nullptr;
    PFN_cuModuleUnload_v2000 cuModuleUnload = nullptr;
    PFN_cuModuleGetFunction_v2000 cuModuleGetFunction = nullptr;
    PFN_cuFuncGetAttribute_v2020 cuFuncGetAttribute = nullptr;
    PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute = nullptr;
    PFN_cuLaunchKernel_v4000 cuLaunchKernel = nullptr;
    PFN_cuStreamCreate_v2000 cuStreamCreate = nullptr;
    PFN_cuStreamDestroy_v4000 cuStreamDestroy = nullptr;
    PFN_cuStreamSynchronize_v2000 cuStreamSynchronize = nullptr;
    PFN_cuStreamWaitEvent_v3020 cuStreamWaitEvent = nullptr;
    PFN_cuStreamBeginCapture_v10010 cuStreamBeginCapture = nullptr;
    PFN_cuStreamEndCapture_v10000 cuStreamEndCapture = nullptr;
    PFN_cuGraphLaunch_v10000 cuGraphLaunch = nullptr;
    PFN_cuGraphExecDestroy_v10000 cuGraphExecDestroy = nullptr;
    PFN_cuGraphDestroy_v10000 cuGraphDestroy = nullptr;
    PFN_cuEventCreate_v2000 cuEventCreate = nullptr;
    PFN_cuEventDestroy_v4000 cuEventDestroy = nullptr;
    PFN_cuEventRecord_v2000 cuEventRecord = nullptr;
    PFN_cuEventSynchronize_v2000 cuEventSynchronize = nullptr;
    PFN_cuEventElapsedTime_v2000 cuEventElapsedTime = nullptr;
    /// Optional (CUDA 12.4+): null when the driver is older.
    PFN_cuFuncGetParamInfo_v12040 cuFuncGetParamInfo = nullptr;
    /// Optional (CUDA 11.4+): null when the driver is older, which then has no command buffers.
    PFN_cuGraphInstantiateWithFlags_v11040 cuGraphInstantiateWithFlags = nullptr;
    /// Optional (CUDA 11.8+): null when the driver is older, which then has no cluster launches.
    PFN_cuLaunchKernelEx_v11060 cuLaunchKernelEx = nullptr;
    /// Optional (CUDA 12.0+): null when the driver is older, which then has no tensor maps.
    PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled = nullptr;
};

/// A loaded CUDA driver: its library handle, its entry points and its version.
class CudaDriver {
public:
    /// Loads `library` (empty: $KILN_CUDA_DRIVER, else libcuda.so.1), resolves the entry points
    /// and calls cuInit. NoDriver when the library cannot be opened, lacks cuGetProcAddress, a
    /// required entry point or cuInit fails for want of a usable driver; NoDevice when cuInit
    /// finds no device.
    static Expected<std::shared_ptr<CudaDriver>> load(std::string const& library = {});

    /// The entry points.
    CudaFunctions const& api() const { return api_; }
    /// The driver's CUDA version (e.g. 13000).
    int version() const { return version_; }
    /// The library that was opened.
    std::string const& library() const { return library_; }

    /// Success for CUDA_SUCCESS; otherwise a DriverError "<call> failed: <NAME> (<string>)",
    /// with ": <context>" appended when given.
    Status check(CUresult result, std::string_view call, std::string_view context = {}) const;
    /// "CUDA_ERROR_INVALID_VALUE (invalid argument)".
    std::string describe(CUresult result) const;

private:
    CudaDriver() = default;

    CudaFunctions api_;
    int version_ = 0;
    std::string library_;
};

/// Makes a context current for a scope, restoring the caller's (only when they differ).
class ScopedContext {
public:
    ScopedContext(CudaFunctions const& api, CUcontext context);
    ~ScopedContext();
    ScopedContext(ScopedContext const&) = delete;
    ScopedContext& operator=(ScopedContext const&) = delete;

private:
    CudaFunctions const& api_;
    bool pushed_ = false;
};

} // namespace kiln::runtime::cuda
