// The header kiln export writes (ExportHeader.h), for a kernel made by hand so that it does not
// change with code generation: compared with tests/golden/export/ (KILN_UPDATE_GOLDEN=1 rewrites
// it; review the diff), and the manifest's "checked". export-sizes.sh compiles that golden header
// with the calls it must take and those it must refuse.
#include "ExportHeader.h"

#include "../GoldenFile.h"
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

lowering::ParameterInfo parameter(std::string name, std::string type, bool pointer,
                                  std::size_t offset, std::string meaning) {
    return {.name = std::move(name),
            .type = std::move(type),
            .pointer = pointer,
            .size = 8,
            .offset = offset,
            .meaning = std::move(meaning)};
}

// A GEMM as code generation describes it: the sizes M, K, N in the manifest's order, which is
// not alphabetical.
lowering::EmittedKernel gemm() {
    lowering::EmittedKernel k;
    k.entry = "kiln_gemm";
    k.target = "sm_90a";
    k.code = "// the PTX of kiln_gemm\n";
    k.parameters = {
        parameter("A", "f16", true, 0, "tensor A"),  parameter("B", "f16", true, 8, "tensor B"),
        parameter("D", "f16", true, 16, "tensor D"), parameter("M", "i64", false, 24, "size M"),
        parameter("K", "i64", false, 32, "size K"),  parameter("N", "i64", false, 40, "size N")};
    k.block[0] = 128;
    k.grid = {"ceildiv(M, 64)", "ceildiv(N, 64)", "1"};
    k.sharedBytes = 16384;
    k.schedule = {{"MT_K", 32}, {"MT_M", 64}, {"MT_N", 64}};
    k.graphHash = "0123456789abcdef";
    return k;
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
