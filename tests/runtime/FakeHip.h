// FakeHip.h: a stand-in for libamdhip64 for tests on machines without an AMD GPU: what the fake
// answers, and what it was asked.
//
// FakeHip.cpp is built as a shared library that exports the HIP entry points Kiln's HIP platform
// resolves, so loadPlatform("hip", {.driverLibrary = KILN_FAKE_HIP_LIBRARY}) runs the platform's
// real code against it, and those the C ABI of `kiln export` calls (hipStreamGetDevice besides;
// tests/cli/ExportCapiHipTest.cpp loads that over it through KILN_HIP_RUNTIME). Device memory
// (and page-locked host memory) is host memory, so copies really copy; a launch runs nothing but
// records its shape and the packed argument buffer. A stream in capture mode records its work
// into a graph instead of doing it, and a replay of the instantiated graph does it then; as in
// HIP, a call that cannot be recorded (a synchronous copy, an allocation, a synchronize) fails
// while this thread captures and spoils the capture. A test reaches the one state of the process
// through fakeHip(), which dlopens the same library the platform loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::runtime::test {

/// One hipModuleLaunchKernel call as the fake saw it.
struct FakeHipLaunch {
    std::string kernel; ///< the name the function was taken by
    unsigned grid[3] = {};
    unsigned block[3] = {};
    unsigned sharedBytes = 0;
    int device = 0;                       ///< the calling thread's current device
    std::vector<unsigned char> arguments; ///< the `extra` buffer (HIP_LAUNCH_PARAM_BUFFER_POINTER)
    std::size_t argumentBytes = 0;        ///< its size (HIP_LAUNCH_PARAM_BUFFER_SIZE)
    bool kernelParams = false;            ///< whether `kernelParams` was given instead
    bool replayed = false;                ///< whether it ran as part of a graph (hipGraphLaunch)
};

/// The fake runtime's answers and records.
struct FakeHipState {
    // Answers.
    int initResult = 0; ///< what hipInit returns
    int deviceCount = 1;
    int runtimeVersion = 60342134; ///< HIP 6.3.42134
    std::string name = "AMD Instinct MI300X";
    std::string gcnArchName = "gfx942:sramecc+:xnack-";
    bool scrambledProperties = false;      ///< hipGetDevicePropertiesR0600 writes a wrong layout
    std::map<int, int> deviceAttributes;   ///< by hipDeviceAttribute_t value; others fail
    std::map<int, int> functionAttributes; ///< by hipFunction_attribute value; others fail
    int moduleLoadResult = 0;              ///< what hipModuleLoadData returns
    int hostMallocResult = 0;              ///< what hipHostMalloc returns
    int graphInstantiateResult = 0;        ///< what hipGraphInstantiate returns
    std::string graphInstantiateLog;       ///< what hipGraphInstantiate writes to its log

    // Records.
    std::vector<std::string> calls;        ///< the HIP functions called, in order
    std::vector<std::string> loadedImages; ///< the code objects given to hipModuleLoadData
    std::vector<FakeHipLaunch> launches;   ///< every launch
    std::vector<unsigned> streamFlags;     ///< the flags of every hipStreamCreateWithFlags
    int liveAllocations = 0;               ///< hipMalloc'ed and not yet hipFree'd
    int liveHostAllocations = 0;           ///< hipHostMalloc'ed and not yet hipHostFree'd
    std::vector<unsigned> hostMallocFlags; ///< the flags of every hipHostMalloc
    std::vector<int> captureModes;         ///< the mode of every hipStreamBeginCapture
    int capturingStreams = 0;              ///< streams in capture mode now
    int liveGraphs = 0;                    ///< hipGraph_t made and not yet destroyed
    int liveGraphExecs = 0;                ///< hipGraphExec_t made and not yet destroyed
    std::vector<int> replays;              ///< per hipGraphLaunch, how many commands it ran

    /// An MI300X (gfx942, 304 compute units, 64 KB of LDS per workgroup) with nothing recorded.
    void reset() { *this = FakeHipState(); }
    /// How many times `function` was called.
    int count(std::string const& function) const {
        int n = 0;
        for (std::string const& call : calls)
            n += call == function ? 1 : 0;
        return n;
    }

    FakeHipState() {
        // hipDeviceAttribute_t values (ROCm 5.0+) and what ROCm 6 reports for an MI300X.
        deviceAttributes = {{5, 2100000}, {19, 4194304},    {23, 9},       {26, 1024},  {27, 1024},
                            {28, 1024},   {29, 2147483647}, {30, 65536},   {31, 65536}, {56, 1024},
                            {57, 2048},   {59, 8192},       {60, 1300000}, {61, 4},     {63, 304},
                            {71, 65536},  {72, 131072},     {74, 65536},   {75, 0},     {76, 65536},
                            {87, 64},     {10002, 65536}};
        // hipFunction_attribute values for a kernel of 256 threads, 20 VGPRs and no LDS.
        functionAttributes = {{0, 256}, {1, 0}, {3, 0}, {4, 20}, {8, 65536}};
    }
};

} // namespace kiln::runtime::test

/// The fake's state (exported by the fake library, resolved by fakeHip()).
extern "C" kiln::runtime::test::FakeHipState* kilnFakeHipState();

namespace kiln::runtime::test {

/// The state of the fake library at KILN_FAKE_HIP_LIBRARY, the one loadPlatform will load.
FakeHipState& fakeHip();

} // namespace kiln::runtime::test
