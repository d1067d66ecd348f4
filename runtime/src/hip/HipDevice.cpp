// HipDevice.cpp: a HIP device: its description, memory, and the objects made on it.
#include "HipDevice.h"

#include "HipDeviceProperties.h"
#include "HipObjects.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln::runtime::hip {
namespace {

void* pointer(std::uint64_t address) {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
}

/// The text of a fixed-size char array, up to its first NUL.
template <std::size_t N>
std::string textOf(char const (&field)[N]) {
    return std::string(field, strnlen(field, N));
}

} // namespace

Expected<std::shared_ptr<HipDevice>> HipDevice::open(std::shared_ptr<HipRuntime> runtime,
                                                     int ordinal) {
    DeviceHandle device = 0;
    KILN_RETURN_IF_ERROR(runtime->check(runtime->api().hipDeviceGet(&device, ordinal),
                                        "hipDeviceGet", "HIP device " + std::to_string(ordinal)));
    std::shared_ptr<HipDevice> opened(new HipDevice(std::move(runtime), device, ordinal));
    KILN_RETURN_IF_ERROR(opened->describe());
    return opened;
}

Status HipDevice::describe() {
    HipFunctions const& api = runtime_->api();
    DeviceDescription& d = description_;
    std::string const which = "HIP device " + std::to_string(ordinal_);
    d.platform = "hip";
    d.ordinal = ordinal_;
    d.driverVersion = runtime_->version();
    char name[256] = {};
    KILN_RETURN_IF_ERROR(runtime_->check(api.hipDeviceGetName(name, sizeof name - 1, device_),
                                         "hipDeviceGetName", which));
    d.name = name;
    std::size_t total = 0;
    KILN_RETURN_IF_ERROR(
        runtime_->check(api.hipDeviceTotalMem(&total, device_), "hipDeviceTotalMem", which));
    d.totalMemoryBytes = static_cast<std::int64_t>(total);

    Status failure;
    auto get = [&](HipDeviceAttribute attribute, char const* what) {
        int value = 0;
        if (failure.ok()) {
            failure = runtime_->check(api.hipDeviceGetAttribute(&value, attribute, ordinal_),
                                      "hipDeviceGetAttribute", which + " " + what);
        }
        return value;
    };
    auto optional = [&](HipDeviceAttribute attribute) { // 0 where HIP has no answer
        int value = 0;
        return api.hipDeviceGetAttribute(&value, attribute, ordinal_) == kHipSuccess ? value : 0;
    };
    auto extent = [](int value) { return static_cast<std::uint32_t>(value); };
    using A = HipDeviceAttribute;
    d.computeMajor = get(A::ComputeCapabilityMajor, "compute capability");
    d.computeMinor = get(A::ComputeCapabilityMinor, "compute capability");
    d.multiprocessorCount = get(A::MultiprocessorCount, "compute units");
    d.warpSize = get(A::WarpSize, "wavefront size");
    d.l2Bytes = get(A::L2CacheSize, "L2 size");
    d.clockKHz = optional(A::ClockRate);
    d.memoryClockKHz = optional(A::MemoryClockRate);
    d.memoryBusWidthBits = optional(A::MemoryBusWidth);
    d.maxThreadsPerBlock = get(A::MaxThreadsPerBlock, "threads per block");
    d.maxBlock = {extent(get(A::MaxBlockDimX, "block x")), extent(get(A::MaxBlockDimY, "block y")),
                  extent(get(A::MaxBlockDimZ, "block z"))};
    d.maxGrid = {extent(get(A::MaxGridDimX, "grid x")), extent(get(A::MaxGridDimY, "grid y")),
                 extent(get(A::MaxGridDimZ, "grid z"))};
    d.maxThreadsPerMultiprocessor = get(A::MaxThreadsPerMultiProcessor, "threads per compute unit");
    d.registersPerBlock = get(A::MaxRegistersPerBlock, "registers per block");
    d.registersPerMultiprocessor = optional(A::MaxRegistersPerMultiprocessor);
    d.sharedBytesPerBlock = get(A::MaxSharedMemoryPerBlock, "LDS per block");
    // AMD has no opt-in beyond the per-block LDS: a kernel may use all of it. Older HIP answers 0.
    d.sharedBytesPerBlockOptin =
        std::max<std::int64_t>(optional(A::SharedMemPerBlockOptin), d.sharedBytesPerBlock);
    d.sharedBytesPerMultiprocessor = optional(A::SharedMemPerMultiprocessor);
    if (d.sharedBytesPerMultiprocessor == 0)
        d.sharedBytesPerMultiprocessor = optional(A::MaxSharedMemoryPerMultiprocessor);
    KILN_RETURN_IF_ERROR(failure);

    KILN_ASSIGN_OR_RETURN(gcnArchName_, readGcnArchName(d.name, d.computeMajor, d.computeMinor));
    d.target = gcnArchName_.substr(0, gcnArchName_.find(':'));
    return {};
}

Expected<std::string> HipDevice::readGcnArchName(std::string const& name, int major,
                                                 int minor) const {
    HipFunctions const& api = runtime_->api();
    bool const r0600 = api.hipGetDevicePropertiesR0600 != nullptr;
    char const* const call = r0600 ? "hipGetDevicePropertiesR0600" : "hipGetDeviceProperties";
    std::string const which = "HIP device " + std::to_string(ordinal_);
    std::vector<std::uint64_t> buffer(kDevicePropertiesBufferBytes / sizeof(std::uint64_t), 0);
    HipError const result = r0600 ? api.hipGetDevicePropertiesR0600(buffer.data(), ordinal_)
                                  : api.hipGetDevicePropertiesR0000(buffer.data(), ordinal_);
    KILN_RETURN_IF_ERROR(runtime_->check(result, call, which));

    std::string readName;
    std::string arch;
    int readMajor = 0;
    int readMinor = 0;
    auto readFrom = [&](auto properties) { // a copy of the prefix, out of the larger buffer
        std::memcpy(&properties, buffer.data(), sizeof properties);
        readName = textOf(properties.name);
        arch = textOf(properties.gcnArchName);
        readMajor = properties.major;
        readMinor = properties.minor;
    };
    if (r0600)
        readFrom(DevicePropertiesR0600{});
    else
        readFrom(DevicePropertiesR0000{});
    if (readName != name || readMajor != major || readMinor != minor || !arch.starts_with("gfx")) {
        return Error(ErrorCode::DriverError,
                     "cannot read the processor of " + which + ": " + call + " (HIP " +
                         runtime_->versionText() +
                         ") wrote a structure whose fields are not "
                         "where the layout of " +
                         (r0600 ? "ROCm 6" : "ROCm 5") + " puts them (name '" + readName +
                         "' for '" + name + "', compute " + std::to_string(readMajor) + "." +
                         std::to_string(readMinor) + " for " + std::to_string(major) + "." +
                         std::to_string(minor) + ", gcnArchName '" + arch + "')");
    }
    return arch;
}

HipContext HipDevice::context() const {
    return {runtime_, ordinal_, description_.summary(), description_.target, gcnArchName_};
}

Expected<std::uint64_t> HipDevice::allocate(std::size_t bytes) {
    ScopedDevice scope(runtime_->api(), ordinal_);
    void* address = nullptr;
    KILN_RETURN_IF_ERROR(
        runtime_->check(runtime_->api().hipMalloc(&address, bytes), "hipMalloc",
                        std::to_string(bytes) + " bytes on " + description_.summary()));
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(address));
}

Status HipDevice::deallocate(std::uint64_t address) {
    ScopedDevice scope(runtime_->api(), ordinal_);
    return runtime_->check(runtime_->api().hipFree(pointer(address)), "hipFree",
                           description_.summary());
}

Status HipDevice::copyToDevice(std::uint64_t dst, void const* src, std::size_t bytes) {
    ScopedDevice scope(runtime_->api(), ordinal_);
    return runtime_->check(runtime_->api().hipMemcpyHtoD(pointer(dst), src, bytes), "hipMemcpyHtoD",
                           std::to_string(bytes) + " bytes to " + description_.summary());
}

Status HipDevice::copyToHost(void* dst, std::uint64_t src, std::size_t bytes) {
    ScopedDevice scope(runtime_->api(), ordinal_);
    return runtime_->check(runtime_->api().hipMemcpyDtoH(dst, pointer(src), bytes), "hipMemcpyDtoH",
                           std::to_string(bytes) + " bytes from " + description_.summary());
}

Expected<void*> HipDevice::allocatePinnedHost(std::size_t bytes) {
    ScopedDevice scope(runtime_->api(), ordinal_);
    void* host = nullptr;
    // Portable: page-locked for every device, not only this one.
    KILN_RETURN_IF_ERROR(runtime_->check(
        runtime_->api().hipHostMalloc(&host, bytes, kHipHostMallocPortable), "hipHostMalloc",
        std::to_string(bytes) + " bytes of page-locked host memory for " + description_.summary()));
    return host;
}

Status HipDevice::deallocatePinnedHost(void* host) {
    ScopedDevice scope(runtime_->api(), ordinal_);
    return runtime_->check(runtime_->api().hipHostFree(host), "hipHostFree",
                           description_.summary());
}

Expected<std::unique_ptr<StreamBackend>> HipDevice::newStream() {
    return createHipStream(context());
}

Expected<std::unique_ptr<EventBackend>> HipDevice::newEvent() {
    return createHipEvent(context());
}

Expected<std::unique_ptr<ModuleBackend>> HipDevice::loadCode(KernelLoaderSpec const& spec) {
    return loadHipModule(context(), spec);
}

Status HipDevice::synchronize() {
    ScopedDevice scope(runtime_->api(), ordinal_);
    return runtime_->check(runtime_->api().hipDeviceSynchronize(), "hipDeviceSynchronize",
                           description_.summary());
}

} // namespace kiln::runtime::hip
