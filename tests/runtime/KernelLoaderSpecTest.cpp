// KernelLoaderSpecTest.cpp: code locations, reading code from disk, PTX directives.
#include "kiln/runtime/KernelLoaderSpec.h"

#include "kiln/test/RuntimePtx.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

std::string const kPtxDir = std::string(KILN_SOURCE_DIR) + "/tests/runtime/ptx/";

TEST(KernelLoaderSpec, PtxInMemory) {
    KernelLoaderSpec const spec =
        KernelLoaderSpec::ptxInMemory(std::string(test::ptx::vector_add), "kiln_vadd");
    EXPECT_EQ(spec.format(), CodeFormat::Ptx);
    EXPECT_EQ(spec.kernelName(), "kiln_vadd");
    EXPECT_EQ(spec.describe(), "PTX in memory");
    EXPECT_EQ(*spec.image(), test::ptx::vector_add);
    EXPECT_FALSE(spec.manifest().has_value());
}

TEST(KernelLoaderSpec, PtxOnDiskIsReadAtLoad) {
    KernelLoaderSpec const spec = KernelLoaderSpec::ptxOnDisk(kPtxDir + "saxpy.ptx", "kiln_saxpy");
    EXPECT_EQ(spec.describe(), "PTX file '" + kPtxDir + "saxpy.ptx'");
    Expected<std::string> image = spec.image();
    ASSERT_TRUE(image.ok()) << image.error().message();
    EXPECT_NE(image->find(".visible .entry kiln_saxpy("), std::string::npos);
}

TEST(KernelLoaderSpec, AMissingFileIsNotFound) {
    KernelLoaderSpec const spec = KernelLoaderSpec::cubinOnDisk("/nonexistent/k.cubin", "k");
    EXPECT_EQ(spec.describe(), "cubin file '/nonexistent/k.cubin'");
    Expected<std::string> image = spec.image();
    ASSERT_FALSE(image.ok());
    EXPECT_EQ(image.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(image.error().message(),
              "cannot read the cubin file '/nonexistent/k.cubin' of kernel 'k'");
}

TEST(KernelLoaderSpec, CarriesAManifest) {
    Expected<KernelManifest> manifest = KernelManifest::fromFile(kPtxDir + "saxpy.json");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    KernelLoaderSpec const spec =
        KernelLoaderSpec::ptxInMemory(std::string(test::ptx::saxpy), "kiln_saxpy")
            .withManifest(*manifest);
    ASSERT_TRUE(spec.manifest().has_value());
    EXPECT_EQ(spec.manifest()->entry, "kiln_saxpy");
}

TEST(KernelLoaderSpec, ReadsPtxTargetsAndEntries) {
    EXPECT_EQ(ptxTarget(test::ptx::copy), "sm_80");
    EXPECT_EQ(ptxEntries(test::ptx::copy), (std::vector<std::string>{"kiln_copy"}));
    EXPECT_EQ(ptxEntries(test::ptx::reverse_shared),
              (std::vector<std::string>{"kiln_reverse_shared"}));
    // Comments are not code.
    std::string const ptx = "// .target sm_50\n/* .entry fake( */\n.version 8.0\n.target sm_90a\n"
                            ".visible .entry a()\n{ ret; }\n.entry b(.param .u32 n)\n{ ret; }\n";
    EXPECT_EQ(ptxTarget(ptx), "sm_90a");
    EXPECT_EQ(ptxEntries(ptx), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(ptxTarget("no directives"), "");
}

} // namespace
} // namespace kiln::runtime
