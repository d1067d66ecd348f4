// The header kiln export writes (ExportHeader.h), for a kernel made by hand so that it does not
// change with code generation: compared with tests/golden/export/ (KILN_UPDATE_GOLDEN=1 rewrites
// it; review the diff). export-sizes.sh compiles that golden header with the calls it must take
// and those it must refuse.
#include "ExportHeader.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/SourceJson.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::cli;

namespace {

std::string const kGolden = std::string(KILN_SOURCE_DIR) + "/tests/golden/export/";

void expectGolden(std::string const& name, std::string const& text) {
    std::string const path = kGolden + name;
    if (std::getenv("KILN_UPDATE_GOLDEN")) {
        std::ofstream(path) << text;
        return;
    }
    EXPECT_EQ(text, readTextFile(path)) << "run with KILN_UPDATE_GOLDEN=1 to update " << path;
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
    expectGolden("gemm.h", generateHeader(gemm(), {.name = "gemm", .origin = "a test"}));
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
