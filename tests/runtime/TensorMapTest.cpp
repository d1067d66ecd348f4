// TensorMapTest.cpp: TMA tensor maps on the host: the copy engine's limits with the exact message
// of each, how a tensor map sits among a launch's arguments, and the check of a tensor-map
// argument against the manifest's box and swizzle.
#include "kiln/runtime/TensorMap.h"

#include "kiln/runtime/ArgumentCheck.h"
#include "kiln/runtime/KernelArguments.h"
#include "kiln/runtime/KernelAttributes.h"

#include <cstdint>
#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

/// A 4096 x 4096 f16 matrix (8 KiB rows) in boxes of 128 rows x 64 columns, swizzled 128B: the
/// A operand of Hopper GEMM kernels.
TensorMapLayout operand() {
    return TensorMapLayout::matrix(ScalarType::F16, 4096, 4096, 128, 64,
                                   TensorMapSwizzle::Bytes128);
}

std::string refusal(TensorMapLayout const& layout, std::uint64_t address = 0x7f0000000000) {
    Status status = layout.check(address);
    if (status.ok())
        return "ok";
    EXPECT_EQ(status.error().code(), ErrorCode::InvalidArgument);
    return status.error().message();
}

TEST(TensorMap, AMatrixIsItsColumnsInsideItsRows) {
    TensorMapLayout const layout = operand();
    EXPECT_EQ(layout.shape.rank, 2);
    EXPECT_EQ(layout.sizes[0], 4096u); // columns, contiguous
    EXPECT_EQ(layout.sizes[1], 4096u);
    EXPECT_EQ(layout.strides[1], 8192u);
    EXPECT_EQ(layout.shape.box[0], 64u);
    EXPECT_EQ(layout.shape.box[1], 128u);
    EXPECT_EQ(layout.shape.toString(), "f16 box [64, 128] swizzle 128B");
    EXPECT_EQ(refusal(layout), "ok");
    // Odd sizes are fine: the copy engine fills what lies outside with zeros.
    EXPECT_EQ(refusal(TensorMapLayout::matrix(ScalarType::F16, 1000, 999, 128, 64,
                                              TensorMapSwizzle::Bytes128, 2000)),
              "ok");
}

TEST(TensorMap, SwizzlesHaveNamesAndSpans) {
    for (TensorMapSwizzle s : {TensorMapSwizzle::None, TensorMapSwizzle::Bytes32,
                               TensorMapSwizzle::Bytes64, TensorMapSwizzle::Bytes128})
        EXPECT_EQ(parseTensorMapSwizzle(name(s)), s);
    EXPECT_EQ(swizzleBytes(TensorMapSwizzle::Bytes64), 64u);
    EXPECT_EQ(swizzleBytes(TensorMapSwizzle::None), 0u);
    EXPECT_FALSE(parseTensorMapSwizzle("16B").has_value());
}

TEST(TensorMap, LayoutsTheCopyEngineCannotDescribeAreRefused) {
    TensorMapLayout layout = operand();
    EXPECT_EQ(refusal(layout, 0x7f0000000008),
              "tensor map: the tensor's address 139637976727560 is not a multiple of 16 bytes");

    layout = operand();
    layout.shape.rank = 0;
    EXPECT_EQ(refusal(layout), "tensor map: a tensor map has 1 to 5 dimensions, not 0");
    layout.shape.rank = 6;
    EXPECT_EQ(refusal(layout), "tensor map: a tensor map has 1 to 5 dimensions, not 6");

    layout = operand();
    layout.sizes[1] = 0;
    EXPECT_EQ(refusal(layout),
              "tensor map: dimension 1 has 0 elements; the copy engine takes 1 to 2^32");
    layout.sizes[1] = (std::uint64_t{1} << 32) + 1;
    EXPECT_EQ(refusal(layout), "tensor map: dimension 1 has 4294967297 elements; the copy "
                               "engine takes 1 to 2^32");

    layout = operand();
    layout.shape.box[1] = 257;
    EXPECT_EQ(refusal(layout), "tensor map: dimension 1: a box of 257 elements; the copy engine "
                               "takes 1 to 256");

    layout = operand();
    layout.strides[1] = 8200;
    EXPECT_EQ(refusal(layout), "tensor map: dimension 1's stride of 8200 bytes is not a multiple "
                               "of 16 below 2^40");
    layout.strides[1] = std::uint64_t{1} << 40;
    EXPECT_EQ(refusal(layout), "tensor map: dimension 1's stride of 1099511627776 bytes is not a "
                               "multiple of 16 below 2^40");
    layout.strides[1] = 4096; // rows overlap
    EXPECT_EQ(refusal(layout), "tensor map: dimension 1's stride of 4096 bytes is smaller than "
                               "the 8192 bytes of the dimension inside it");

    layout = operand();
    layout.shape.box[0] = 4; // 8 bytes
    layout.shape.swizzle = TensorMapSwizzle::None;
    EXPECT_EQ(refusal(layout), "tensor map: the box's inner dimension is 8 bytes; the copy engine "
                               "moves multiples of 16");
    layout.shape.box[0] = 128; // 256 bytes
    layout.shape.swizzle = TensorMapSwizzle::Bytes128;
    EXPECT_EQ(refusal(layout), "tensor map: the box's inner dimension is 256 bytes, more than "
                               "the 128B swizzle's span");
}

TEST(TensorMap, AThreeDimensionalStrideMustStepOverTheWholeMatrixInside) {
    TensorMapLayout layout = operand();
    layout.shape.rank = 3;
    layout.shape.box[2] = 1;
    layout.sizes[2] = 8; // a batch of 8 matrices
    layout.strides[2] = 4096 * 8192;
    EXPECT_EQ(refusal(layout), "ok");
    layout.strides[2] = 4096 * 8192 - 16;
    EXPECT_EQ(refusal(layout), "tensor map: dimension 2's stride of 33554416 bytes is smaller "
                               "than the 33554432 bytes of the dimension inside it");
    // A stride whose product with the sizes passes 2^64 is not a wrapped small number.
    layout.sizes[1] = std::uint64_t{1} << 32;
    layout.strides[1] = (std::uint64_t{1} << 40) - 16;
    layout.strides[2] = (std::uint64_t{1} << 40) - 16;
    EXPECT_EQ(refusal(layout), "tensor map: dimension 2's stride of 1099511627760 bytes is "
                               "smaller than the 18446744073709551615 bytes of the dimension "
                               "inside it");
}

TEST(TensorMap, ATensorMapArgumentIs128BytesAlignedTo64) {
    TensorMap map;
    map.shape = operand().shape;
    for (std::size_t i = 0; i < kTensorMapBytes; ++i)
        map.bytes[i] = static_cast<std::byte>(i);
    KernelArguments arguments;
    arguments.add(std::uint32_t{7}).add(map).add(1.5f);
    ASSERT_EQ(arguments.size(), 3u);
    EXPECT_EQ(arguments.descriptors()[1].cppType(), "TensorMap");
    EXPECT_EQ(argumentOffsets(arguments.descriptors()), (std::vector<std::size_t>{0, 64, 192}));
    auto const* bytes = static_cast<unsigned char const*>(arguments.pointers()[1]);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes) % kTensorMapAlignment, 0u);
    EXPECT_EQ(bytes[0], 0);
    EXPECT_EQ(bytes[127], 127);
    EXPECT_EQ(*static_cast<std::uint32_t const*>(arguments.pointers()[0]), 7u);
    EXPECT_EQ(*static_cast<float const*>(arguments.pointers()[2]), 1.5f);
    KernelArguments const copy = arguments; // the copy points at its own bytes
    EXPECT_NE(copy.pointers()[1], arguments.pointers()[1]);
    EXPECT_EQ(static_cast<unsigned char const*>(copy.pointers()[1])[100], 100);
}

TEST(TensorMap, ArgumentsAreCheckedAgainstTheManifestsBoxAndSwizzle) {
    KernelManifest manifest;
    manifest.entry = "gemm";
    manifest.target = "sm_90a";
    manifest.parameters = {
        {"n", ScalarType::U32, ParameterKind::Value, 4, 0},
        {"A_map", ScalarType::F16, ParameterKind::TensorMap, 128, 64, operand().shape, "A"}};
    TensorMap map;
    map.shape = operand().shape;
    KernelArguments arguments;
    arguments.add(std::uint32_t{7}).add(map);
    EXPECT_TRUE(checkArguments("gemm", manifest, arguments.descriptors()).ok());

    map.shape.box[1] = 64;
    KernelArguments other;
    other.add(std::uint32_t{7}).add(map);
    Status status = checkArguments("gemm", manifest, other.descriptors());
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(),
              "kernel 'gemm': parameter 1 'A_map' is a tensor map of A (f16 box [64, 128] "
              "swizzle 128B) but the launch passes a tensor map (f16 box [64, 64] swizzle 128B)");

    KernelArguments pointer;
    pointer.add(std::uint32_t{7}).add(std::uint64_t{0});
    status = checkArguments("gemm", manifest, pointer.descriptors());
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(),
              "kernel 'gemm': parameter 1 'A_map' is a tensor map of A (f16 box [64, 128] "
              "swizzle 128B) but the launch passes a uint64_t (8 bytes)");
}

// What cuFuncGetParamInfo reports for kiln_tma_copy (a tensor map, a pointer, a u32) on an H100:
// the driver aligns the tensor map in its constant bank, whose base is 16 bytes past a multiple
// of 64, so the map sits at 48 and everything after it 48 bytes later than in the manifest.
TEST(TensorMap, TheDriverMayPlaceATensorMapPastTheManifestsOffset) {
    KernelManifest manifest;
    manifest.entry = "kiln_tma_copy";
    manifest.target = "sm_90";
    manifest.parameters = {
        {"map", ScalarType::F16, ParameterKind::TensorMap, 128, 0, operand().shape, "in"},
        {"out", ScalarType::U16, ParameterKind::Pointer, 8, 128},
        {"out_columns", ScalarType::U32, ParameterKind::Value, 4, 136}};
    std::vector<ParameterLayout> loaded{{48, 128}, {176, 8}, {184, 4}};
    EXPECT_TRUE(checkManifestLayout("kiln_tma_copy", manifest, loaded).ok());
    TensorMap map;
    map.shape = operand().shape;
    KernelArguments arguments;
    arguments.add(map).add(std::uint64_t{0}).add(std::uint32_t{7});
    EXPECT_TRUE(checkArguments("kiln_tma_copy", loaded, arguments.descriptors()).ok());

    // Past the alignment, or a later parameter that does not move with it, is a disagreement.
    loaded = {{64, 128}, {192, 8}, {200, 4}};
    EXPECT_EQ(checkManifestLayout("kiln_tma_copy", manifest, loaded).error().message(),
              "kernel 'kiln_tma_copy': parameter 0 'map' is 128 bytes at offset 0 in the manifest "
              "but 128 bytes at offset 64 in the loaded code");
    loaded = {{48, 128}, {128, 8}, {184, 4}};
    EXPECT_EQ(checkManifestLayout("kiln_tma_copy", manifest, loaded).error().message(),
              "kernel 'kiln_tma_copy': parameter 1 'out' is 8 bytes at offset 128 in the manifest "
              "but 8 bytes at offset 128 in the loaded code");
}

// A generated TMA GEMM (lowering/ptx/PtxPipeline.cpp) passes its tensor maps after six 8-byte
// parameters: the manifest puts the first at 64, the next multiple of 64, but the driver at 48
// (0x210 + 48 is a multiple of 64), before our offset; the next follows it, 16 bytes early too.
TEST(TensorMap, TheDriverMayPlaceATensorMapBeforeTheManifestsOffset) {
    KernelManifest manifest;
    manifest.entry = "kiln_gemm_f16";
    manifest.target = "sm_90a";
    for (std::size_t i = 0; i < 6; ++i)
        manifest.parameters.push_back(
            {"p" + std::to_string(i), ScalarType::I64, ParameterKind::Value, 8, 8 * i});
    manifest.parameters.push_back(
        {"A_tma", ScalarType::F16, ParameterKind::TensorMap, 128, 64, operand().shape, "A"});
    manifest.parameters.push_back(
        {"B_tma", ScalarType::F16, ParameterKind::TensorMap, 128, 192, operand().shape, "B"});
    std::vector<ParameterLayout> loaded{{0, 8},  {8, 8},  {16, 8},   {24, 8},
                                        {32, 8}, {40, 8}, {48, 128}, {176, 128}};
    EXPECT_TRUE(checkManifestLayout("kiln_gemm_f16", manifest, loaded).ok());
    TensorMap map;
    map.shape = operand().shape;
    KernelArguments arguments;
    for (std::int64_t i = 0; i < 6; ++i)
        arguments.add(i);
    arguments.add(map).add(map);
    EXPECT_TRUE(checkArguments("kiln_gemm_f16", loaded, arguments.descriptors()).ok());
    // Before the previous parameter ends, or its alignment or more past it, is a disagreement.
    loaded[6] = {40, 128};
    EXPECT_FALSE(checkManifestLayout("kiln_gemm_f16", manifest, loaded).ok());
    loaded[6] = {48, 128};
    loaded[7] = {240, 128};
    EXPECT_FALSE(checkManifestLayout("kiln_gemm_f16", manifest, loaded).ok());
}

} // namespace
} // namespace kiln::runtime
