// The header kiln export writes (ExportHeader.h), for a kernel made by hand (ExportedGemm.h) so
// that it does not change with code generation: compared with tests/golden/export/
// (KILN_UPDATE_GOLDEN=1 rewrites it; review the diff), and the manifest's "checked".
// export-sizes.sh compiles that golden header with the calls it must take and those it must refuse.
#include "ExportHeader.h"

#include "../GoldenFile.h"
#include "ExportedGemm.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/SourceJson.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace kiln;
using namespace kiln::cli;

namespace {

void expectGolden(std::string const& name, std::string const& text) {
    kiln::test::expectGoldenFile("tests/golden/export/" + name, text);
}

lowering::EmittedKernel gemm() {
    return kiln::test::exportedGemm();
}

} // namespace

TEST(ExportHeader, SizesByNameInTheManifestsOrder) {
    expectGolden("gemm.h", generateHeader(gemm(), {.name = "gemm",
                                                   .origin = "a test",
                                                   .checked = "GPU against cuBLAS"}));
}

// The manifest and the header say how the exported point was checked; one that no check ran on
// says so.
TEST(ExportHeader, HowTheKernelWasChecked) {
    nlohmann::json const checked = nlohmann::json::parse(exportedManifest(gemm(), "interpreter"));
    EXPECT_EQ(checked.at("checked"), "interpreter");
    EXPECT_EQ(checked.at("entry"), "kiln_gemm"); // code generation's fields are all there
    EXPECT_EQ(checked.at("parameters").size(), 6u);
    EXPECT_EQ(
        nlohmann::json::parse(exportedManifest(gemm(), "unchecked (cost model)")).at("checked"),
        "unchecked (cost model)");

    std::string const gpu =
        generateHeader(gemm(), {.name = "gemm", .checked = "GPU against cuBLAS"});
    EXPECT_NE(gpu.find("\n// Checked: GPU against cuBLAS.\n// Needs only"), std::string::npos)
        << gpu;
    EXPECT_NE(gpu.find("\"checked\": \"GPU against cuBLAS\""), std::string::npos); // kManifest
    EXPECT_EQ(gpu.find("No run compared"), std::string::npos);
    std::string const model =
        generateHeader(gemm(), {.name = "gemm", .checked = "unchecked (cost model)"});
    EXPECT_NE(model.find("\n// Checked: unchecked (cost model).\n// No run compared this "
                         "kernel's results with a reference before it was exported:\n"),
              std::string::npos)
        << model;
    EXPECT_NE(model.find("\"checked\": \"unchecked (cost model)\""), std::string::npos);
}

// A size of another type than i64 is converted where launch() passes it to the kernel.
TEST(ExportHeader, ASizeOfAnotherTypeIsConvertedForTheKernel) {
    lowering::EmittedKernel k = gemm();
    k.parameters[4].type = "i32";
    std::string const header = generateHeader(k, {.name = "gemm"});
    EXPECT_NE(header.find("sizes.M.value, static_cast<std::int32_t>(sizes.K.value), "
                          "sizes.N.value);"),
              std::string::npos)
        << header;
}

TEST(ExportHeader, NamesThatWouldClashAreRefused) {
    lowering::EmittedKernel k = gemm();
    k.parameters[3].name = "by_name";
    k.grid = {"1"};
    EXPECT_THROW(generateHeader(k, {.name = "gemm"}), UserError);
    k = gemm();
    k.parameters[0].name = "sizes";
    EXPECT_THROW(generateHeader(k, {.name = "gemm"}), UserError);
    EXPECT_THROW(generateHeader(gemm(), {.name = "not a name"}), UserError);
}

// A TMA kernel's launch() takes the same arguments; it encodes the tensor maps on the stream's
// device from the pointers and sizes (a failure is the stream's) and launches with arguments
// checked against the manifest, tensor maps included.
TEST(ExportHeader, ATmaKernelMakesItsTensorMapsAtLaunch) {
    std::string const header = generateHeader(kiln::test::exportedTmaGemm(), {.name = "gemm"});
    EXPECT_NE(header.find("using Kernel = kiln::runtime::Kernel;"), std::string::npos) << header;
    EXPECT_NE(header.find("    auto const A_tma = detail::tensorMap(stream, "
                          "kiln::runtime::ScalarType::F16, A.address(),\n"
                          "                                      K, M, K * 2, 64, 128);\n"
                          "    if (!A_tma.ok())\n"
                          "        return stream.fail(A_tma.error().withContext(\"the tensor map "
                          "of A\"));"),
              std::string::npos)
        << header;
    EXPECT_NE(header.find(".add(sizes.N.value)\n        .add(A_tma.value())\n        "
                          ".add(B_tma.value());"),
              std::string::npos)
        << header;
    EXPECT_NE(header.find("Sizes const& sizes,\n                                     "
                          "kiln::runtime::DevicePointer<kiln::runtime::Half> A,"),
              std::string::npos)
        << header;
    EXPECT_EQ(header.find("DevicePointer<kiln::runtime::Half> A_tma"), std::string::npos);
}

// A persistent kernel (PERSISTENT=1): grid() still counts the tiles, and launch() launches the
// persistent grid of them on the stream's device (runtime/PersistentGrid.h).
TEST(ExportHeader, APersistentKernelLaunchesAsManyWorkgroupsAsTheDeviceHolds) {
    lowering::EmittedKernel k = gemm();
    k.schedule["PERSISTENT"] = 1;
    k.workgroupsPerMultiprocessor = 2;
    std::string const header = generateHeader(k, {.name = "gemm"});
    EXPECT_NE(header.find("#include \"kiln/runtime/PersistentGrid.h\""), std::string::npos);
    EXPECT_NE(header.find("inline constexpr std::uint32_t kWorkgroupsPerMultiprocessor = 2u;"),
              std::string::npos)
        << header;
    EXPECT_NE(header.find("return stream.launch(kernel, kiln::runtime::persistentGrid(\n"
                          "                             grid(sizes), kWorkgroupsPerMultiprocessor,"
                          "\n                             stream.device().description()."
                          "multiprocessorCount),"),
              std::string::npos)
        << header;
    EXPECT_NE(header.find("\"workgroups_per_multiprocessor\": 2"), std::string::npos);
    // A kernel that is not persistent launches its grid.
    std::string const plain = generateHeader(gemm(), {.name = "gemm"});
    EXPECT_EQ(plain.find("persistentGrid"), std::string::npos);
    EXPECT_NE(plain.find("return stream.launch(kernel, grid(sizes), kBlock"), std::string::npos);
}

// A kernel made for its sizes (kiln export --specialize; the manifest's "assumes") refuses other
// sizes in launch(), before anything is queued, with the stream's error: the kernel would trap.
// export-sizes.sh compiles the golden header.
TEST(ExportHeader, AKernelMadeForItsSizesRefusesOthers) {
    lowering::EmittedKernel k = gemm();
    k.assumptions = {"K == 512", "M == 4096", "N == 1024"};
    std::string const header = generateHeader(k, {.name = "gemm_sized"});
    expectGolden("gemm_sized.h", header);
    EXPECT_NE(header.find("    if (!(M == 4096))\n"
                          "        return stream.fail(kiln::runtime::Error(\n"
                          "            kiln::runtime::ErrorCode::InvalidArgument,\n"
                          "            \"gemm_sized: the kernel was made for sizes where M == 4096 "
                          "(kiln export --specialize)\"));"),
              std::string::npos)
        << header;
    EXPECT_EQ(generateHeader(gemm(), {.name = "gemm"}).find("made for sizes"), std::string::npos);
}
