// HipRuntime.h: the HIP runtime (libamdhip64), loaded at run time with dlopen and dlsym.
//
// Kiln never links libamdhip64 and needs no HIP header to build: this file declares the small
// part of the HIP ABI the launcher calls, with the values of ROCm's hip/hip_runtime_api.h
// (identical in ROCm 5.x and 6.x for everything below). HipRuntime::load dlopens the library
// (PlatformOptions::driverLibrary, else $KILN_HIP_RUNTIME, else libamdhip64.so and the versioned
// names ROCm installs), resolves every entry point by name and calls hipInit(0) at once, so a
// machine without ROCm or without an AMD GPU gets NoDriver or NoDevice with a message instead
// of a crash. The names are Kiln's own (kHipSuccess, HipStream, ...), so this header can sit
// beside the real HIP headers in one translation unit.
#pragma once

#include "kiln/runtime/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::runtime::hip {

/// hipError_t: a C enum, passed and returned as an int.
using HipError = int;
inline constexpr HipError kHipSuccess = 0;                  // hipSuccess
inline constexpr HipError kHipErrorNoDevice = 100;          // hipErrorNoDevice
inline constexpr HipError kHipErrorInvalidDevice = 101;     // hipErrorInvalidDevice
inline constexpr HipError kHipErrorInvalidImage = 200;      // hipErrorInvalidImage
inline constexpr HipError kHipErrorNoBinaryForGpu = 209;    // hipErrorNoBinaryForGpu
inline constexpr HipError kHipErrorInvalidKernelFile = 218; // hipErrorInvalidKernelFile
// hipErrorSharedObjectSymbolNotFound, hipErrorSharedObjectInitFailed, hipErrorNotFound:
inline constexpr HipError kHipErrorSharedObjectSymbolNotFound = 302;
inline constexpr HipError kHipErrorSharedObjectInitFailed = 303;
inline constexpr HipError kHipErrorNotFound = 500;
// hipErrorStreamCaptureInvalidated:
inline constexpr HipError kHipErrorStreamCaptureInvalidated = 901;

/// Opaque handles: hipStream_t, hipEvent_t, hipModule_t and hipFunction_t are pointers to
/// incomplete structures; hipDevice_t is an int (the ordinal); hipDeviceptr_t is a void*.
using StreamHandle = struct HipStreamObject*;
using EventHandle = struct HipEventObject*;
using ModuleHandle = struct HipModuleObject*;
using FunctionHandle = struct HipFunctionObject*;
using DeviceHandle = int;
using DeviceAddress = void*;
/// hipGraph_t, hipGraphExec_t and hipGraphNode_t: pointers to incomplete structures as well.
using GraphHandle = struct HipGraphObject*;
using GraphExecHandle = struct HipGraphExecObject*;
using GraphNodeHandle = struct HipGraphNodeObject*;

/// hipDeviceAttribute_t as renumbered in ROCm 5.0 (CUDA-compatible attributes from 0, AMD
/// ones from 10000); the values are the enumerators' positions in hip_runtime_api.h.
enum class HipDeviceAttribute : int {
    ClockRate = 5,                            // hipDeviceAttributeClockRate (kHz)
    L2CacheSize = 19,                         // hipDeviceAttributeL2CacheSize
    ComputeCapabilityMajor = 23,              // hipDeviceAttributeComputeCapabilityMajor
    MaxBlockDimX = 26,                        // hipDeviceAttributeMaxBlockDimX
    MaxBlockDimY = 27,                        // hipDeviceAttributeMaxBlockDimY
    MaxBlockDimZ = 28,                        // hipDeviceAttributeMaxBlockDimZ
    MaxGridDimX = 29,                         // hipDeviceAttributeMaxGridDimX
    MaxGridDimY = 30,                         // hipDeviceAttributeMaxGridDimY
    MaxGridDimZ = 31,                         // hipDeviceAttributeMaxGridDimZ
    MaxThreadsPerBlock = 56,                  // hipDeviceAttributeMaxThreadsPerBlock
    MaxThreadsPerMultiProcessor = 57,         // hipDeviceAttributeMaxThreadsPerMultiProcessor
    MemoryBusWidth = 59,                      // hipDeviceAttributeMemoryBusWidth (bits)
    MemoryClockRate = 60,                     // hipDeviceAttributeMemoryClockRate (kHz)
    ComputeCapabilityMinor = 61,              // hipDeviceAttributeComputeCapabilityMinor
    MultiprocessorCount = 63,                 // hipDeviceAttributeMultiprocessorCount
    MaxRegistersPerBlock = 71,                // hipDeviceAttributeMaxRegistersPerBlock
    MaxRegistersPerMultiprocessor = 72,       // hipDeviceAttributeMaxRegistersPerMultiprocessor
    MaxSharedMemoryPerBlock = 74,             // hipDeviceAttributeMaxSharedMemoryPerBlock
    SharedMemPerBlockOptin = 75,              // hipDeviceAttributeSharedMemPerBlockOptin
    SharedMemPerMultiprocessor = 76,          // hipDeviceAttributeSharedMemPerMultiprocessor
    WarpSize = 87,                            // hipDeviceAttributeWarpSize
    MaxSharedMemoryPerMultiprocessor = 10002, // hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
};

/// hipFunction_attribute (HIP_FUNC_ATTRIBUTE_*), the same numbers as CUfunction_attribute.
enum class HipFunctionAttribute : int {
    MaxThreadsPerBlock = 0,        // HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    SharedSizeBytes = 1,           // HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    LocalSizeBytes = 3,            // HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
    NumRegs = 4,                   // HIP_FUNC_ATTRIBUTE_NUM_REGS (VGPRs on AMD)
    MaxDynamicSharedSizeBytes = 8, // HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};

/// hipStreamNonBlocking: the stream does not synchronize with the null stream.
inline constexpr unsigned kHipStreamNonBlocking = 0x01;
/// hipStreamCaptureModeThreadLocal (hipStreamCaptureMode, a C enum passed as an int): while a
/// stream records, calls of this thread that cannot be recorded fail instead of running.
inline constexpr int kHipStreamCaptureModeThreadLocal = 1;
/// hipHostMallocPortable: the page-locked memory is so for every device, not only the current.
inline constexpr unsigned kHipHostMallocPortable = 0x01;

/// The keys of hipModuleLaunchKernel's `extra` array (HIP_LAUNCH_PARAM_BUFFER_POINTER,
/// HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END): the packed kernel arguments, their size.
inline void* const kHipLaunchParamBufferPointer = reinterpret_cast<void*>(0x01);
inline void* const kHipLaunchParamBufferSize = reinterpret_cast<void*>(0x02);
inline void* const kHipLaunchParamEnd = reinterpret_cast<void*>(0x03);

/// The resolved entry points, each named for the HIP function, with its C signature.
struct HipFunctions {
    char const* (*hipGetErrorName)(HipError) = nullptr;
    char const* (*hipGetErrorString)(HipError) = nullptr;
    HipError (*hipInit)(unsigned flags) = nullptr;
    HipError (*hipRuntimeGetVersion)(int* version) = nullptr;
    HipError (*hipGetDeviceCount)(int* count) = nullptr;
    HipError (*hipDeviceGet)(DeviceHandle* device, int ordinal) = nullptr;
    HipError (*hipDeviceGetName)(char* name, int length, DeviceHandle device) = nullptr;
    HipError (*hipDeviceGetAttribute)(int* value, HipDeviceAttribute attribute,
                                      int ordinal) = nullptr;
    HipError (*hipDeviceTotalMem)(std::size_t* bytes, DeviceHandle device) = nullptr;
    HipError (*hipGetDevice)(int* ordinal) = nullptr;
    HipError (*hipSetDevice)(int ordinal) = nullptr;
    HipError (*hipDeviceSynchronize)() = nullptr;
    HipError (*hipMalloc)(void** address, std::size_t bytes) = nullptr;
    HipError (*hipFree)(void* address) = nullptr;
    HipError (*hipHostMalloc)(void** host, std::size_t bytes, unsigned flags) = nullptr;
    HipError (*hipHostFree)(void* host) = nullptr;
    HipError (*hipMemcpyHtoD)(DeviceAddress dst, void const* src, std::size_t bytes) = nullptr;
    HipError (*hipMemcpyDtoH)(void* dst, DeviceAddress src, std::size_t bytes) = nullptr;
    HipError (*hipMemcpyHtoDAsync)(DeviceAddress dst, void const* src, std::size_t bytes,
                                   StreamHandle stream) = nullptr;
    HipError (*hipMemcpyDtoHAsync)(void* dst, DeviceAddress src, std::size_t bytes,
                                   StreamHandle stream) = nullptr;
    HipError (*hipMemcpyDtoDAsync)(DeviceAddress dst, DeviceAddress src, std::size_t bytes,
                                   StreamHandle stream) = nullptr;
    HipError (*hipMemsetD32Async)(DeviceAddress dst, int value, std::size_t count,
                                  StreamHandle stream) = nullptr;
    HipError (*hipStreamCreateWithFlags)(StreamHandle* stream, unsigned flags) = nullptr;
    HipError (*hipStreamDestroy)(StreamHandle stream) = nullptr;
    HipError (*hipStreamSynchronize)(StreamHandle stream) = nullptr;
    HipError (*hipStreamWaitEvent)(StreamHandle stream, EventHandle event,
                                   unsigned flags) = nullptr;
    HipError (*hipStreamBeginCapture)(StreamHandle stream, int mode) = nullptr;
    HipError (*hipStreamEndCapture)(StreamHandle stream, GraphHandle* graph) = nullptr;
    HipError (*hipGraphInstantiate)(GraphExecHandle* exec, GraphHandle graph,
                                    GraphNodeHandle* errorNode, char* log,
                                    std::size_t logBytes) = nullptr;
    HipError (*hipGraphLaunch)(GraphExecHandle exec, StreamHandle stream) = nullptr;
    HipError (*hipGraphExecDestroy)(GraphExecHandle exec) = nullptr;
    HipError (*hipGraphDestroy)(GraphHandle graph) = nullptr;
    HipError (*hipEventCreate)(EventHandle* event) = nullptr;
    HipError (*hipEventDestroy)(EventHandle event) = nullptr;
    HipError (*hipEventRecord)(EventHandle event, StreamHandle stream) = nullptr;
    HipError (*hipEventSynchronize)(EventHandle event) = nullptr;
    HipError (*hipEventElapsedTime)(float* milliseconds, EventHandle start,
                                    EventHandle stop) = nullptr;
    HipError (*hipModuleLoadData)(ModuleHandle* module, void const* image) = nullptr;
    HipError (*hipModuleUnload)(ModuleHandle module) = nullptr;
    HipError (*hipModuleGetFunction)(FunctionHandle* function, ModuleHandle module,
                                     char const* name) = nullptr;
    HipError (*hipFuncGetAttribute)(int* value, HipFunctionAttribute attribute,
                                    FunctionHandle function) = nullptr;
    HipError (*hipModuleLaunchKernel)(FunctionHandle function, unsigned gridX, unsigned gridY,
                                      unsigned gridZ, unsigned blockX, unsigned blockY,
                                      unsigned blockZ, unsigned sharedBytes, StreamHandle stream,
                                      void** kernelParams, void** extra) = nullptr;
    /// hipGetDeviceProperties of ROCm 6.0+ (hipDeviceProp_tR0600), null in ROCm 5.
    HipError (*hipGetDevicePropertiesR0600)(void* properties, int ordinal) = nullptr;
    /// hipGetDeviceProperties of ROCm 5 (hipDeviceProp_t, the layout ROCm 6 calls R0000); only
    /// taken where hipGetDevicePropertiesR0600 is missing.
    HipError (*hipGetDevicePropertiesR0000)(void* properties, int ordinal) = nullptr;
};

/// The names HipRuntime::load tries first, in order, where it is given no library and
/// $KILN_HIP_RUNTIME names none: the development link, then the sonames of ROCm 7, 6 and 5 (a
/// runtime-only install has no unversioned link); after them $ROCM_PATH/lib/libamdhip64.so and
/// kHipRuntimeInRocmTree, which are not always on the loader's path. The C ABI `kiln export`
/// writes for AMD targets tries the same.
inline constexpr std::array<char const*, 4> kHipRuntimeNames = {
    "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
/// The runtime in ROCm's default tree, tried last.
inline constexpr char const* kHipRuntimeInRocmTree = "/opt/rocm/lib/libamdhip64.so";

/// A loaded HIP runtime: its library, its entry points and its version.
class HipRuntime {
public:
    /// Loads `library` (empty: $KILN_HIP_RUNTIME, else the first of libamdhip64.so,
    /// libamdhip64.so.7, .so.6, .so.5 and $ROCM_PATH/lib or /opt/rocm/lib/libamdhip64.so that
    /// loads), resolves the entry points and calls hipInit(0). NoDriver when no library loads,
    /// one lacks an entry point, or hipInit fails for want of a usable driver; NoDevice when
    /// hipInit finds no AMD device.
    static Expected<std::shared_ptr<HipRuntime>> load(std::string const& library = {});

    /// The entry points.
    HipFunctions const& api() const { return api_; }
    /// HIP_VERSION of the runtime: major * 10000000 + minor * 100000 + patch.
    int version() const { return version_; }
    /// "6.3.42134".
    std::string versionText() const;
    /// The library that was opened.
    std::string const& library() const { return library_; }

    /// Success for hipSuccess; otherwise a DriverError "<call> failed: <name> (<string>)", with
    /// ": <context>" appended when given (NoDevice for hipErrorNoDevice / InvalidDevice).
    Status check(HipError result, std::string_view call, std::string_view context = {}) const;
    /// "hipErrorInvalidValue (invalid argument)".
    std::string describe(HipError result) const;

private:
    HipRuntime() = default;

    HipFunctions api_;
    int version_ = 0;
    std::string library_;
};

/// Makes a device the calling thread's current HIP device for a scope and restores the
/// caller's (only when they differ): HIP allocates, loads and synchronizes on the current one.
class ScopedDevice {
public:
    ScopedDevice(HipFunctions const& api, int ordinal);
    ~ScopedDevice();
    ScopedDevice(ScopedDevice const&) = delete;
    ScopedDevice& operator=(ScopedDevice const&) = delete;

private:
    HipFunctions const& api_;
    int previous_ = -1; ///< the caller's device, restored when >= 0
};

} // namespace kiln::runtime::hip
