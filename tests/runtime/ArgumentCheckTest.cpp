// ArgumentCheckTest.cpp: typed and run-time launch arguments against manifests and layouts,
// with the exact message of each mismatch.
#include "kiln/runtime/ArgumentCheck.h"

#include "kiln/runtime/KernelArguments.h"
#include "kiln/runtime/Stream.h"
#include "kiln/runtime/TypedKernel.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

KernelManifest saxpyManifest() {
    Expected<KernelManifest> manifest =
        KernelManifest::fromFile(std::string(KILN_SOURCE_DIR) + "/tests/runtime/ptx/saxpy.json");
    EXPECT_TRUE(manifest.ok()) << manifest.error().message();
    return *manifest;
}

template <class... Params>
std::string check(KernelManifest const& manifest) {
    auto const arguments = TypedKernel<Params...>::descriptors();
    Status status = checkArguments("kiln_saxpy", manifest, arguments);
    if (status.ok())
        return "ok";
    EXPECT_EQ(status.error().code(), ErrorCode::ArgumentMismatch);
    return status.error().message();
}

using In = DevicePointer<float const>;
using Out = DevicePointer<float>;

// What may be passed to a kernel is decided at compile time.
static_assert(KernelArgumentType<float const>);
static_assert(KernelArgumentType<std::uint64_t>);
static_assert(!KernelArgumentType<float*>);
static_assert(!KernelArgumentType<std::string>);
static_assert(!KernelArgumentType<bool>);
static_assert(!ArgumentFor<float, double>);      // narrowing
static_assert(!ArgumentFor<std::uint32_t, int>); // narrowing
static_assert(ArgumentFor<float, float&>);
static_assert(ArgumentFor<double, float>);            // widening is fine
static_assert(ArgumentFor<In, DeviceMemory<float>&>); // a buffer as a read-only pointer
static_assert(ArgumentFor<Out, DeviceMemory<float>&>);
static_assert(!ArgumentFor<Out, DeviceMemory<double>&>);
static_assert(!ArgumentFor<Out, In>); // no writing through a read-only pointer
static_assert(ArgumentFor<In, Out>);

TEST(ArgumentCheck, DescriptorsSayWhatTheKernelSees) {
    EXPECT_EQ(KernelArgument<Half>::descriptor(),
              (ArgumentDescriptor{ParameterKind::Value, ScalarType::F16, 2, 2}));
    EXPECT_EQ(KernelArgument<In>::descriptor(),
              (ArgumentDescriptor{ParameterKind::Pointer, ScalarType::F32, 8, 8}));
    EXPECT_EQ(KernelArgument<In>::descriptor().cppType(), "DevicePointer<float>");
    EXPECT_EQ(KernelArgument<std::int16_t>::descriptor().cppType(), "int16_t");
}

TEST(ArgumentCheck, TheRightSignaturePasses) {
    EXPECT_EQ((check<In, Out, float, std::uint32_t>(saxpyManifest())), "ok");
}

TEST(ArgumentCheck, ADoubleForAnF32IsRefusedByName) {
    EXPECT_EQ((check<In, Out, double, std::uint32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is f32 (4 bytes) but the launch passes "
              "a double (8 bytes)");
}

TEST(ArgumentCheck, SameSizeOtherTypeIsRefused) {
    EXPECT_EQ((check<In, Out, float, std::int32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 3 'n' is u32 (4 bytes) but the launch passes an "
              "int32_t (4 bytes)");
    EXPECT_EQ((check<In, Out, std::uint32_t, std::uint32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is f32 (4 bytes) but the launch passes "
              "a uint32_t (4 bytes)");
}

TEST(ArgumentCheck, PointerVersusValueIsRefused) {
    EXPECT_EQ((check<In, std::uint64_t, float, std::uint32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 1 'y' is a pointer to f32 but the launch passes a "
              "uint64_t (8 bytes)");
    EXPECT_EQ((check<In, Out, DevicePointer<float>, std::uint32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is f32 (4 bytes) but the launch passes "
              "DevicePointer<float> (a pointer to f32)");
}

TEST(ArgumentCheck, TheWrongElementTypeIsRefused) {
    EXPECT_EQ((check<DevicePointer<double const>, Out, float, std::uint32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 0 'x' is a pointer to f32 but the launch passes "
              "DevicePointer<double> (a pointer to f64)");
    EXPECT_EQ((check<In, DevicePointer<Half>, float, std::uint32_t>(saxpyManifest())),
              "kernel 'kiln_saxpy': parameter 1 'y' is a pointer to f32 but the launch passes "
              "DevicePointer<Half> (a pointer to f16)");
}

TEST(ArgumentCheck, TheWrongCountIsRefused) {
    EXPECT_EQ((check<In, Out, float>(saxpyManifest())),
              "kernel 'kiln_saxpy': the manifest has 4 parameters but the launch passes 3 "
              "arguments");
    EXPECT_EQ((check<>(saxpyManifest())),
              "kernel 'kiln_saxpy': the manifest has 4 parameters but the launch passes 0 "
              "arguments");
}

TEST(ArgumentCheck, AManifestWithPaddedOffsetsDisagreesWithTheLaunchLayout) {
    KernelManifest manifest = saxpyManifest();
    manifest.parameters[3].offset = 24; // padding the launch would not put there
    EXPECT_EQ((check<In, Out, float, std::uint32_t>(manifest)),
              "kernel 'kiln_saxpy': parameter 3 'n' is at offset 24 in the manifest but the "
              "launch puts it at 20");
}

TEST(ArgumentCheck, OffsetsFollowAlignment) {
    auto const arguments = TypedKernel<std::uint8_t, double, std::uint16_t, Out>::descriptors();
    EXPECT_EQ(argumentOffsets(arguments), (std::vector<std::size_t>{0, 8, 16, 24}));
}

TEST(ArgumentCheck, TheLoadedLayoutIsCheckedWithoutAManifest) {
    std::vector<ParameterLayout> const layout{{0, 8}, {8, 8}, {16, 4}, {20, 4}};
    auto const good = TypedKernel<In, Out, float, std::uint32_t>::descriptors();
    EXPECT_TRUE(checkArguments("kiln_saxpy", layout, good).ok());
    auto const bad = TypedKernel<In, Out, double, std::uint32_t>::descriptors();
    Status status = checkArguments("kiln_saxpy", layout, bad);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(),
              "kernel 'kiln_saxpy': parameter 2 is 4 bytes at offset 16 in the loaded code but "
              "the launch passes a double (8 bytes) at offset 16");
    auto const shorter = TypedKernel<In, Out>::descriptors();
    EXPECT_EQ(checkArguments("kiln_saxpy", layout, shorter).error().message(),
              "kernel 'kiln_saxpy': the loaded code has 4 parameters but the launch passes 2 "
              "arguments");
}

TEST(ArgumentCheck, TheManifestIsCheckedAgainstTheLoadedLayout) {
    KernelManifest const manifest = saxpyManifest();
    std::vector<ParameterLayout> layout{{0, 8}, {8, 8}, {16, 4}, {20, 4}};
    EXPECT_TRUE(checkManifestLayout("kiln_saxpy", manifest, layout).ok());
    layout[2] = {16, 8};
    EXPECT_EQ(checkManifestLayout("kiln_saxpy", manifest, layout).error().message(),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is 4 bytes at offset 16 in the manifest "
              "but 8 bytes at offset 16 in the loaded code");
    layout.pop_back();
    EXPECT_EQ(checkManifestLayout("kiln_saxpy", manifest, layout).error().message(),
              "kernel 'kiln_saxpy': the manifest has 4 parameters but the loaded code has 3 "
              "parameters");
}

TEST(ArgumentCheck, RunTimeArgumentsCarryTheirDescriptorsAndBytes) {
    KernelArguments arguments;
    arguments.add(In(0x1000)).add(Out(0x2000)).add(2.5f).add(std::uint32_t{7});
    EXPECT_TRUE(checkArguments("kiln_saxpy", saxpyManifest(), arguments.descriptors()).ok());
    ASSERT_EQ(arguments.size(), 4u);
    KernelArguments const copied = arguments; // a copy points at its own bytes
    void** const pointers = copied.pointers();
    EXPECT_NE(pointers[0], arguments.pointers()[0]);
    EXPECT_EQ(*static_cast<std::uint64_t*>(pointers[1]), 0x2000u);
    EXPECT_EQ(*static_cast<float*>(pointers[2]), 2.5f);
    EXPECT_EQ(*static_cast<std::uint32_t*>(pointers[3]), 7u);

    KernelArguments wrong;
    wrong.add(In(0x1000)).add(Out(0x2000)).add(2.5).add(std::uint32_t{7});
    EXPECT_EQ(checkArguments("kiln_saxpy", saxpyManifest(), wrong.descriptors()).error().message(),
              "kernel 'kiln_saxpy': parameter 2 'alpha' is f32 (4 bytes) but the launch passes "
              "a double (8 bytes)");
}

} // namespace
} // namespace kiln::runtime
