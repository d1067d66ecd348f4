// The C ABI kiln export writes (ExportCapi.h), for the GEMM made by hand (ExportedGemm.h): its
// header and source compared with tests/golden/export/ (KILN_UPDATE_GOLDEN=1 rewrites them;
// review the diff), the C type of each kind of argument, and what it refuses. export-capi.sh
// compiles the golden source with -Werror, and builds and calls the library of a real export.
#include "ExportCapi.h"

#include "../GoldenFile.h"
#include "ExportedGemm.h"
#include "kiln/graph/Error.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::cli;
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
    k = exportedGemm();
    k.target = "gfx942";
    try {
        generateCapiSource(k, gemmOptions());
        ADD_FAILURE() << "an AMD kernel got a C ABI";
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(), "kiln export writes a C ABI for CUDA targets only; gfx942 has "
                               "none yet");
    }
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
