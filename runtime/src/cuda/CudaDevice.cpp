// CudaDevice.cpp: a CUDA device: its description, memory, and the objects made on it.
#include "CudaDevice.h"

#include "CudaObjects.h"

#include <array>
#include <optional>

namespace kiln::runtime::cuda {

Expected<std::shared_ptr<CudaDevice>> CudaDevice::open(std::shared_ptr<CudaDriver> driver,
                                                       int ordinal) {
    CudaFunctions const& api = driver->api();
    CUdevice device = 0;
    std::string const which = "CUDA device " + std::to_string(ordinal);
    KILN_RETURN_IF_ERROR(driver->check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet", which));
    CUcontext context = nullptr;
    KILN_RETURN_IF_ERROR(driver->check(api.cuDevicePrimaryCtxRetain(&context, device),
                                       "cuDevicePrimaryCtxRetain", which));
    std::shared_ptr<CudaDevice> opened(new CudaDevice(std::move(driver), device, context));
    KILN_RETURN_IF_ERROR(opened->describe(ordinal));
    return opened;
}

CudaDevice::~CudaDevice() {
    driver_->api().cuDevicePrimaryCtxRelease(device_);
}

Status CudaDevice::describe(int ordinal) {
    CudaFunctions const& api = driver_->api();
    DeviceDescription& d = description_;
    d.platform = "cuda";
    d.ordinal = ordinal;
    d.driverVersion = driver_->version();
    char name[256] = {};
    KILN_RETURN_IF_ERROR(
        driver_->check(api.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName"));
    d.name = name;
    std::size_t total = 0;
    KILN_RETURN_IF_ERROR(driver_->check(api.cuDeviceTotalMem(&total, device_), "cuDeviceTotalMem"));
    d.totalMemoryBytes = static_cast<std::int64_t>(total);

    Status failure;
    auto get = [&](CUdevice_attribute attribute, char const* what) {
        int value = 0;
        if (failure.ok()) {
            failure = driver_->check(api.cuDeviceGetAttribute(&value, attribute, device_),
                                     "cuDeviceGetAttribute", what);
        }
        return value;
    };
    auto optional = [&](CUdevice_attribute attribute) { // 0 where the driver has no answer
        int value = 0;
        return api.cuDeviceGetAttribute(&value, attribute, device_) == CUDA_SUCCESS ? value : 0;
    };
    auto extent = [](int value) { return static_cast<std::uint32_t>(value); };
    d.computeMajor = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
    d.computeMinor = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
    // The most specific target code generation has for the device: on compute capability 9.0,
    // sm_90a, whose architecture-specific instructions (wgmma) run on exactly that.
    d.target = "sm_" + std::to_string(d.computeMajor) + std::to_string(d.computeMinor);
    if (d.computeMajor == 9 && d.computeMinor == 0)
        d.target += "a";
    d.multiprocessorCount = get(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessors");
    d.warpSize = get(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size");
    d.l2Bytes = get(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
    d.clockKHz = optional(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d.memoryClockKHz = optional(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d.memoryBusWidthBits = optional(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.maxThreadsPerBlock = get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
    d.maxBlock = {extent(get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "block x")),
                  extent(get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "block y")),
                  extent(get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "block z"))};
    d.maxGrid = {extent(get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "grid x")),
                 extent(get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "grid y")),
                 extent(get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "grid z"))};
    d.maxThreadsPerMultiprocessor =
        get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "threads per multiprocessor");
    d.registersPerBlock = get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "registers per block");
    d.registersPerMultiprocessor =
        get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, "registers per multiprocessor");
    d.sharedBytesPerBlock =
        get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory per block");
    d.sharedBytesPerBlockOptin =
        get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory");
    d.sharedBytesPerMultiprocessor = get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                         "shared memory per multiprocessor");
    return failure;
}

Expected<std::uint64_t> CudaDevice::allocate(std::size_t bytes) {
    ScopedContext scope(driver_->api(), context_);
    CUdeviceptr address = 0;
    KILN_RETURN_IF_ERROR(
        driver_->check(driver_->api().cuMemAlloc(&address, bytes), "cuMemAlloc",
                       std::to_string(bytes) + " bytes on " + description_.summary()));
    return static_cast<std::uint64_t>(address);
}

Status CudaDevice::deallocate(std::uint64_t address) {
    ScopedContext scope(driver_->api(), context_);
    return driver_->check(driver_->api().cuMemFree(address), "cuMemFree", description_.summary());
}

Status CudaDevice::copyToDevice(std::uint64_t dst, void const* src, std::size_t bytes) {
    ScopedContext scope(driver_->api(), context_);
    return driver_->check(driver_->api().cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD",
                          std::to_string(bytes) + " bytes to " + description_.summary());
}

Status CudaDevice::copyToHost(void* dst, std::uint64_t src, std::size_t bytes) {
    ScopedContext scope(driver_->api(), context_);
    return driver_->check(driver_->api().cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH",
                          std::to_string(bytes) + " bytes from " + description_.summary());
}

Expected<void*> CudaDevice::allocatePinnedHost(std::size_t bytes) {
    ScopedContext scope(driver_->api(), context_);
    void* host = nullptr;
    // Portable: page-locked for every context, not only this device's.
    KILN_RETURN_IF_ERROR(driver_->check(
        driver_->api().cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
        std::to_string(bytes) + " bytes of page-locked host memory for " + description_.summary()));
    return host;
}

Status CudaDevice::deallocatePinnedHost(void* host) {
    ScopedContext scope(driver_->api(), context_);
    return driver_->check(driver_->api().cuMemFreeHost(host), "cuMemFreeHost",
                          description_.summary());
}

Expected<std::unique_ptr<StreamBackend>> CudaDevice::newStream() {
    return createCudaStream({driver_, context_, description_.summary(), description_.target});
}

Expected<std::unique_ptr<EventBackend>> CudaDevice::newEvent() {
    return createCudaEvent({driver_, context_, description_.summary(), description_.target});
}

Expected<std::unique_ptr<ModuleBackend>> CudaDevice::loadCode(KernelLoaderSpec const& spec) {
    return loadCudaModule({driver_, context_, description_.summary(), description_.target}, spec);
}

Status CudaDevice::synchronize() {
    ScopedContext scope(driver_->api(), context_);
    return driver_->check(driver_->api().cuCtxSynchronize(), "cuCtxSynchronize",
                          description_.summary());
}

namespace {

/// The driver's element type for a tensor map of `type`.
std::optional<CUtensorMapDataType> tensorMapDataType(ScalarType type) {
    switch (type) {
    case ScalarType::U8:
    case ScalarType::I8:
        return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case ScalarType::U16:
    case ScalarType::I16:
        return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case ScalarType::U32:
        return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case ScalarType::I32:
        return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case ScalarType::U64:
        return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case ScalarType::I64:
        return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case ScalarType::F16:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ScalarType::BF16:
        return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ScalarType::F32:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ScalarType::F64:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    }
    return std::nullopt;
}

CUtensorMapSwizzle driverSwizzle(TensorMapSwizzle swizzle) {
    switch (swizzle) {
    case TensorMapSwizzle::None:
        return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TensorMapSwizzle::Bytes32:
        return CU_TENSOR_MAP_SWIZZLE_32B;
    case TensorMapSwizzle::Bytes64:
        return CU_TENSOR_MAP_SWIZZLE_64B;
    case TensorMapSwizzle::Bytes128:
        return CU_TENSOR_MAP_SWIZZLE_128B;
    }
    return CU_TENSOR_MAP_SWIZZLE_NONE;
}

} // namespace

Expected<TensorMap> CudaDevice::encodeTensorMap(std::uint64_t address,
                                                TensorMapLayout const& layout) {
    CudaFunctions const& api = driver_->api();
    if (!api.cuTensorMapEncodeTiled)
        return Error(ErrorCode::Unsupported, "tensor maps need a CUDA 12.0 driver or newer; " +
                                                 driver_->library() + " lacks " +
                                                 "cuTensorMapEncodeTiled");
    if (description_.computeMajor < 9)
        return Error(ErrorCode::Unsupported, "tensor maps need compute capability 9.0 or newer; " +
                                                 description_.summary() + " has none");
    KILN_RETURN_IF_ERROR(layout.check(address));
    TensorMapShape const& shape = layout.shape;
    std::optional<CUtensorMapDataType> const type = tensorMapDataType(shape.element);
    if (!type)
        return Error(ErrorCode::InvalidArgument,
                     "tensor map: no element type for " + std::string(name(shape.element)));
    std::array<cuuint64_t, kTensorMapMaxRank> sizes{}, strides{};
    std::array<cuuint32_t, kTensorMapMaxRank> box{}, elementStrides{};
    for (std::size_t i = 0; i < shape.rank; ++i) {
        sizes[i] = layout.sizes[i];
        box[i] = shape.box[i];
        elementStrides[i] = 1;
        if (i > 0)
            strides[i - 1] = layout.strides[i];
    }
    TensorMap map;
    map.shape = shape;
    ScopedContext scope(api, context_);
    // CUtensorMap is the 128 opaque bytes TensorMap holds (both 64-byte aligned).
    static_assert(sizeof(CUtensorMap) == kTensorMapBytes);
    auto* encoded = reinterpret_cast<CUtensorMap*>(map.bytes.data());
    KILN_RETURN_IF_ERROR(driver_->check(
        api.cuTensorMapEncodeTiled(encoded, *type, shape.rank,
                                   reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)),
                                   sizes.data(), strides.data(), box.data(), elementStrides.data(),
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, driverSwizzle(shape.swizzle),
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled", shape.toString() + " on " + description_.summary()));
    return map;
}

} // namespace kiln::runtime::cuda
