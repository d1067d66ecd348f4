// KernelTest.cpp: whole kernels: golden text, code objects for every target, the disassembly
// read back, the metadata note against the manifest, register counts against the target.
#include "AmdTestSupport.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/KernelManifest.h"

#include <gtest/gtest.h>
#include <regex>

namespace kiln::amdgcn {
namespace {

test::TestKernel axpy(std::string const& target) {
    return test::elementwiseKernel(
        target, "kiln_axpy_" + target, DataType::F32,
        [](ExprPtr x, ExprPtr y) { return literal(kiln::Value::real(2.5)) * x + y; });
}

TEST(Kernel, GoldenAssembly) {
    for (std::string const& target : test::kTargets) {
        SCOPED_TRACE(target);
        test::expectGolden("axpy." + target + ".s", axpy(target).assembly);
    }
    test::expectGolden("sum4.gfx942.cost.s",
                       test::elementwiseKernel(
                           "gfx942", "kiln_sum4", DataType::F16,
                           [](ExprPtr a, ExprPtr b) { return a + b; }, 4, SchedulerKind::Cost)
                           .assembly);
}

TEST(Kernel, ManifestIsTheRuntimeFormat) {
    test::TestKernel const k = axpy("gfx90a");
    auto manifest = runtime::KernelManifest::fromJson(k.manifest, "manifest");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->entry, "kiln_axpy_gfx90a");
    EXPECT_EQ(manifest->target, "gfx90a");
    ASSERT_EQ(manifest->parameters.size(), 3u);
    EXPECT_EQ(manifest->parameters[2].name, "Out");
    EXPECT_EQ(manifest->parameters[2].offset, 16u);
    EXPECT_EQ(manifest->parameters[2].kind, runtime::ParameterKind::Pointer);
    EXPECT_EQ(manifest->block->x, 64u);
}

/// "name offset size kind" for each argument of the metadata note, in order.
std::vector<std::string> noteArguments(std::string const& note) {
    std::vector<std::string> out;
    std::regex const arg(
        "- (?:\\.address_space:\\s+\\w+\\s+)?\\.name:\\s+(\\w+)\\s+\\.offset:\\s+(\\d+)\\s+"
        "\\.size:\\s+(\\d+)\\s+\\.value_kind:\\s+(\\w+)");
    for (std::sregex_iterator it(note.begin(), note.end(), arg), end; it != end; ++it)
        out.push_back((*it)[1].str() + " " + (*it)[2].str() + " " + (*it)[3].str() + " " +
                      (*it)[4].str());
    return out;
}

TEST(Kernel, CodeObjectsForEveryTarget) {
    for (std::string const& target : test::kTargets) {
        SCOPED_TRACE(target);
        test::TestKernel const k = axpy(target);
        std::string why;
        std::string const code = test::assemble(k.assembly, target, why);
        if (code.empty())
            GTEST_SKIP() << why;
        EXPECT_EQ(code.substr(0, 4), "\x7f"
                                     "ELF");
        std::vector<std::string> const back = test::disassemble(code, target, why);
        if (back.empty())
            GTEST_SKIP() << why;
        test::expectSameInstructions(back, test::instructionsOf(k.assembly));

        std::string const note = test::metadataNote(code, why);
        auto manifest = runtime::KernelManifest::fromJson(k.manifest, "manifest");
        ASSERT_TRUE(manifest.ok());
        std::vector<std::string> expected;
        for (auto const& p : manifest->parameters)
            expected.push_back(
                p.name + " " + std::to_string(p.offset) + " " + std::to_string(p.size) + " " +
                (p.kind == runtime::ParameterKind::Pointer ? "global_buffer" : "by_value"));
        EXPECT_EQ(noteArguments(note), expected) << note;
        EXPECT_NE(note.find(".kernarg_segment_size: 24"), std::string::npos) << note;
        Target const t = Target::named(target);
        EXPECT_NE(note.find(".wavefront_size: " + std::to_string(t.waveSize())), std::string::npos);
        EXPECT_LE(k.vgprs, t.vgprs());
        EXPECT_LE(k.sgprs, t.sgprs());
    }
}

TEST(Kernel, AssemblerErrorsCarryTheWholeLog) {
    std::string const bad = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n.text\nk:\n"
                            "  v_add_f32 v0, v1\n  s_bogus s0\n  s_endpgm\n";
    auto assembler = runtime::assemblerFor("gfx90a");
    if (!assembler.ok())
        GTEST_SKIP() << assembler.error().message();
    auto code = (*assembler)->assemble(bad, "gfx90a", "bad.s");
    ASSERT_FALSE(code.ok());
    EXPECT_EQ(code.error().code(), runtime::ErrorCode::JitFailed);
    std::string const& m = code.error().message();
    EXPECT_NE(m.find("bad.s:4:"), std::string::npos) << m;
    EXPECT_NE(m.find("bad.s:5:"), std::string::npos) << m;
    EXPECT_NE(m.find("s_bogus"), std::string::npos) << m;
}

TEST(Kernel, BothAssemblersAgreeOnGfx90a) {
    auto comgr = runtime::makeAssembler("comgr");
    auto llvm = runtime::makeAssembler("llvm");
    if (!comgr.ok() || !llvm.ok())
        GTEST_SKIP() << "needs both assemblers";
    test::TestKernel const k = axpy("gfx90a");
    auto a = (*comgr)->assemble(k.assembly, "gfx90a");
    auto b = (*llvm)->assemble(k.assembly, "gfx90a");
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    std::string why;
    EXPECT_EQ(test::disassemble(*a, "gfx90a", why), test::disassemble(*b, "gfx90a", why));
    EXPECT_FALSE((*comgr)->supports("gfx1100") &&
                 (*comgr)->version().find("2.4") != std::string::npos);
    EXPECT_TRUE((*llvm)->supports("gfx942"));
}

} // namespace
} // namespace kiln::amdgcn
