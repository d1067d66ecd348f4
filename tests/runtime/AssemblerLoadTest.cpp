// AssemblerLoadTest.cpp: the AMDGCN assemblers, loaded at run time: the LLVM MC plugin the build
// made, and the exact error of each way loading an assembler fails (a missing file, a library
// that is not the plugin, a plugin of another ABI version, no Comgr library, neither assembler).
#include "FakeHipFixture.h"
#include "ScopedEnvironment.h"
#include "kiln/runtime/Assembler.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

constexpr char const* kMissingPlugin = "/nonexistent/libkiln_llvm_assembler.so";
constexpr char const* kMissingComgr = "/nonexistent/libamd_comgr.so.2";

std::string errorOf(std::string_view assembler) {
    Expected<std::unique_ptr<Assembler>> made = makeAssembler(assembler);
    return made.ok() ? "(it loaded)" : made.error().message();
}

#ifdef KILN_HAS_LLVM_ASSEMBLER_PLUGIN

TEST(AssemblerLoad, ThePluginTheBuildMadeAssembles) {
    ScopedEnvironment noOverride(kLlvmAssemblerVariable, nullptr);
    Expected<std::unique_ptr<Assembler>> llvm = makeAssembler("llvm");
    ASSERT_TRUE(llvm.ok()) << llvm.error().message();
    EXPECT_EQ((*llvm)->name(), "llvm");
    EXPECT_EQ((*llvm)->version().rfind("LLVM 16.", 0), 0u) << (*llvm)->version();
    EXPECT_TRUE((*llvm)->supports("gfx90a"));
    EXPECT_TRUE((*llvm)->supports("gfx942")); // as gfx940, retargeted
    EXPECT_FALSE((*llvm)->supports("gfx4242"));

    std::string const kernel = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n.text\n"
                               "s_endpgm\n";
    Expected<std::string> code = (*llvm)->assemble(kernel, "gfx90a", "empty.s");
    ASSERT_TRUE(code.ok()) << code.error().message();
    EXPECT_EQ(code->substr(0, 4), "\x7f"
                                  "ELF");

    // The plugin's errors cross its C ABI whole, with their kinds.
    Expected<std::string> bad = (*llvm)->assemble("s_bogus s0\n", "gfx90a", "bad.s");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code(), ErrorCode::JitFailed);
    EXPECT_EQ(bad.error().message().rfind("assembling bad.s for gfx90a with LLVM 16.", 0), 0u)
        << bad.error().message();
    EXPECT_NE(bad.error().message().find("bad.s:1:1: error: invalid instruction\ns_bogus s0\n^"),
              std::string::npos)
        << bad.error().message();
    Expected<std::string> unknown = (*llvm)->assemble(kernel, "gfx4242", "empty.s");
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().code(), ErrorCode::Unsupported);
    EXPECT_EQ(unknown.error().message(), (*llvm)->version() + " does not know the target gfx4242");
}

#endif

TEST(AssemblerLoad, AMissingPluginFileIsNamed) {
    ScopedEnvironment plugin(kLlvmAssemblerVariable, kMissingPlugin);
    Expected<std::unique_ptr<Assembler>> llvm = makeAssembler("llvm");
    ASSERT_FALSE(llvm.ok());
    EXPECT_EQ(llvm.error().code(), ErrorCode::Unsupported);
    EXPECT_EQ(llvm.error().message(),
              "cannot load the LLVM MC assembler plugin '/nonexistent/libkiln_llvm_assembler.so': "
              "/nonexistent/libkiln_llvm_assembler.so: cannot open shared object file: No such "
              "file or directory");
}

TEST(AssemblerLoad, ALibraryThatIsNotThePluginIsRefused) {
    // The fake libamdhip64 loads, but has no entry point of the plugin.
    ScopedEnvironment plugin(kLlvmAssemblerVariable, kFakeHipLibrary);
    EXPECT_EQ(errorOf("llvm"), "'" + std::string(kFakeHipLibrary) +
                                   "' is not Kiln's LLVM MC assembler plugin: it has no "
                                   "kiln_llvm_assembler_entry");
}

TEST(AssemblerLoad, APluginOfAnotherAbiVersionIsRefused) {
    ScopedEnvironment plugin(kLlvmAssemblerVariable, KILN_FAKE_LLVM_ASSEMBLER);
    EXPECT_EQ(errorOf("llvm"),
              "'" + std::string(KILN_FAKE_LLVM_ASSEMBLER) +
                  "' is an LLVM MC assembler plugin of ABI version 2, this Kiln needs version 1 "
                  "(build the plugin from the same Kiln)");
}

TEST(AssemblerLoad, AMissingComgrIsNoDriver) {
    ScopedEnvironment comgr(kComgrLibraryVariable, kMissingComgr);
    Expected<std::unique_ptr<Assembler>> made = makeAssembler("comgr");
    ASSERT_FALSE(made.ok());
    if (made.error().message().rfind("the Comgr assembler is not in this build", 0) == 0)
        GTEST_SKIP() << made.error().message();
    EXPECT_EQ(made.error().code(), ErrorCode::NoDriver);
    EXPECT_EQ(made.error().message(),
              "no AMD Comgr: /nonexistent/libamd_comgr.so.2: cannot open shared object file: No "
              "such file or directory (install libamd-comgr2, or set KILN_COMGR_LIBRARY to its "
              "path)");
}

TEST(AssemblerLoad, ALibraryThatIsNotComgrIsNoDriver) {
    ScopedEnvironment comgr(kComgrLibraryVariable, "libm.so.6");
    std::string const message = errorOf("comgr");
    if (message.rfind("the Comgr assembler is not in this build", 0) == 0)
        GTEST_SKIP() << message;
    EXPECT_EQ(message,
              "no usable AMD Comgr: 'libm.so.6' lacks amd_comgr_get_version, "
              "amd_comgr_get_isa_count, amd_comgr_get_isa_name, amd_comgr_status_string, "
              "amd_comgr_create_data_set, amd_comgr_destroy_data_set, amd_comgr_data_set_add, "
              "amd_comgr_create_data, amd_comgr_release_data, amd_comgr_set_data, "
              "amd_comgr_set_data_name, amd_comgr_get_data, amd_comgr_create_action_info, "
              "amd_comgr_destroy_action_info, amd_comgr_action_info_set_isa_name, "
              "amd_comgr_action_info_set_logging, amd_comgr_do_action, "
              "amd_comgr_action_data_count, amd_comgr_action_data_get_data");
}

TEST(AssemblerLoad, WithoutComgrGfx90aFallsThroughToLlvm) {
    ScopedEnvironment comgr(kComgrLibraryVariable, kMissingComgr);
    ScopedEnvironment noOverride(kLlvmAssemblerVariable, nullptr);
    if (!makeAssembler("llvm").ok())
        GTEST_SKIP() << errorOf("llvm");
    Expected<std::unique_ptr<Assembler>> assembler = assemblerFor("gfx90a");
    ASSERT_TRUE(assembler.ok()) << assembler.error().message();
    EXPECT_EQ((*assembler)->name(), "llvm");
}

TEST(AssemblerLoad, WithNeitherAssemblerEachSaysWhy) {
    ScopedEnvironment comgr(kComgrLibraryVariable, kMissingComgr);
    ScopedEnvironment plugin(kLlvmAssemblerVariable, kMissingPlugin);
    Expected<std::unique_ptr<Assembler>> assembler = assemblerFor("gfx90a");
    ASSERT_FALSE(assembler.ok());
    EXPECT_EQ(assembler.error().code(), ErrorCode::Unsupported);
    EXPECT_EQ(assembler.error().message(),
              "no assembler for gfx90a; " + errorOf("comgr") + "; " + errorOf("llvm"));
    EXPECT_NE(assembler.error().message().find(kMissingPlugin), std::string::npos);
}

} // namespace
} // namespace kiln::runtime
