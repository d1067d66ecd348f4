// FakeHip.cpp: a fake libamdhip64 (a test fixture): the HIP entry points Kiln's HIP platform
// calls, with the C signatures of hip/hip_runtime_api.h, answering from FakeHipState.
//
// Device memory is malloc'ed host memory, so copies and fills really move bytes; modules keep a
// copy of their code object and find functions by the names in it; launches are recorded with
// the packed argument buffer, checked the way HIP checks the `extra` array.
#include "FakeHip.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

namespace {

using kiln::runtime::test::FakeHipLaunch;
using kiln::runtime::test::FakeHipState;

// hipError_t values (hip_runtime_api.h).
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNotInitialized = 3;
constexpr int kInsufficientDriver = 35;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kNoBinaryForGpu = 209;
constexpr int kNotFound = 500;

FakeHipState& state() {
    static FakeHipState fake;
    return fake;
}

int called(char const* function) {
    state().calls.emplace_back(function);
    return kSuccess;
}

struct FakeModule {
    std::string image;
    std::vector<std::unique_ptr<std::string>> functions; // each hipFunction_t names one
};

struct FakeEvent {
    float milliseconds = 0;
};

std::set<void*>& allocations() {
    static std::set<void*> live;
    return live;
}

/// The calling thread's device (one thread in these tests).
int& currentDevice() {
    static int device = 0;
    return device;
}

float& clockMilliseconds() {
    static float now = 0;
    return now;
}

/// The bytes of an ELF image given by address only, as hipModuleLoadData gets it: up to the end
/// of its section header table (where linkers put it), or of its program header table.
std::size_t elfSize(void const* image) {
    auto const* bytes = static_cast<unsigned char const*>(image);
    auto read = [&](std::size_t at, std::size_t size) {
        std::uint64_t value = 0;
        std::memcpy(&value, bytes + at, size);
        return value;
    };
    std::uint64_t const sections = read(40, 8) + read(58, 2) * read(60, 2);
    std::uint64_t const programs = read(32, 8) + read(54, 2) * read(56, 2);
    return static_cast<std::size_t>(std::max<std::uint64_t>({64, sections, programs}));
}

} // namespace

extern "C" {

kiln::runtime::test::FakeHipState* kilnFakeHipState() {
    return &state();
}

char const* hipGetErrorName(int error) {
    switch (error) {
    case kSuccess:
        return "hipSuccess";
    case kInvalidValue:
        return "hipErrorInvalidValue";
    case kNotInitialized:
        return "hipErrorNotInitialized";
    case kInsufficientDriver:
        return "hipErrorInsufficientDriver";
    case kNoDevice:
        return "hipErrorNoDevice";
    case kInvalidDevice:
        return "hipErrorInvalidDevice";
    case kNoBinaryForGpu:
        return "hipErrorNoBinaryForGpu";
    case kNotFound:
        return "hipErrorNotFound";
    default:
        return "hipErrorUnknown";
    }
}

char const* hipGetErrorString(int error) {
    switch (error) {
    case kSuccess:
        return "no error";
    case kInvalidValue:
        return "invalid argument";
    case kInsufficientDriver:
        return "driver version is insufficient for runtime version";
    case kNoDevice:
        return "no ROCm-capable device is detected";
    case kInvalidDevice:
        return "invalid device ordinal";
    case kNoBinaryForGpu:
        return "no kernel image is available for execution on the device";
    case kNotFound:
        return "named symbol not found";
    default:
        return "unknown error";
    }
}

int hipInit(unsigned flags) {
    called("hipInit");
    return flags == 0 ? state().initResult : kInvalidValue;
}

int hipRuntimeGetVersion(int* version) {
    called("hipRuntimeGetVersion");
    *version = state().runtimeVersion;
    return kSuccess;
}

int hipGetDeviceCount(int* count) {
    called("hipGetDeviceCount");
    *count = state().deviceCount;
    return state().deviceCount == 0 ? kNoDevice : kSuccess;
}

int hipDeviceGet(int* device, int ordinal) {
    called("hipDeviceGet");
    if (ordinal < 0 || ordinal >= state().deviceCount)
        return kInvalidDevice;
    *device = ordinal;
    return kSuccess;
}

int hipDeviceGetName(char* name, int length, int device) {
    called("hipDeviceGetName");
    if (device < 0 || device >= state().deviceCount || length <= 0)
        return kInvalidValue;
    std::size_t const n = std::min(state().name.size(), static_cast<std::size_t>(length - 1));
    std::memcpy(name, state().name.data(), n);
    name[n] = '\0';
    return kSuccess;
}

int hipDeviceGetAttribute(int* value, int attribute, int device) {
    if (device < 0 || device >= state().deviceCount)
        return kInvalidDevice;
    auto const found = state().deviceAttributes.find(attribute);
    if (found == state().deviceAttributes.end())
        return kInvalidValue;
    *value = found->second;
    return kSuccess;
}

int hipDeviceTotalMem(std::size_t* bytes, int device) {
    called("hipDeviceTotalMem");
    if (device < 0 || device >= state().deviceCount)
        return kInvalidDevice;
    *bytes = std::size_t{192} << 30;
    return kSuccess;
}

/// Writes hipDeviceProp_tR0600 as ROCm 6 lays it out: name at byte 0, major at 360, minor at
/// 364, gcnArchName at 1160, 1472 bytes in all (counted from hip_runtime_api.h).
int hipGetDevicePropertiesR0600(void* properties, int device) {
    called("hipGetDevicePropertiesR0600");
    if (device < 0 || device >= state().deviceCount)
        return kInvalidDevice;
    auto* bytes = static_cast<char*>(properties);
    std::memset(bytes, 0, 1472);
    std::size_t const shift = state().scrambledProperties ? 8 : 0; // a layout Kiln does not know
    std::strncpy(bytes + shift, state().name.c_str(), 255);
    int const major = state().deviceAttributes.at(23);
    int const minor = state().deviceAttributes.at(61);
    std::memcpy(bytes + 360 + shift, &major, sizeof major);
    std::memcpy(bytes + 364 + shift, &minor, sizeof minor);
    std::strncpy(bytes + 1160 + shift, state().gcnArchName.c_str(), 255);
    return kSuccess;
}

int hipGetDevice(int* device) {
    *device = currentDevice();
    return kSuccess;
}

int hipSetDevice(int device) {
    called("hipSetDevice");
    if (device < 0 || device >= state().deviceCount)
        return kInvalidDevice;
    currentDevice() = device;
    return kSuccess;
}

int hipDeviceSynchronize() {
    return called("hipDeviceSynchronize");
}

int hipMalloc(void** address, std::size_t bytes) {
    called("hipMalloc");
    *address = std::malloc(std::max<std::size_t>(bytes, 1));
    allocations().insert(*address);
    ++state().liveAllocations;
    return kSuccess;
}

int hipFree(void* address) {
    called("hipFree");
    if (allocations().erase(address) == 0)
        return kInvalidValue;
    std::free(address);
    --state().liveAllocations;
    return kSuccess;
}

int hipMemcpyHtoD(void* dst, void const* src, std::size_t bytes) {
    called("hipMemcpyHtoD");
    std::memcpy(dst, src, bytes);
    return kSuccess;
}

int hipMemcpyDtoH(void* dst, void* src, std::size_t bytes) {
    called("hipMemcpyDtoH");
    std::memcpy(dst, src, bytes);
    return kSuccess;
}

int hipMemcpyHtoDAsync(void* dst, void const* src, std::size_t bytes, void*) {
    called("hipMemcpyHtoDAsync");
    std::memcpy(dst, src, bytes);
    return kSuccess;
}

int hipMemcpyDtoHAsync(void* dst, void* src, std::size_t bytes, void*) {
    called("hipMemcpyDtoHAsync");
    std::memcpy(dst, src, bytes);
    return kSuccess;
}

int hipMemcpyDtoDAsync(void* dst, void* src, std::size_t bytes, void*) {
    called("hipMemcpyDtoDAsync");
    std::memmove(dst, src, bytes);
    return kSuccess;
}

int hipMemsetD32Async(void* dst, int value, std::size_t count, void*) {
    called("hipMemsetD32Async");
    for (std::size_t i = 0; i < count; ++i)
        std::memcpy(static_cast<char*>(dst) + i * 4, &value, 4);
    return kSuccess;
}

int hipStreamCreateWithFlags(void** stream, unsigned flags) {
    called("hipStreamCreateWithFlags");
    state().streamFlags.push_back(flags);
    *stream = new int(0);
    return kSuccess;
}

int hipStreamDestroy(void* stream) {
    called("hipStreamDestroy");
    delete static_cast<int*>(stream);
    return kSuccess;
}

int hipStreamSynchronize(void*) {
    return called("hipStreamSynchronize");
}

int hipStreamWaitEvent(void*, void*, unsigned flags) {
    called("hipStreamWaitEvent");
    return flags == 0 ? kSuccess : kInvalidValue;
}

int hipEventCreate(void** event) {
    called("hipEventCreate");
    *event = new FakeEvent();
    return kSuccess;
}

int hipEventDestroy(void* event) {
    called("hipEventDestroy");
    delete static_cast<FakeEvent*>(event);
    return kSuccess;
}

/// Each record happens 1.5 ms after the one before.
int hipEventRecord(void* event, void*) {
    called("hipEventRecord");
    clockMilliseconds() += 1.5f;
    static_cast<FakeEvent*>(event)->milliseconds = clockMilliseconds();
    return kSuccess;
}

int hipEventSynchronize(void*) {
    return called("hipEventSynchronize");
}

int hipEventElapsedTime(float* milliseconds, void* start, void* stop) {
    called("hipEventElapsedTime");
    *milliseconds =
        static_cast<FakeEvent*>(stop)->milliseconds - static_cast<FakeEvent*>(start)->milliseconds;
    return kSuccess;
}

int hipModuleLoadData(void** module, void const* image) {
    called("hipModuleLoadData");
    std::string bytes(static_cast<char const*>(image), elfSize(image));
    state().loadedImages.push_back(bytes);
    if (state().moduleLoadResult != kSuccess)
        return state().moduleLoadResult;
    *module = new FakeModule{std::move(bytes), {}};
    return kSuccess;
}

int hipModuleUnload(void* module) {
    called("hipModuleUnload");
    delete static_cast<FakeModule*>(module);
    return kSuccess;
}

/// A function is any name the code object's symbol strings hold.
int hipModuleGetFunction(void** function, void* module, char const* name) {
    called("hipModuleGetFunction");
    auto* fake = static_cast<FakeModule*>(module);
    std::string const symbol = std::string(1, '\0') + name + std::string(1, '\0');
    if (fake->image.find(symbol) == std::string::npos)
        return kNotFound;
    fake->functions.push_back(std::make_unique<std::string>(name));
    *function = fake->functions.back().get();
    return kSuccess;
}

int hipFuncGetAttribute(int* value, int attribute, void*) {
    auto const found = state().functionAttributes.find(attribute);
    if (found == state().functionAttributes.end())
        return kInvalidValue;
    *value = found->second;
    return kSuccess;
}

int hipModuleLaunchKernel(void* function, unsigned gridX, unsigned gridY, unsigned gridZ,
                          unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                          void*, void** kernelParams, void** extra) {
    called("hipModuleLaunchKernel");
    // As HIP checks them: one of the two forms, and `extra` as {BUFFER_POINTER, p, BUFFER_SIZE,
    // &size, END}.
    if ((kernelParams == nullptr) == (extra == nullptr))
        return kInvalidValue;
    FakeHipLaunch launch;
    launch.kernel = *static_cast<std::string*>(function);
    launch.grid[0] = gridX;
    launch.grid[1] = gridY;
    launch.grid[2] = gridZ;
    launch.block[0] = blockX;
    launch.block[1] = blockY;
    launch.block[2] = blockZ;
    launch.sharedBytes = sharedBytes;
    launch.kernelParams = kernelParams != nullptr;
    if (extra) {
        if (extra[0] != reinterpret_cast<void*>(0x01) ||
            extra[2] != reinterpret_cast<void*>(0x02) || extra[4] != reinterpret_cast<void*>(0x03))
            return kNotInitialized;
        launch.argumentBytes = *static_cast<std::size_t*>(extra[3]);
        auto const* buffer = static_cast<unsigned char const*>(extra[1]);
        launch.arguments.assign(buffer, buffer + launch.argumentBytes);
    }
    state().launches.push_back(std::move(launch));
    return kSuccess;
}

} // extern "C"
