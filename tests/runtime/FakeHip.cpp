// FakeHip.cpp: a fake libamdhip64 (a test fixture): the HIP entry points Kiln's HIP platform
// calls, with the C signatures of hip/hip_runtime_api.h, answering from FakeHipState.
//
// Device memory is malloc'ed host memory, so copies and fills really move bytes; modules keep a
// copy of their code object and find functions by the names in it; launches are recorded with
// the packed argument buffer, checked the way HIP checks the `extra` array. Stream work is a
// command, done at once or, while the stream captures, appended to its graph and done at each
// hipGraphLaunch; the calls ROCm refuses while a thread captures (CHECK_STREAM_CAPTURE_SUPPORTED
// and CHECK_STREAM_CAPTURING in ROCm's clr) fail here too and spoil the capture.
#include "FakeHip.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <utility>

namespace {

using kiln::runtime::test::FakeHipLaunch;
using kiln::runtime::test::FakeHipState;

// hipError_t values (hip_runtime_api.h).
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
constexpr int kNotInitialized = 3;
constexpr int kInsufficientDriver = 35;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kNoBinaryForGpu = 209;
constexpr int kIllegalState = 401;
constexpr int kNotFound = 500;
constexpr int kStreamCaptureUnsupported = 900;
constexpr int kStreamCaptureInvalidated = 901;

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

/// A stream's work: a copy, a fill or a launch, done when the stream gets to it.
using Command = std::function<int()>;

struct FakeGraph {
    std::vector<Command> commands;
};

struct FakeGraphExec {
    std::vector<Command> commands; // a copy: the executable graph does not follow the graph
};

struct FakeStream {
    FakeGraph* capture = nullptr; // the graph it records into, while in capture mode
    bool invalidated = false;     // a call that cannot be recorded spoiled the capture
    int device = 0;               // the device current where it was made
};

std::set<void*>& allocations() {
    static std::set<void*> live;
    return live;
}

std::set<void*>& hostAllocations() {
    static std::set<void*> live;
    return live;
}

/// The streams in capture mode (all of this thread's: the tests have one).
std::set<FakeStream*>& capturing() {
    static std::set<FakeStream*> streams;
    return streams;
}

/// Whether commands run now as part of a hipGraphLaunch.
bool& replaying() {
    static bool inReplay = false;
    return inReplay;
}

/// What HIP answers a call it cannot record while the thread captures in thread-local mode: the
/// call fails and every capture of the thread is spoiled.
int refuseWhileCapturing() {
    if (capturing().empty())
        return kSuccess;
    for (FakeStream* stream : capturing())
        stream->invalidated = true;
    return kStreamCaptureUnsupported;
}

/// Does `command` now, or records it when `stream` captures.
int enqueue(void* stream, Command command) {
    auto* fake = static_cast<FakeStream*>(stream);
    if (!fake || !fake->capture)
        return command();
    if (fake->invalidated)
        return kStreamCaptureInvalidated;
    fake->capture->commands.push_back(std::move(command));
    return kSuccess;
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
    case kOutOfMemory:
        return "hipErrorOutOfMemory";
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
    case kIllegalState:
        return "hipErrorIllegalState";
    case kNotFound:
        return "hipErrorNotFound";
    case kStreamCaptureUnsupported:
        return "hipErrorStreamCaptureUnsupported";
    case kStreamCaptureInvalidated:
        return "hipErrorStreamCaptureInvalidated";
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
    case kOutOfMemory:
        return "out of memory";
    case kInsufficientDriver:
        return "driver version is insufficient for runtime version";
    case kNoDevice:
        return "no ROCm-capable device is detected";
    case kInvalidDevice:
        return "invalid device ordinal";
    case kNoBinaryForGpu:
        return "no kernel image is available for execution on the device";
    case kIllegalState:
        return "the operation cannot be performed in the present state";
    case kNotFound:
        return "named symbol not found";
    case kStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
    case kStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
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
    called("hipDeviceSynchronize");
    return refuseWhileCapturing();
}

int hipMalloc(void** address, std::size_t bytes) {
    called("hipMalloc");
    if (int const refused = refuseWhileCapturing(); refused != kSuccess)
        return refused;
    *address = std::malloc(std::max<std::size_t>(bytes, 1));
    allocations().insert(*address);
    ++state().liveAllocations;
    return kSuccess;
}

int hipFree(void* address) {
    called("hipFree");
    if (int const refused = refuseWhileCapturing(); refused != kSuccess)
        return refused;
    if (allocations().erase(address) == 0)
        return kInvalidValue;
    std::free(address);
    --state().liveAllocations;
    return kSuccess;
}

int hipHostMalloc(void** host, std::size_t bytes, unsigned flags) {
    called("hipHostMalloc");
    if (int const refused = refuseWhileCapturing(); refused != kSuccess)
        return refused;
    state().hostMallocFlags.push_back(flags);
    if (state().hostMallocResult != kSuccess)
        return state().hostMallocResult;
    *host = std::malloc(std::max<std::size_t>(bytes, 1));
    hostAllocations().insert(*host);
    ++state().liveHostAllocations;
    return kSuccess;
}

int hipHostFree(void* host) {
    called("hipHostFree");
    if (int const refused = refuseWhileCapturing(); refused != kSuccess)
        return refused;
    if (hostAllocations().erase(host) == 0)
        return kInvalidValue;
    std::free(host);
    --state().liveHostAllocations;
    return kSuccess;
}

int hipMemcpyHtoD(void* dst, void const* src, std::size_t bytes) {
    called("hipMemcpyHtoD");
    if (int const refused = refuseWhileCapturing(); refused != kSuccess)
        return refused;
    std::memcpy(dst, src, bytes);
    return kSuccess;
}

int hipMemcpyDtoH(void* dst, void* src, std::size_t bytes) {
    called("hipMemcpyDtoH");
    if (int const refused = refuseWhileCapturing(); refused != kSuccess)
        return refused;
    std::memcpy(dst, src, bytes);
    return kSuccess;
}

int hipMemcpyHtoDAsync(void* dst, void const* src, std::size_t bytes, void* stream) {
    called("hipMemcpyHtoDAsync");
    return enqueue(stream, [=] {
        std::memcpy(dst, src, bytes);
        return kSuccess;
    });
}

int hipMemcpyDtoHAsync(void* dst, void* src, std::size_t bytes, void* stream) {
    called("hipMemcpyDtoHAsync");
    return enqueue(stream, [=] {
        std::memcpy(dst, src, bytes);
        return kSuccess;
    });
}

int hipMemcpyDtoDAsync(void* dst, void* src, std::size_t bytes, void* stream) {
    called("hipMemcpyDtoDAsync");
    return enqueue(stream, [=] {
        std::memmove(dst, src, bytes);
        return kSuccess;
    });
}

int hipMemsetD32Async(void* dst, int value, std::size_t count, void* stream) {
    called("hipMemsetD32Async");
    return enqueue(stream, [=] {
        for (std::size_t i = 0; i < count; ++i)
            std::memcpy(static_cast<char*>(dst) + i * 4, &value, 4);
        return kSuccess;
    });
}

int hipStreamCreateWithFlags(void** stream, unsigned flags) {
    called("hipStreamCreateWithFlags");
    state().streamFlags.push_back(flags);
    auto* fake = new FakeStream();
    fake->device = currentDevice();
    *stream = fake;
    return kSuccess;
}

/// The stream's device; the current one for the null stream.
int hipStreamGetDevice(void* stream, int* device) {
    called("hipStreamGetDevice");
    *device = stream ? static_cast<FakeStream*>(stream)->device : currentDevice();
    return kSuccess;
}

int hipStreamDestroy(void* stream) {
    called("hipStreamDestroy");
    auto* fake = static_cast<FakeStream*>(stream);
    if (capturing().erase(fake) > 0) {
        --state().capturingStreams;
        delete fake->capture;
    }
    delete fake;
    return kSuccess;
}

int hipStreamSynchronize(void* stream) {
    called("hipStreamSynchronize");
    auto* fake = static_cast<FakeStream*>(stream);
    if (fake && fake->capture) {
        fake->invalidated = true;
        return kStreamCaptureUnsupported;
    }
    return kSuccess;
}

int hipStreamBeginCapture(void* stream, int mode) {
    called("hipStreamBeginCapture");
    state().captureModes.push_back(mode);
    auto* fake = static_cast<FakeStream*>(stream);
    if (!fake || fake->capture)
        return kIllegalState;
    fake->capture = new FakeGraph();
    fake->invalidated = false;
    capturing().insert(fake);
    ++state().capturingStreams;
    return kSuccess;
}

/// Leaves capture mode in every case; a spoiled capture gives no graph.
int hipStreamEndCapture(void* stream, void** graph) {
    called("hipStreamEndCapture");
    auto* fake = static_cast<FakeStream*>(stream);
    if (!fake || !fake->capture)
        return kIllegalState;
    capturing().erase(fake);
    --state().capturingStreams;
    std::unique_ptr<FakeGraph> captured(std::exchange(fake->capture, nullptr));
    *graph = nullptr;
    if (fake->invalidated)
        return kStreamCaptureInvalidated;
    *graph = captured.release();
    ++state().liveGraphs;
    return kSuccess;
}

int hipGraphInstantiate(void** executable, void* graph, void**, char* log, std::size_t logBytes) {
    called("hipGraphInstantiate");
    if (state().graphInstantiateResult != kSuccess) {
        if (log && logBytes > 0) {
            std::size_t const n = std::min(state().graphInstantiateLog.size(), logBytes - 1);
            std::memcpy(log, state().graphInstantiateLog.data(), n);
            log[n] = '\0';
        }
        return state().graphInstantiateResult;
    }
    *executable = new FakeGraphExec{static_cast<FakeGraph*>(graph)->commands};
    ++state().liveGraphExecs;
    return kSuccess;
}

int hipGraphLaunch(void* executable, void* stream) {
    called("hipGraphLaunch");
    std::vector<Command> const& commands = static_cast<FakeGraphExec*>(executable)->commands;
    return enqueue(stream, [&commands] {
        replaying() = true;
        int result = kSuccess;
        for (Command const& command : commands) {
            if ((result = command()) != kSuccess)
                break;
        }
        replaying() = false;
        state().replays.push_back(static_cast<int>(commands.size()));
        return result;
    });
}

int hipGraphExecDestroy(void* executable) {
    called("hipGraphExecDestroy");
    delete static_cast<FakeGraphExec*>(executable);
    --state().liveGraphExecs;
    return kSuccess;
}

int hipGraphDestroy(void* graph) {
    called("hipGraphDestroy");
    delete static_cast<FakeGraph*>(graph);
    --state().liveGraphs;
    return kSuccess;
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
                          void* stream, void** kernelParams, void** extra) {
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
    launch.device = currentDevice();
    launch.kernelParams = kernelParams != nullptr;
    if (extra) {
        if (extra[0] != reinterpret_cast<void*>(0x01) ||
            extra[2] != reinterpret_cast<void*>(0x02) || extra[4] != reinterpret_cast<void*>(0x03))
            return kNotInitialized;
        launch.argumentBytes = *static_cast<std::size_t*>(extra[3]);
        auto const* buffer = static_cast<unsigned char const*>(extra[1]);
        launch.arguments.assign(buffer, buffer + launch.argumentBytes);
    }
    // The arguments are copied here, at the call, also when the launch is recorded.
    return enqueue(stream, [launch] {
        FakeHipLaunch ran = launch;
        ran.replayed = replaying();
        state().launches.push_back(std::move(ran));
        return kSuccess;
    });
}

} // extern "C"
