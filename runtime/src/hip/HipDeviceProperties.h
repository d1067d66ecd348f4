// HipDeviceProperties.h: the leading fields of HIP's hipDeviceProp_t, up to gcnArchName
// (internal).
//
// The processor name ("gfx942:sramecc+:xnack-") is in no device attribute: HIP gives it only in
// hipDeviceProp_t::gcnArchName. Its layout changed in ROCm 6.0 (hipDeviceProp_tR0600, from
// hipGetDevicePropertiesR0600) from that of ROCm 5 (hipDeviceProp_t, the layout ROCm 6 calls
// R0000). Both are mirrored here up to gcnArchName, field for field from hip_runtime_api.h
// (runs of 4-byte fields kept as arrays, their members named in the comments); the offsets
// asserted below were counted by hand from the header on an LP64 host. HIP writes the whole
// structure, which is longer, so the call gets a larger buffer and these prefixes are copied
// out of it. HipDevice checks the name, major and minor read this way against hipDeviceGetName
// and the compute capability attributes before trusting gcnArchName.
#pragma once

#include <cstddef>

namespace kiln::runtime::hip {

/// hipDeviceProp_tR0600 (ROCm 6.0 and later) up to gcnArchName.
struct DevicePropertiesR0600 {
    char name[256];
    char uuid[16]; // hipUUID
    char luid[8];
    unsigned luidDeviceNodeMask;
    std::size_t totalGlobalMem;
    std::size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    std::size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    std::size_t totalConstMem;
    int major;
    int minor;
    std::size_t textureAlignment;
    std::size_t texturePitchAlignment;
    // deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory,
    // computeMode, maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2],
    // maxTexture2DMipmap[2], maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3],
    // maxTexture3DAlt[3], maxTextureCubemap, maxTexture1DLayered[2], maxTexture2DLayered[3],
    // maxTextureCubemapLayered[2], maxSurface1D, maxSurface2D[2], maxSurface3D[3],
    // maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap,
    // maxSurfaceCubemapLayered[2]: 46 ints.
    int deviceOverlapToMaxSurfaceCubemapLayered[46];
    std::size_t surfaceAlignment;
    // concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver,
    // asyncEngineCount, unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize,
    // persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported,
    // globalL1CacheSupported, localL1CacheSupported: 16 ints.
    int concurrentKernelsToLocalL1CacheSupported[16];
    std::size_t sharedMemPerMultiprocessor;
    // regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID,
    // hostNativeAtomicSupported, singleToDoublePrecisionPerfRatio, pageableMemoryAccess,
    // concurrentManagedAccess, computePreemptionSupported, canUseHostPointerForRegisteredMem,
    // cooperativeLaunch, cooperativeMultiDeviceLaunch: 12 ints.
    int regsPerMultiprocessorToCooperativeMultiDeviceLaunch[12];
    std::size_t sharedMemPerBlockOptin;
    // pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost,
    // maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize: 4 ints.
    int pageableMemoryAccessUsesHostPageTablesToAccessPolicyMaxWindowSize[4];
    std::size_t reservedSharedMemPerBlock;
    // hostRegisterSupported, sparseHipArraySupported, hostRegisterReadOnlySupported,
    // timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported,
    // gpuDirectRDMAFlushWritesOptions (unsigned), gpuDirectRDMAWritesOrdering,
    // memoryPoolSupportedHandleTypes (unsigned), deferredMappingHipArraySupported,
    // ipcEventSupported, clusterLaunch, unifiedFunctionPointers: 13 4-byte fields; then
    // reserved[63] and hipReserved[32].
    int hostRegisterSupportedToHipReserved[13 + 63 + 32];
    char gcnArchName[256];
};
static_assert(offsetof(DevicePropertiesR0600, totalGlobalMem) == 288);
static_assert(offsetof(DevicePropertiesR0600, major) == 360);
static_assert(offsetof(DevicePropertiesR0600, minor) == 364);
static_assert(offsetof(DevicePropertiesR0600, surfaceAlignment) == 568);
static_assert(offsetof(DevicePropertiesR0600, sharedMemPerMultiprocessor) == 640);
static_assert(offsetof(DevicePropertiesR0600, sharedMemPerBlockOptin) == 696);
static_assert(offsetof(DevicePropertiesR0600, reservedSharedMemPerBlock) == 720);
static_assert(offsetof(DevicePropertiesR0600, gcnArchName) == 1160);

/// hipDeviceProp_t of ROCm 5 (R0000) up to gcnArchName.
struct DevicePropertiesR0000 {
    char name[256];
    std::size_t totalGlobalMem;
    std::size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    int memoryClockRate;
    int memoryBusWidth;
    std::size_t totalConstMem;
    int major;
    int minor;
    // multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor, computeMode,
    // clockInstructionRate, arch (hipDeviceArch_t: 17 one-bit fields of an unsigned),
    // concurrentKernels, pciDomainID, pciBusID, pciDeviceID: 10 4-byte fields.
    int multiProcessorCountToPciDeviceID[10];
    std::size_t maxSharedMemoryPerMultiProcessor;
    int isMultiGpuBoard;
    int canMapHostMemory;
    int gcnArch;
    char gcnArchName[256];
};
static_assert(offsetof(DevicePropertiesR0000, major) == 328);
static_assert(offsetof(DevicePropertiesR0000, minor) == 332);
static_assert(offsetof(DevicePropertiesR0000, maxSharedMemoryPerMultiProcessor) == 376);
static_assert(offsetof(DevicePropertiesR0000, gcnArchName) == 396);

/// Bytes given to hipGetDeviceProperties: more than either whole structure (R0600 is 1.5 KB).
inline constexpr std::size_t kDevicePropertiesBufferBytes = 8192;

} // namespace kiln::runtime::hip
