// HipPlatformTest.cpp: the HIP platform on a machine without an AMD GPU.
//
// A missing or unusable libamdhip64 is NoDriver with a message; a fake libamdhip64 (FakeHip.cpp)
// stands in for ROCm so that the platform's own code runs: no device is NoDevice, one device is
// described, a code object assembled by Kiln (the golden tests/golden/amdgcn/axpy_vec1.gfx942.s,
// written by Kiln's AMDGCN backend) is checked against its manifest through its metadata note, and
// a launch hands HIP the packed argument buffer. Tests that need the code object skip, saying why,
// when this build has no AMDGCN assembler.
#include "FakeHipFixture.h"
#include "ScopedEnvironment.h"
#include "kiln/runtime/ArchOverlay.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Stream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>

namespace kiln::runtime {
namespace {

std::string const kFake = kFakeHipLibrary;

TEST(HipPlatformLoad, AMissingRuntimeIsNoDriver) {
    PlatformOptions options;
    options.driverLibrary = "libkiln-no-such-hip.so";
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("hip", options);
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(platform.error().message(),
              "no HIP runtime: cannot load 'libkiln-no-such-hip.so': libkiln-no-such-hip.so: "
              "cannot open shared object file: No such file or directory (install ROCm's HIP "
              "runtime, or set KILN_HIP_RUNTIME to the path of libamdhip64.so)");
}

TEST(HipPlatformLoad, TheEnvironmentVariableNamesTheRuntime) {
    ScopedEnvironment runtime(kHipRuntimeVariable, "/nonexistent/libamdhip64.so");
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("hip");
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(platform.error().message().rfind(
                  "no HIP runtime: cannot load '/nonexistent/libamdhip64.so': ", 0),
              0u)
        << platform.error().message();
}

TEST(HipPlatformLoad, ALibraryThatIsNotHipIsNoDriver) {
    // libm loads but has none of HIP's entry points.
    PlatformOptions options;
    options.driverLibrary = "libm.so.6";
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("hip", options);
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(platform.error().message(),
              "no usable HIP runtime: 'libm.so.6' lacks hipInit, hipGetDeviceCount or "
              "hipGetErrorName (it is not libamdhip64)");
}

TEST(HipPlatformLoad, TheDefaultRuntimeLoadsOrSaysWhereItLooked) {
    ScopedEnvironment runtime(kHipRuntimeVariable, nullptr);
    ScopedEnvironment rocm("ROCM_PATH", nullptr);
    Expected<std::shared_ptr<Platform>> platform = loadPlatform("hip");
    if (platform.ok()) { // a machine with ROCm and an AMD GPU
        EXPECT_EQ((*platform)->name(), "hip");
        EXPECT_GT((*platform)->deviceCount(), 0);
        EXPECT_EQ((*platform)->version().rfind("HIP ", 0), 0u);
        return;
    }
    if (platform.error().code() == ErrorCode::NoDevice) { // ROCm without a GPU
        EXPECT_EQ(platform.error().message().rfind("no AMD device: ", 0), 0u)
            << platform.error().message();
        return;
    }
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    if (dlopen("/opt/rocm/lib/libamdhip64.so", RTLD_NOW | RTLD_NOLOAD) == nullptr &&
        platform.error().message().find("cannot load libamdhip64.so") != std::string::npos) {
        EXPECT_EQ(platform.error().message(),
                  "no HIP runtime: cannot load libamdhip64.so (nor libamdhip64.so.7, "
                  "libamdhip64.so.6, libamdhip64.so.5, /opt/rocm/lib/libamdhip64.so): "
                  "libamdhip64.so: cannot open shared object file: No such file or directory "
                  "(install ROCm's HIP runtime, or set KILN_HIP_RUNTIME to the path of "
                  "libamdhip64.so)");
    }
}

TEST_F(FakeHip, NoDeviceIsNoDevice) {
    fake().deviceCount = 0;
    Expected<std::shared_ptr<Platform>> platform = load();
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDevice);
    EXPECT_EQ(platform.error().message(),
              "no AMD device: the HIP runtime (HIP 6.3.42134, " + kFake + ") sees none");
    // hipInit comes first, at once, as the HIP driver API requires.
    EXPECT_EQ(fake().calls,
              (std::vector<std::string>{"hipInit", "hipRuntimeGetVersion", "hipGetDeviceCount"}));
}

TEST_F(FakeHip, HipInitFindingNoDeviceIsNoDevice) {
    fake().initResult = 100; // hipErrorNoDevice
    Expected<std::shared_ptr<Platform>> platform = load();
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDevice);
    EXPECT_EQ(platform.error().message(),
              "no AMD device: hipInit failed: hipErrorNoDevice (no ROCm-capable device is "
              "detected) (the HIP runtime '" +
                  kFake + "')");
}

TEST_F(FakeHip, HipInitRefusingTheDriverIsNoDriver) {
    fake().initResult = 35; // hipErrorInsufficientDriver: the kernel driver is older than HIP
    Expected<std::shared_ptr<Platform>> platform = load();
    ASSERT_FALSE(platform.ok());
    EXPECT_EQ(platform.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(platform.error().message(),
              "no usable HIP runtime: hipInit failed: hipErrorInsufficientDriver (driver version "
              "is insufficient for runtime version) (the HIP runtime '" +
                  kFake + "')");
}

TEST_F(FakeHip, ADeviceIsDescribedFromItsAttributes) {
    Expected<std::shared_ptr<Platform>> platform = load();
    ASSERT_TRUE(platform.ok()) << platform.error().message();
    EXPECT_EQ((*platform)->name(), "hip");
    EXPECT_EQ((*platform)->version(), "HIP 6.3.42134 (runtime library " + kFake + ")");
    EXPECT_EQ((*platform)->deviceCount(), 1);
    Expected<std::shared_ptr<Device>> missing = (*platform)->device(1);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::NoDevice);
    EXPECT_EQ(missing.error().message(), "no HIP device 1: the runtime sees 1 device(s)");

    Expected<std::shared_ptr<Device>> device = (*platform)->device(0);
    ASSERT_TRUE(device.ok()) << device.error().message();
    DeviceDescription const& d = (*device)->description();
    EXPECT_EQ(d.platform, "hip");
    EXPECT_EQ(d.name, "AMD Instinct MI300X");
    EXPECT_EQ(d.target, "gfx942"); // gcnArchName "gfx942:sramecc+:xnack-" without its features
    EXPECT_EQ(d.summary(), "device 0 'AMD Instinct MI300X' (gfx942)");
    EXPECT_EQ(d.computeMajor, 9);
    EXPECT_EQ(d.computeMinor, 4);
    EXPECT_EQ(d.driverVersion, 60342134);
    EXPECT_EQ(d.multiprocessorCount, 304);
    EXPECT_EQ(d.warpSize, 64);
    EXPECT_EQ(d.l2Bytes, 4194304);
    EXPECT_EQ(d.totalMemoryBytes, std::int64_t{192} << 30);
    EXPECT_EQ(d.clockKHz, 2100000);
    EXPECT_EQ(d.maxThreadsPerBlock, 1024);
    EXPECT_EQ(d.maxBlock, (Dim3{1024, 1024, 1024}));
    EXPECT_EQ(d.maxGrid, (Dim3{2147483647, 65536, 65536}));
    EXPECT_EQ(d.registersPerMultiprocessor, 131072);
    EXPECT_EQ(d.sharedBytesPerBlock, 65536);
    EXPECT_EQ(d.sharedBytesPerBlockOptin, 65536); // HIP answers 0: there is no opt-in on AMD
    EXPECT_EQ(d.sharedBytesPerMultiprocessor, 65536);

    // The description is platform-neutral: the architecture database takes it as it is.
    Expected<arch::Arch> live = liveArch(d);
    ASSERT_TRUE(live.ok()) << live.error().message();
    EXPECT_EQ(live->name(), "gfx942");
    arch::Fact const* units = live->findFact("multiprocessor_count");
    ASSERT_NE(units, nullptr);
    EXPECT_EQ(units->origin, arch::FactOrigin::Device);
    EXPECT_EQ(units->source, "hip device 0 'AMD Instinct MI300X' (gfx942): multiprocessor count");
}

TEST_F(FakeHip, DevicePropertiesInAnUnknownLayoutAreAnError) {
    fake().scrambledProperties = true; // the fields are not where ROCm 6 puts them
    Expected<std::shared_ptr<Platform>> platform = load();
    ASSERT_TRUE(platform.ok()) << platform.error().message();
    Expected<std::shared_ptr<Device>> device = (*platform)->device(0);
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.error().code(), ErrorCode::DriverError);
    EXPECT_EQ(device.error().message(),
              "cannot read the processor of HIP device 0: hipGetDevicePropertiesR0600 (HIP "
              "6.3.42134) wrote a structure whose fields are not where the layout of ROCm 6 puts "
              "them (name '' for 'AMD Instinct MI300X', compute 0.0 for 9.4, gcnArchName '')");
}

TEST_F(FakeHip, MemoryStreamsAndEventsGoThroughHip) {
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    {
        Expected<DeviceMemory<float>> a = DeviceMemory<float>::allocate(device, 4);
        Expected<DeviceMemory<float>> b = DeviceMemory<float>::allocate(device, 4);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ(fake().liveAllocations, 2);
        std::vector<float> const host = {1, 2, 3, 4};
        ASSERT_TRUE(a->write(host).ok());

        Expected<Stream> stream = Stream::create(device);
        ASSERT_TRUE(stream.ok()) << stream.error().message();
        Expected<Event> start = Event::create(device);
        Expected<Event> stop = Event::create(device);
        ASSERT_TRUE(start.ok() && stop.ok());
        std::vector<float> back(4);
        stream->record(*start).copy(*b, *a).copy(std::span<float>(back), *b).record(*stop);
        ASSERT_TRUE(stream->synchronize().ok());
        EXPECT_EQ(back, host);
        ASSERT_TRUE(stop->synchronize().ok());
        Expected<float> elapsed = stop->millisecondsSince(*start);
        ASSERT_TRUE(elapsed.ok()) << elapsed.error().message();
        EXPECT_FLOAT_EQ(*elapsed, 1.5f); // the fake's clock moves 1.5 ms per record

        stream->fill(*b, 7.0f);
        ASSERT_TRUE(stream->synchronize().ok());
        EXPECT_EQ(*b->read(), (std::vector<float>{7, 7, 7, 7}));
        EXPECT_TRUE(device->synchronize().ok());
        EXPECT_EQ(fake().streamFlags, (std::vector<unsigned>{1u})); // hipStreamNonBlocking
    }
    EXPECT_EQ(fake().liveAllocations, 0); // DeviceMemory freed them with hipFree
    EXPECT_EQ(fake().count("hipStreamDestroy"), 1);
    EXPECT_EQ(fake().count("hipEventDestroy"), 2);
}

TEST_F(FakeHip, AKilnCodeObjectLoadsAndALaunchPassesThePackedArguments) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    using Axpy = TypedKernel<DevicePointer<float const>, DevicePointer<float>, float, std::int64_t>;
    Expected<Axpy> axpy = Axpy::load(
        device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy").withManifest(manifest()));
    ASSERT_TRUE(axpy.ok()) << axpy.error().message();
    ASSERT_EQ(fake().loadedImages.size(), 1u);
    EXPECT_EQ(fake().loadedImages[0], *code); // the code object as it is, all of it

    Kernel const& kernel = axpy->kernel();
    // The layout comes from the metadata note, so arguments are checked against the code itself.
    ASSERT_TRUE(kernel.parameterLayout().has_value());
    EXPECT_EQ(*kernel.parameterLayout(),
              (std::vector<ParameterLayout>{{0, 8}, {8, 8}, {16, 4}, {24, 8}}));
    EXPECT_EQ(kernel.attributes().maxThreadsPerBlock, 256);
    EXPECT_EQ(kernel.attributes().registers, 20);
    EXPECT_EQ(kernel.attributes().maxDynamicSharedBytes, 65536u);

    Expected<DeviceMemory<float>> x = DeviceMemory<float>::allocate(device, 1000);
    Expected<DeviceMemory<float>> y = DeviceMemory<float>::allocate(device, 1000);
    ASSERT_TRUE(x.ok() && y.ok());
    Expected<Stream> stream = Stream::create(device);
    ASSERT_TRUE(stream.ok());
    stream->launch(*axpy, {4}, {256}, 0, *x, *y, 2.5f, std::int64_t{1000});
    ASSERT_TRUE(stream->synchronize().ok());

    ASSERT_EQ(fake().launches.size(), 1u);
    test::FakeHipLaunch const& launch = fake().launches[0];
    EXPECT_EQ(launch.kernel, "kiln_axpy");
    EXPECT_EQ(std::vector<unsigned>(launch.grid, launch.grid + 3),
              (std::vector<unsigned>{4, 1, 1}));
    EXPECT_EQ(std::vector<unsigned>(launch.block, launch.block + 3),
              (std::vector<unsigned>{256, 1, 1}));
    EXPECT_EQ(launch.sharedBytes, 0u);
    EXPECT_FALSE(launch.kernelParams);
    // X at 0, Y at 8, alpha at 16, four bytes of padding, N at 24: the metadata's offsets.
    ASSERT_EQ(launch.argumentBytes, 32u);
    ASSERT_EQ(launch.arguments.size(), 32u);
    std::uint64_t xAddress = 0;
    std::uint64_t yAddress = 0;
    float alpha = 0;
    std::uint32_t padding = 1;
    std::int64_t n = 0;
    std::memcpy(&xAddress, launch.arguments.data() + 0, 8);
    std::memcpy(&yAddress, launch.arguments.data() + 8, 8);
    std::memcpy(&alpha, launch.arguments.data() + 16, 4);
    std::memcpy(&padding, launch.arguments.data() + 20, 4);
    std::memcpy(&n, launch.arguments.data() + 24, 8);
    EXPECT_EQ(xAddress, x->pointer().address());
    EXPECT_EQ(yAddress, y->pointer().address());
    EXPECT_EQ(alpha, 2.5f);
    EXPECT_EQ(padding, 0u);
    EXPECT_EQ(n, 1000);

    // An untyped launch builds the same buffer from KernelArguments.
    KernelArguments arguments;
    arguments.add(DevicePointer<float const>(x->pointer().address()))
        .add(*y)
        .add(-1.0f)
        .add(std::int64_t{7});
    stream->launch(kernel, {{8}, {256}, 0}, arguments);
    ASSERT_TRUE(stream->synchronize().ok());
    ASSERT_EQ(fake().launches.size(), 2u);
    std::memcpy(&alpha, fake().launches[1].arguments.data() + 16, 4);
    std::memcpy(&n, fake().launches[1].arguments.data() + 24, 8);
    EXPECT_EQ(alpha, -1.0f);
    EXPECT_EQ(n, 7);
}

TEST_F(FakeHip, AManifestThatDisagreesWithTheMetadataNoteIsRefusedAtLoad) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    auto loadWith = [&](KernelManifest const& changed) {
        return Kernel::load(
            device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy").withManifest(changed));
    };

    KernelManifest moved = manifest();
    moved.parameters[2].offset = 20; // alpha, still aligned and clear of N
    Expected<Kernel> kernel = loadWith(moved);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::ArgumentMismatch);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_axpy': parameter 2 'alpha' is 4 bytes at offset 20 in the manifest "
              "but 4 bytes at offset 16 in the code object's metadata");

    KernelManifest pointer = manifest();
    pointer.parameters[3].kind = ParameterKind::Pointer; // N, 8 bytes either way
    kernel = loadWith(pointer);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_axpy': parameter 3 'N' is a pointer in the manifest but by_value in "
              "the code object's metadata");

    KernelManifest shorter = manifest();
    shorter.parameters.pop_back();
    kernel = loadWith(shorter);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().message(), "kernel 'kiln_axpy': the manifest has 3 parameters but "
                                        "the code object's metadata has 4 arguments");

    KernelManifest renamed = manifest();
    renamed.entry = "kiln_saxpy";
    kernel = Kernel::load(
        device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_saxpy").withManifest(renamed));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(kernel.error().message(),
              "the manifest describes kernel 'kiln_saxpy' but code object in memory does not "
              "define it; its kernels are: kiln_axpy");
    EXPECT_EQ(fake().count("hipModuleLoadData"), 0); // refused before HIP saw the code
}

TEST_F(FakeHip, TypedParametersAreCheckedAgainstTheManifestAndTheNote) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    using Wrong =
        TypedKernel<DevicePointer<float const>, DevicePointer<float>, double, std::int64_t>;
    Expected<Wrong> wrong = Wrong::load(
        device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy").withManifest(manifest()));
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().code(), ErrorCode::ArgumentMismatch);
    EXPECT_EQ(wrong.error().message(), "kernel 'kiln_axpy': parameter 2 'alpha' is f32 (4 bytes) "
                                       "but the launch passes a double (8 bytes)");

    // Without a manifest the note's layout still catches it.
    wrong = Wrong::load(device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy"));
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().message(),
              "kernel 'kiln_axpy': parameter 2 is 4 bytes at offset 16 in the loaded code but the "
              "launch passes a double (8 bytes) at offset 16");
}

TEST_F(FakeHip, CodeForAnotherProcessorIsRefused) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    fake().name = "AMD Instinct MI210";
    fake().gcnArchName = "gfx90a:sramecc+:xnack-";
    fake().deviceAttributes[61] = 0; // compute 9.0
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    EXPECT_EQ(device->description().target, "gfx90a");
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::JitFailed);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_axpy' (code object in memory) is code for gfx942, which does not run "
              "on device 0 'AMD Instinct MI210' (gfx90a) (assemble it for gfx90a)");
}

TEST_F(FakeHip, HipRefusingTheCodeNamesItAndTheDevice) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    fake().moduleLoadResult = 209; // hipErrorNoBinaryForGpu
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::JitFailed);
    EXPECT_EQ(kernel.error().message(),
              "hipModuleLoadData failed: hipErrorNoBinaryForGpu (no kernel image is available for "
              "execution on the device): kernel 'kiln_axpy' (code object in memory), code for "
              "gfx942, on device 0 'AMD Instinct MI300X' (gfx942) (gfx942:sramecc+:xnack-)");
}

TEST_F(FakeHip, AKernelTheCodeObjectLacksIsNotFound) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpby"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_axpby' is not in code object in memory; its kernels are: kiln_axpy");
}

TEST_F(FakeHip, DynamicLdsBeyondWhatTheKernelIsLeftIsRefused) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    fake().functionAttributes[8] = 32768; // the kernel may use 32 KB of dynamic LDS
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::codeObjectInMemory(*code, "kiln_axpy"));
    ASSERT_TRUE(kernel.ok()) << kernel.error().message();
    Status status = kernel->prepareLaunch({{4}, {256}, 40000});
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code(), ErrorCode::LaunchOutOfLimits);
    EXPECT_EQ(status.error().message(),
              "kernel 'kiln_axpy' on device 0 'AMD Instinct MI300X' (gfx942): 40000 bytes of "
              "dynamic LDS, but the device leaves the kernel 32768 (AMD GPUs have no larger "
              "opt-in)");
    EXPECT_TRUE(kernel->prepareLaunch({{4}, {256}, 32768}).ok());
}

TEST_F(FakeHip, NvidiaCodeIsRefused) {
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::ptxInMemory(".version 8.0\n", "kiln_saxpy"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::Unsupported);
    EXPECT_EQ(kernel.error().message(),
              "kernel 'kiln_saxpy' (PTX in memory) is NVIDIA code, which the HIP platform cannot "
              "load on device 0 'AMD Instinct MI300X' (gfx942) (load an AMD code object: "
              "KernelLoaderSpec::codeObjectInMemory or codeObjectOnDisk)");
}

TEST_F(FakeHip, ADamagedCodeObjectIsRefusedBeforeHipSeesIt) {
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    std::string const notElf(100, '\0');
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::codeObjectInMemory(notElf, "kiln_axpy"));
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(kernel.error().message(),
              "the code of kernel 'kiln_axpy' (code object in memory) is not an ELF file (it does "
              "not start with 0x7f 'ELF'): an AMD code object is the ELF an AMDGPU assembler or "
              "linker writes");
    EXPECT_EQ(fake().count("hipModuleLoadData"), 0);
}

TEST_F(FakeHip, ACodeObjectFileIsReadAtLoad) {
    std::optional<std::string> const code = axpy();
    if (!code)
        GTEST_SKIP() << "no AMDGCN assembler for gfx942: " << why_;
    std::shared_ptr<Device> device = openDevice();
    ASSERT_TRUE(device);
    std::string const path = ::testing::TempDir() + "kiln_axpy.gfx942.hsaco";
    std::ofstream(path, std::ios::binary) << *code;
    Expected<Kernel> kernel =
        Kernel::load(device, KernelLoaderSpec::codeObjectOnDisk(path, "kiln_axpy"));
    ASSERT_TRUE(kernel.ok()) << kernel.error().message();
    EXPECT_EQ(kernel->name(), "kiln_axpy");
    std::remove(path.c_str());

    Expected<Kernel> missing = Kernel::load(
        device, KernelLoaderSpec::codeObjectOnDisk("/nonexistent/k.hsaco", "kiln_axpy"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(missing.error().message(),
              "cannot read the code object file '/nonexistent/k.hsaco' of kernel 'kiln_axpy'");
}

} // namespace
} // namespace kiln::runtime
