// ExportCapiHipTest.cpp: the C ABI of an AMD kernel (ExportCapiHip.cpp) built by the system's C
// compiler with -Werror and called over the fake HIP runtime (tests/runtime/FakeHip.h), which it
// loads through KILN_HIP_RUNTIME as it would load libamdhip64. Called, the golden
// gemm_amd_capi.c loads its code object once per device, launches the manifest's grid and block
// with the arguments packed where the code object's metadata puts them, follows a stream to its
// device and back, and says why it refuses a size, a grid, a missing runtime or a runtime's
// error; a persistent kernel's launcher sizes its grid by the device's compute units.
#include "../runtime/FakeHipFixture.h"
#include "../runtime/ScopedEnvironment.h"
#include "ExportCapi.h"
#include "ExportedGemm.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace kiln::runtime {
namespace {

std::string const kGoldenSource =
    std::string(KILN_SOURCE_DIR) + "/tests/golden/export/gemm_amd_capi.c";

std::string readFile(std::string const& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

/// A fresh path in the test's temporary folder.
std::string temporaryPath(std::string const& stem) {
    static std::atomic<int> counter{0};
    return ::testing::TempDir() + stem + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(counter++);
}

/// A file or folder of the test's, removed with this.
struct Temporary {
    std::string path;
    ~Temporary() { std::filesystem::remove_all(path); }
};

/// The library `cc` builds from `source` with the warnings export-capi.sh asks of the CUDA one,
/// as errors, at `library`; false, with the compiler's messages in `log`, when it fails.
bool buildLibrary(std::string const& source, std::string const& library, std::string& log) {
    Temporary const messages{library + ".log"};
    std::string const command =
        "cc -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Werror -O2 -fPIC "
        "-shared -o '" +
        library + "' '" + source + "' -ldl -pthread > '" + messages.path + "' 2>&1";
    int const status = std::system(command.c_str());
    log = command + "\n" + readFile(messages.path);
    return status == 0;
}

/// The golden source's library, built once per process.
std::string const& goldenLibrary() {
    static Temporary const library{temporaryPath("libgemm_amd") + ".so"};
    static bool const built = [] {
        std::string log;
        bool const ok = buildLibrary(kGoldenSource, library.path, log);
        EXPECT_TRUE(ok) << log;
        return ok;
    }();
    EXPECT_TRUE(built);
    return library.path;
}

/// One loaded copy of a C ABI's library for the GEMM (A, B, D, M, K, N): each copy is a library
/// of its own to the loader, so it starts as in a fresh process (no runtime, no kernel loaded).
/// It stays loaded, as in an application: it holds the modules it loaded.
class GemmLibrary {
public:
    explicit GemmLibrary(std::string const& built, std::string const& name = "gemm_amd") {
        Temporary const copy{temporaryPath("lib" + name) + ".so"};
        std::filesystem::copy_file(built, copy.path);
        void* const handle = dlopen(copy.path.c_str(), RTLD_NOW | RTLD_LOCAL); // the file may go
        if (!handle) {
            ADD_FAILURE() << "cannot load " << copy.path << ": " << dlerror();
            return;
        }
        void* launch = dlsym(handle, (name + "_launch").c_str());
        void* error = dlsym(handle, (name + "_error").c_str());
        EXPECT_NE(launch, nullptr);
        EXPECT_NE(error, nullptr);
        std::memcpy(&launch_, &launch, sizeof launch);
        std::memcpy(&error_, &error, sizeof error);
    }
    GemmLibrary(GemmLibrary const&) = delete;
    GemmLibrary& operator=(GemmLibrary const&) = delete;

    /// NAME_launch on A, B and D at 0xa000, 0xb000 and 0xd000.
    int launch(void* stream, std::int64_t m, std::int64_t k, std::int64_t n) const {
        return launch_(stream, reinterpret_cast<void const*>(0xa000),
                       reinterpret_cast<void const*>(0xb000), reinterpret_cast<void*>(0xd000), m, k,
                       n);
    }
    /// NAME_error().
    std::string error() const { return error_(); }
    bool loaded() const { return launch_ && error_; }

private:
    int (*launch_)(void*, void const*, void const*, void*, std::int64_t, std::int64_t,
                   std::int64_t) = nullptr;
    char const* (*error_)() = nullptr;
};

/// The kernarg bytes of a launch on A, B, D (above) and M, K, N: each 8 bytes, in order.
std::vector<unsigned char> packed(std::int64_t m, std::int64_t k, std::int64_t n) {
    std::int64_t const values[] = {0xa000, 0xb000, 0xd000, m, k, n};
    std::vector<unsigned char> bytes(sizeof values);
    std::memcpy(bytes.data(), values, sizeof values);
    return bytes;
}

/// An entry point of the fake runtime, for what the test does as the application would.
template <class F>
F fakeEntry(char const* name) {
    void* library = dlopen(kFakeHipLibrary, RTLD_NOW | RTLD_LOCAL);
    void* symbol = library ? dlsym(library, name) : nullptr;
    if (!symbol)
        ADD_FAILURE() << "the fake HIP runtime has no " << name;
    F function = nullptr;
    std::memcpy(&function, &symbol, sizeof symbol);
    return function;
}

/// A launch's grid, x, y, z.
std::vector<unsigned> gridOf(test::FakeHipLaunch const& launch) {
    return {launch.grid[0], launch.grid[1], launch.grid[2]};
}

int currentDevice() {
    int device = -1;
    fakeEntry<int (*)(int*)>("hipGetDevice")(&device);
    return device;
}

/// The fake reset to one MI300X (304 compute units), loaded by the libraries through
/// KILN_HIP_RUNTIME.
class ExportCapiOverHip : public FakeHip {
protected:
    ScopedEnvironment runtime_{kHipRuntimeVariable, kFakeHipLibrary};
};

// The default stream: the runtime loaded and the code object loaded once, the launch as the
// manifest says (16 x 16 workgroups of 128 workitems for 1000 x 999, 16 KB of LDS), the
// arguments packed as the code object's metadata lays them out (48 bytes, the hidden ones
// left to HIP).
TEST_F(ExportCapiOverHip, TheGoldenSourceLaunchesThroughHip) {
    GemmLibrary const library(goldenLibrary());
    ASSERT_TRUE(library.loaded());
    EXPECT_EQ(library.launch(nullptr, 1000, 777, 999), 0) << library.error();
    EXPECT_EQ(library.error(), "");
    EXPECT_EQ(library.launch(nullptr, 64, 1, 65), 0) << library.error();
    EXPECT_EQ(fake().calls,
              (std::vector<std::string>{"hipInit", "hipModuleLoadData", "hipModuleGetFunction",
                                        "hipModuleLaunchKernel", "hipModuleLaunchKernel"}));
    ASSERT_EQ(fake().loadedImages.size(), 1u);
    EXPECT_EQ(fake().loadedImages[0],
              kiln::test::exportedCodeObject(kiln::test::exportedAmdGemm()));
    ASSERT_EQ(fake().launches.size(), 2u);
    test::FakeHipLaunch const& first = fake().launches[0];
    EXPECT_EQ(first.kernel, "kiln_gemm");
    EXPECT_EQ(gridOf(first), (std::vector<unsigned>{16, 16, 1}));
    EXPECT_EQ(std::vector<unsigned>(first.block, first.block + 3),
              (std::vector<unsigned>{128, 1, 1}));
    EXPECT_EQ(first.sharedBytes, 16384u);
    EXPECT_FALSE(first.kernelParams);
    EXPECT_EQ(first.argumentBytes, 48u);
    EXPECT_EQ(first.arguments, packed(1000, 777, 999));
    EXPECT_EQ(first.device, 0);
    EXPECT_EQ(gridOf(fake().launches[1]), (std::vector<unsigned>{1, 2, 1}));
    EXPECT_EQ(fake().launches[1].arguments, packed(64, 1, 65));
}

// A stream of device 1: the launch runs there (the kernel loaded there too), and the caller's
// device is current again after it.
TEST_F(ExportCapiOverHip, AStreamRunsOnItsDevice) {
    fake().deviceCount = 2;
    auto setDevice = fakeEntry<int (*)(int)>("hipSetDevice");
    auto createStream = fakeEntry<int (*)(void**, unsigned)>("hipStreamCreateWithFlags");
    auto destroyStream = fakeEntry<int (*)(void*)>("hipStreamDestroy");
    void* stream = nullptr;
    ASSERT_EQ(setDevice(1), 0);
    ASSERT_EQ(createStream(&stream, 0), 0);
    ASSERT_EQ(setDevice(0), 0);
    fake().calls.clear();

    GemmLibrary const library(goldenLibrary());
    ASSERT_TRUE(library.loaded());
    EXPECT_EQ(library.launch(stream, 1000, 777, 999), 0) << library.error();
    EXPECT_EQ(currentDevice(), 0);
    EXPECT_EQ(fake().calls,
              (std::vector<std::string>{"hipInit", "hipStreamGetDevice", "hipSetDevice",
                                        "hipModuleLoadData", "hipModuleGetFunction",
                                        "hipModuleLaunchKernel", "hipSetDevice"}));
    // The default stream is device 0's: a second load there; the stream again: none.
    EXPECT_EQ(library.launch(nullptr, 1000, 777, 999), 0) << library.error();
    EXPECT_EQ(library.launch(stream, 1000, 777, 999), 0) << library.error();
    EXPECT_EQ(fake().count("hipModuleLoadData"), 2);
    ASSERT_EQ(fake().launches.size(), 3u);
    EXPECT_EQ(fake().launches[0].device, 1);
    EXPECT_EQ(fake().launches[1].device, 0);
    EXPECT_EQ(fake().launches[2].device, 1);
    EXPECT_EQ(currentDevice(), 0);
    destroyStream(stream);
}

// Refused before HIP is asked: a negative size; nothing to do for an empty grid; a runtime that
// does not load, kept and said again at the next call.
TEST_F(ExportCapiOverHip, WithoutARuntime) {
    ScopedEnvironment missing(kHipRuntimeVariable, "/nonexistent/libamdhip64.so");
    GemmLibrary const library(goldenLibrary());
    ASSERT_TRUE(library.loaded());
    EXPECT_EQ(library.launch(nullptr, 1000, -7, 999), 1);
    EXPECT_EQ(library.error(), "gemm_amd_launch: size K is -7; a size is 0 or more");
    EXPECT_EQ(library.launch(nullptr, 0, 777, 999), 0);
    EXPECT_EQ(library.error(), "");
    for (int call = 0; call < 2; ++call) {
        EXPECT_EQ(library.launch(nullptr, 1000, 777, 999), 303);
        std::string const message = library.error();
        EXPECT_EQ(message.rfind("no HIP runtime: cannot load '/nonexistent/libamdhip64.so': ", 0),
                  0u)
            << message;
        EXPECT_NE(message.find("(install ROCm's HIP runtime, or set KILN_HIP_RUNTIME to the path "
                               "of libamdhip64.so)"),
                  std::string::npos)
            << message;
    }
    EXPECT_TRUE(fake().calls.empty());
}

// HIP counts a grid in workitems, 2^32 - 1 at most along an axis: 2^26 workgroups of 128 are
// refused with the grid, before HIP is asked to launch them.
TEST_F(ExportCapiOverHip, AGridHipCannotLaunchIsRefused) {
    GemmLibrary const library(goldenLibrary());
    ASSERT_TRUE(library.loaded());
    EXPECT_EQ(library.launch(nullptr, std::int64_t{1} << 32, 777, 999), 1);
    EXPECT_EQ(library.error(), "kiln_gemm: a grid of 67108864 x 16 x 1 workgroups of 128 x 1 x 1 "
                               "workitems has more than 2^32 - 1 workitems along x, the most HIP "
                               "launches");
    EXPECT_EQ(fake().count("hipModuleLaunchKernel"), 0);
}

// The runtime's own error, named and described by the runtime, with the kernel and the device; a
// load that failed is tried again at the next call.
TEST_F(ExportCapiOverHip, TheRuntimesErrorsAreItsOwn) {
    GemmLibrary const library(goldenLibrary());
    ASSERT_TRUE(library.loaded());
    fake().moduleLoadResult = 209;
    EXPECT_EQ(library.launch(nullptr, 1000, 777, 999), 209);
    EXPECT_EQ(library.error(),
              "hipModuleLoadData failed for kiln_gemm (gfx942): hipErrorNoBinaryForGpu (209: no "
              "kernel image is available for execution on the device) on device 0");
    fake().moduleLoadResult = 0;
    EXPECT_EQ(library.launch(nullptr, 1000, 777, 999), 0) << library.error();
    EXPECT_EQ(fake().launches.size(), 1u);
}

// A persistent kernel (2 workgroups per compute unit) on the MI300X's 304: its 256 tiles for 1000
// x 999 on 256 workgroups, and the 32000 of 128000 x 999 on 608.
TEST_F(ExportCapiOverHip, APersistentKernelFillsTheComputeUnits) {
    lowering::EmittedKernel kernel = kiln::test::exportedAmdGemm();
    kernel.workgroupsPerMultiprocessor = 2;
    std::string const codeObject = kiln::test::exportedCodeObject(kernel);
    cli::CapiOptions const options{.name = "gemm_persistent", .codeObject = &codeObject};
    Temporary const folder{temporaryPath("persistent")};
    ASSERT_TRUE(std::filesystem::create_directory(folder.path));
    std::ofstream(folder.path + "/gemm_persistent_capi.h")
        << cli::generateCapiHeader(kernel, options);
    std::ofstream(folder.path + "/gemm_persistent_capi.c")
        << cli::generateCapiSource(kernel, options);
    std::string log;
    std::string const built = folder.path + "/libgemm_persistent.so";
    ASSERT_TRUE(buildLibrary(folder.path + "/gemm_persistent_capi.c", built, log)) << log;

    GemmLibrary const library(built, "gemm_persistent");
    ASSERT_TRUE(library.loaded());
    EXPECT_EQ(library.launch(nullptr, 1000, 777, 999), 0) << library.error();
    EXPECT_EQ(library.launch(nullptr, 128000, 777, 999), 0) << library.error();
    ASSERT_EQ(fake().launches.size(), 2u);
    EXPECT_EQ(gridOf(fake().launches[0]), (std::vector<unsigned>{256, 1, 1}));
    EXPECT_EQ(gridOf(fake().launches[1]), (std::vector<unsigned>{608, 1, 1}));
}

} // namespace
} // namespace kiln::runtime
