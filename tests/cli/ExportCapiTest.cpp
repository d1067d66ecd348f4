// The C ABI kiln export writes (ExportCapi.h), for the GEMM made by hand (ExportedGemm.h), for
// sm_90a over the CUDA driver and for gfx942 over the HIP runtime: its header and source compared
// with tests/golden/export/ (KILN_UPDATE_GOLDEN=1 rewrites them; review the diff), the C type of
// each kind of argument, an AMD kernel's arguments laid out as its code object says, and what it
// refuses. export-capi.sh compiles the CUDA golden source with -Werror, and builds and calls the
// library of a real export; ExportCapiHipTest.cpp does so for the AMD one over a fake HIP.
#include "ExportCapi.h"

#include "../GoldenFile.h"
#include "ExportedGemm.h"
#include "kiln/graph/Error.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::cli;
using kiln::test::exportedAmdGemm;
using kiln::test::exportedCodeObject;
using kiln::test::exportedGemm;
using kiln::test::exportedParameter;
using kiln::test::exportedTmaGemm;

namespace {

// The GEMM as kiln export describes it: A and B read, D written, all row-major.
CapiOptions gemmOptions() {
    return {.name = "gemm",
            .origin = "a test",
            .checked = "GPU against cuBLAS",
            .tensors = {{"A", {.layout = "[M, K], row-major", .written = false}},
                        {"B", {.layout = "[K, N], row-major", .written = false}},
                        {"D", {.layout = "[M, N], row-major", .written = true}}}};
}

// The same for gfx942, named gemm_amd (so that its golden files stand beside the CUDA ones),
// with `codeObject`.
CapiOptions amdOptions(std::string const& codeObject) {
    CapiOptions options = gemmOptions();
    options.name = "gemm_amd";
    options.codeObject = &codeObject;
    return options;
}

bool contains(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(ExportCapi, GemmHeaderAndSource) {
    kiln::test::expectGoldenFile("tests/golden/export/gemm_capi.h",
                                 generateCapiHeader(exportedGemm(), gemmOptions()));
    kiln::test::expectGoldenFile("tests/golden/export/gemm_capi.c",
                                 generateCapiSource(exportedGemm(), gemmOptions()));
}

// A cubin is embedded instead of the PTX, byte for byte, with the NUL after it.
TEST(ExportCapi, EmbedsTheCubinWhenThereIsOne) {
    std::string const cubin("\x7f"
                            "ELF\x00\xff",
                            6);
    CapiOptions options = gemmOptions();
    options.cubin = &cubin;
    std::string const source = generateCapiSource(exportedGemm(), options);
    EXPECT_TRUE(contains(source, "/* The cubin ptxas made for sm_90a (6 bytes; the PTX is beside "
                                 "this file),\n * and a NUL. */\nstatic const unsigned char "
                                 "kiln_code[] = {\n    0x7f, 0x45, 0x4c, 0x46, 0x00, 0xff, "
                                 "0x00,\n};"))
        << source;
    EXPECT_FALSE(contains(source, "0x2f, 0x2f")); // "//", the PTX's first bytes
}

// Sizes keep their integer type (only a signed one is checked for a negative value), scalars
// theirs, an f16 scalar travels as its bits; a tensor the Command does not describe is void*.
TEST(ExportCapi, EachParameterAsItsCType) {
    lowering::EmittedKernel k = exportedGemm();
    k.parameters[4].type = "u32"; // K
    k.parameters.push_back(exportedParameter("alpha", "f32", false, 48, "scalar alpha"));
    k.parameters.push_back(exportedParameter("beta", "f16", false, 52, "scalar beta"));
    k.parameters.push_back(exportedParameter("E", "bf16", true, 56, "tensor E"));
    k.grid = {"min(M, 4)", "max(N, K)", "1"};
    std::string const header = generateCapiHeader(k, gemmOptions());
    EXPECT_TRUE(contains(header, "int gemm_launch(void* stream, const void* A, const void* B, "
                                 "void* D, int64_t M, uint32_t K, int64_t N, float alpha, "
                                 "uint16_t beta, void* E);"))
        << header;
    EXPECT_TRUE(contains(header, " *   beta   scalar beta (f16, its 16 bits)\n")) << header;
    EXPECT_TRUE(contains(header, " *   alpha  scalar alpha (f32)\n")) << header;
    EXPECT_TRUE(contains(header, " *   E      device pointer to the tensor E: bf16\n")) << header;
    EXPECT_TRUE(contains(header, "with (min(M, 4)) x (max(N, K)) x (1) workgroups")) << header;
    std::string const source = generateCapiSource(k, gemmOptions());
    EXPECT_TRUE(contains(source, "if (M < 0)")) << source;
    EXPECT_FALSE(contains(source, "if (K < 0)")) << source;
    // Only the functions the grid calls are defined: clang warns of unused ones.
    EXPECT_TRUE(contains(source, "static int64_t min(int64_t a, int64_t b) { return a < b ? a : "
                                 "b; }\nstatic int64_t max("))
        << source;
    EXPECT_FALSE(contains(source, "ceildiv")) << source;
    EXPECT_TRUE(contains(source, "void* kiln_arguments[] = {&kiln_A, &kiln_B, &kiln_D, &M, &K, "
                                 "&N, &alpha, &beta, &kiln_E};"))
        << source;
}

TEST(ExportCapi, RefusesWhatItCannotDeclare) {
    lowering::EmittedKernel k = exportedGemm();
    k.parameters[0].name = "stream";
    EXPECT_THROW(generateCapiHeader(k, gemmOptions()), UserError);
    CapiOptions badName = gemmOptions();
    badName.name = "not a name";
    EXPECT_THROW(generateCapiSource(exportedGemm(), badName), UserError);
}

// NAME_launch takes the same arguments as for a kernel without TMA; it makes the tensor maps
// from the pointers and sizes (K x M halves, rows 2 K bytes apart, boxes of 128 x 64) and passes
// them after the sizes.
TEST(ExportCapi, ATmaKernelMakesItsTensorMapsFromThePointers) {
    lowering::EmittedKernel const k = exportedTmaGemm();
    std::string const header = generateCapiHeader(k, gemmOptions());
    EXPECT_TRUE(contains(header, "int gemm_launch(void* stream, const void* A, const void* B, "
                                 "void* D, int64_t M, int64_t K, int64_t N);"))
        << header;
    EXPECT_TRUE(contains(header, "The kernel loads the tiles of A and B with the copy engine"))
        << header;
    std::string const source = generateCapiSource(k, gemmOptions());
    EXPECT_TRUE(contains(source, "kiln_encode_tensor_map(&kiln_A_tma, \"the tensor A\", 6, A, K,\n"
                                 "                                                   M, K * 2, "
                                 "64u, 128u)"))
        << source;
    EXPECT_TRUE(contains(source, "kiln_encode_tensor_map(&kiln_B_tma, \"the tensor B\", 6, B, N,\n"
                                 "                                                   K, N * 2, "
                                 "64u, 64u)"))
        << source;
    EXPECT_TRUE(contains(source, "void* kiln_arguments[] = {&kiln_A, &kiln_B, &kiln_D, &M, &K, "
                                 "&N, &kiln_A_tma, &kiln_B_tma};"))
        << source;
    // Without tensor maps none of it is written.
    EXPECT_FALSE(
        contains(generateCapiSource(exportedGemm(), gemmOptions()), "kiln_encode_tensor_map"));
}

// A staged epilogue (EPILOGUE=1) stores D with the copy engine: D's tensor map is made from the
// pointer the caller writes through, as A's and B's are from theirs (N x M halves, rows 2 N
// bytes apart, boxes of 64 x 128), and passed after them.
TEST(ExportCapi, AStagedEpilogueMakesDsTensorMapFromItsPointer) {
    lowering::EmittedKernel k = exportedTmaGemm();
    k.schedule["EPILOGUE"] = 1;
    lowering::ParameterInfo d =
        kiln::test::exportedParameter("D_tma", "f16", false, 320, "tensor map of D");
    d.size = 128;
    d.tensorMap = lowering::TensorMapInfo{
        .tensor = "D", .box = {64, 128}, .sizes = {"N", "M"}, .strides = {"N"}};
    k.parameters.push_back(d);
    std::string const source = generateCapiSource(k, gemmOptions());
    EXPECT_TRUE(contains(source, "kiln_encode_tensor_map(&kiln_D_tma, \"the tensor D\", 6, D, N,\n"
                                 "                                                   M, N * 2, "
                                 "64u, 128u)"))
        << source;
    EXPECT_TRUE(contains(source, "void* kiln_arguments[] = {&kiln_A, &kiln_B, &kiln_D, &M, &K, "
                                 "&N, &kiln_A_tma, &kiln_B_tma, &kiln_D_tma};"))
        << source;
}

// A persistent kernel tells the launcher its workgroups per multiprocessor, which launches
// min(tiles, multiprocessors x that) along x (kiln_persistent_grid); others pass 0.
TEST(ExportCapi, APersistentKernelAsksTheDeviceForItsMultiprocessors) {
    lowering::EmittedKernel k = exportedGemm();
    k.workgroupsPerMultiprocessor = 1;
    EXPECT_TRUE(contains(generateCapiSource(k, gemmOptions()),
                         "return kiln_launch(stream, kiln_grid, 1u, kiln_arguments);"));
    EXPECT_TRUE(contains(generateCapiSource(exportedGemm(), gemmOptions()),
                         "return kiln_launch(stream, kiln_grid, 0u, kiln_arguments);"));
}

TEST(ExportCapi, ATensorMapItCannotEncodeIsRefused) {
    lowering::EmittedKernel k = exportedTmaGemm();
    k.parameters.back().tensorMap->box = {64, 64, 2};
    EXPECT_THROW(generateCapiSource(k, gemmOptions()), UserError);
    k = exportedTmaGemm();
    k.parameters.back().tensorMap->sizes = {"N", "Q"};
    EXPECT_THROW(generateCapiSource(k, gemmOptions()), UserError);
}

// The GEMM for gfx942: the launcher over the HIP runtime, its code object embedded, its
// arguments packed where the code object's metadata puts them.
TEST(ExportCapi, AmdGemmHeaderAndSource) {
    std::string const codeObject = exportedCodeObject(exportedAmdGemm());
    kiln::test::expectGoldenFile("tests/golden/export/gemm_amd_capi.h",
                                 generateCapiHeader(exportedAmdGemm(), amdOptions(codeObject)));
    kiln::test::expectGoldenFile("tests/golden/export/gemm_amd_capi.c",
                                 generateCapiSource(exportedAmdGemm(), amdOptions(codeObject)));
}

// NAME_launch is the same function for both drivers: the same signature, the same size checks
// (with the runtime's code), the same grid; only the pointers' type and the launcher differ.
TEST(ExportCapi, BothDriversTakeTheSameArguments) {
    std::string const codeObject = exportedCodeObject(exportedAmdGemm());
    std::string const amd = generateCapiHeader(exportedAmdGemm(), amdOptions(codeObject));
    std::string const cuda = generateCapiHeader(exportedGemm(), gemmOptions());
    std::string const declaration = "_launch(void* stream, const void* A, const void* B, void* D, "
                                    "int64_t M, int64_t K, int64_t N);";
    EXPECT_TRUE(contains(amd, "int gemm_amd" + declaration)) << amd;
    EXPECT_TRUE(contains(cuda, "int gemm" + declaration)) << cuda;
    std::string const source = generateCapiSource(exportedAmdGemm(), amdOptions(codeObject));
    EXPECT_TRUE(contains(source, "return kiln_fail(hipErrorInvalidValue, \"gemm_amd_launch: size "
                                 "K is %lld; a size is 0 or more\","))
        << source;
    EXPECT_TRUE(contains(source, "const int64_t kiln_grid[3] = {ceildiv(M, 64), ceildiv(N, 64), "
                                 "1};"))
        << source;
    EXPECT_TRUE(contains(source, "hipDeviceptr_t kiln_A = (hipDeviceptr_t)(uintptr_t)A;"))
        << source;
    EXPECT_FALSE(contains(source, "CUresult")) << source;
}

// The layout is the code object's: a scalar of 4 bytes and one of 2 after the sizes, the end of
// the last one the bytes packed, whatever the hidden arguments after them.
TEST(ExportCapi, AnAmdKernelPacksItsArgumentsWhereItsCodeObjectSays) {
    lowering::EmittedKernel k = exportedAmdGemm();
    k.parameters.push_back(exportedParameter("alpha", "f32", false, 48, "scalar alpha"));
    k.parameters.back().size = 4;
    k.parameters.push_back(exportedParameter("beta", "f16", false, 52, "scalar beta"));
    k.parameters.back().size = 2;
    std::string const codeObject = exportedCodeObject(k);
    std::string const source = generateCapiSource(k, amdOptions(codeObject));
    EXPECT_TRUE(contains(source, "#define KILN_ARGUMENTS 8\n#define KILN_KERNARG_BYTES 54\n"))
        << source;
    EXPECT_TRUE(contains(source, "    {40u, 8u}, /* N */\n    {48u, 4u}, /* alpha */\n    {52u, "
                                 "2u}, /* beta */\n};"))
        << source;
    EXPECT_TRUE(contains(source, "void* kiln_arguments[] = {&kiln_A, &kiln_B, &kiln_D, &M, &K, "
                                 "&N, &alpha, &beta};"))
        << source;
}

// A persistent kernel asks HIP for the device's compute units, as the CUDA one asks the driver.
TEST(ExportCapi, APersistentAmdKernelAsksTheDeviceForItsComputeUnits) {
    lowering::EmittedKernel k = exportedAmdGemm();
    k.workgroupsPerMultiprocessor = 2;
    std::string const codeObject = exportedCodeObject(k);
    std::string const source = generateCapiSource(k, amdOptions(codeObject));
    EXPECT_TRUE(contains(source, "return kiln_launch(stream, kiln_grid, 2u, kiln_arguments);"))
        << source;
    EXPECT_TRUE(contains(source, "hipDeviceAttributeMultiprocessorCount, device")) << source;
}

// An AMD kernel needs its code object; a tensor map is the CUDA driver's; a code object whose
// metadata disagrees with the manifest is a bug in Kiln, which made both.
TEST(ExportCapi, WhatAnAmdKernelsCApiRefuses) {
    try {
        generateCapiSource(exportedAmdGemm(), gemmOptions());
        ADD_FAILURE() << "an AMD kernel got a C ABI without its code object";
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(), "the C ABI of an AMD kernel embeds its code object; kiln_gemm for "
                               "gfx942 has none");
    }
    lowering::EmittedKernel mapped = exportedTmaGemm();
    mapped.target = "gfx942";
    std::string const mappedCode = exportedCodeObject(mapped);
    EXPECT_THROW(generateCapiHeader(mapped, amdOptions(mappedCode)), UserError);

    lowering::EmittedKernel moved = exportedAmdGemm();
    moved.parameters[5].offset = 48; // N, where the manifest below does not have it
    std::string const movedCode = exportedCodeObject(moved);
    try {
        generateCapiSource(exportedAmdGemm(), amdOptions(movedCode));
        ADD_FAILURE() << "a code object that disagrees with the manifest was exported";
    } catch (InternalError const& e) {
        EXPECT_TRUE(contains(e.what(), "the C ABI of kiln_gemm for gfx942: kernel 'kiln_gemm': "
                                       "parameter 5 'N' is 8 bytes at offset 40 in the manifest "
                                       "but 8 bytes at offset 48 in the code object's metadata"))
            << e.what();
    }
    std::string const notElf = "not a code object";
    EXPECT_THROW(generateCapiSource(exportedAmdGemm(), amdOptions(notElf)), InternalError);
}

// A kernel made for its sizes (kiln export --specialize; the manifest's "assumes") refuses other
// sizes before anything is queued (the kernel would trap, ending the context), after the check
// of a negative size; the message is an argument, not a format. export-capi.sh calls one.
TEST(ExportCapi, AKernelMadeForItsSizesRefusesOthers) {
    lowering::EmittedKernel k = exportedGemm();
    k.assumptions = {"K == 512", "M == 4096"};
    std::string const source = generateCapiSource(k, gemmOptions());
    std::size_t const refusal = source.find(
        "    if (!(M == 4096))\n"
        "        return kiln_fail(CUDA_ERROR_INVALID_VALUE, \"%s\", \"gemm_launch: the kernel was "
        "made for sizes where M == 4096 (kiln export --specialize); export it for these "
        "sizes\");\n");
    EXPECT_NE(refusal, std::string::npos) << source;
    EXPECT_LT(source.find("a size is 0 or more"), refusal);
    EXPECT_EQ(generateCapiSource(exportedGemm(), gemmOptions()).find("made for sizes"),
              std::string::npos);
}
