// CodeObjectTest.cpp: reading AMD code objects: the processor, the metadata note's kernels and
// arguments, damaged files, and manifests checked against the note.
//
// Most cases build their code object by hand (an ELF header, one note section, a MessagePack
// map), so they run with or without an assembler; the last reads a kernel Kiln generated and
// assembled, and skips, saying why, where this build has no AMDGCN assembler.
#include "kiln/runtime/CodeObject.h"

#include "HandMadeCodeObject.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/KernelLoaderSpec.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <initializer_list>
#include <random>
#include <sstream>

namespace kiln::runtime {
namespace {

using test::codeObject;
using test::metadataNote;
using test::note;
using test::Pack;
using test::put;

/// A note like a HIP compiler's: a target id, a kernel with hidden arguments, keys Kiln ignores
/// holding a boolean, an array, a float and a negative number.
std::string hipccLikeMetadata() {
    Pack p;
    p.map(3);
    p.text("amdhsa.version").array(2).number(1).number(2);
    p.entry("amdhsa.target", "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
    p.text("amdhsa.kernels").array(1).map(9);
    p.entry(".name", "scale").entry(".symbol", "scale.kd").entry(".kernarg_segment_size", 272);
    p.entry(".wavefront_size", 64).entry(".max_flat_workgroup_size", 1024);
    p.text(".uniform_work_group_size").raw({0xc3}); // true
    p.text(".reqd_workgroup_size").array(3).number(64).number(1).number(1);
    p.text(".kiln_unknown")
        .array(2)
        .raw({0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0})
        .raw({0xfd}); // 1.5, -3
    p.text(".args").array(3);
    p.map(5).entry(".name", "out").entry(".offset", 0).entry(".size", 8);
    p.entry(".value_kind", "global_buffer").entry(".address_space", "global");
    p.map(4).entry(".name", "factor").entry(".offset", 8).entry(".size", 4);
    p.entry(".value_kind", "by_value");
    p.map(3).entry(".offset", 16).entry(".size", 8).entry(".value_kind", "hidden_global_offset_x");
    return p.bytes();
}

KernelManifest scaleManifest() {
    KernelManifest manifest;
    manifest.entry = "scale";
    manifest.target = "gfx90a";
    manifest.parameters = {{"out", ScalarType::F32, ParameterKind::Pointer, 8, 0},
                           {"factor", ScalarType::F32, ParameterKind::Value, 4, 8}};
    return manifest;
}

TEST(CodeObject, ReadsTheKernelsOfTheMetadataNote) {
    Expected<CodeObjectInfo> info =
        readCodeObject(codeObject(metadataNote(hipccLikeMetadata())), "scale.hsaco");
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_EQ(info->machine, 0x3fu);
    EXPECT_EQ(info->targetId, "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
    EXPECT_EQ(info->processor, "gfx90a");
    EXPECT_EQ(info->metadataVersion, (std::vector<int>{1, 2}));
    ASSERT_EQ(info->kernels.size(), 1u);
    EXPECT_EQ(info->kernelNames(), "scale");
    CodeObjectKernel const* scale = info->kernel("scale");
    ASSERT_NE(scale, nullptr);
    EXPECT_EQ(info->kernel("other"), nullptr);
    EXPECT_EQ(scale->symbol, "scale.kd");
    EXPECT_EQ(scale->kernargSegmentSize, 272u);
    EXPECT_EQ(scale->wavefrontSize, 64);
    EXPECT_EQ(scale->maxFlatWorkgroupSize, 1024);
    ASSERT_EQ(scale->arguments.size(), 3u);
    EXPECT_EQ(scale->arguments[0].name, "out");
    EXPECT_EQ(scale->arguments[0].addressSpace, "global");
    EXPECT_EQ(scale->arguments[1].valueKind, "by_value");
    EXPECT_TRUE(scale->arguments[2].hidden());
    // What a launch passes: the hidden argument is HIP's to fill.
    EXPECT_EQ(scale->explicitArguments().size(), 2u);
    EXPECT_EQ(scale->parameterLayout(), (std::vector<ParameterLayout>{{0, 8}, {8, 4}}));
    EXPECT_EQ(scale->explicitArgumentBytes(), 12u);
    EXPECT_TRUE(checkManifestAgainstCodeObject(scaleManifest(), *scale).ok());
}

TEST(CodeObject, TheMachineNamesTheProcessorWhenTheNoteDoesNot) {
    Pack p;
    p.map(1).text("amdhsa.kernels").array(1).map(1).entry(".name", "empty");
    Expected<CodeObjectInfo> info = readCodeObject(codeObject(metadataNote(p.bytes()), 0x41), "k");
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_EQ(info->targetId, "");
    EXPECT_EQ(info->processor, "gfx1100");
    ASSERT_EQ(info->kernels.size(), 1u);
    EXPECT_TRUE(info->kernels[0].arguments.empty());
    EXPECT_EQ(amdgpuProcessor(0x3f), "gfx90a");
    EXPECT_EQ(amdgpuProcessor(0x4c), "gfx942");
    EXPECT_EQ(amdgpuProcessor(0x999), "");
}

/// The error message of reading `image`, or "ok".
std::string readError(std::string const& image) {
    Expected<CodeObjectInfo> info = readCodeObject(image, "k.hsaco");
    if (info.ok())
        return "ok";
    EXPECT_EQ(info.error().code(), ErrorCode::InvalidArgument);
    return info.error().message();
}

TEST(CodeObject, DamagedFilesAreErrorsSayingWhat) {
    EXPECT_EQ(readError("0123456789"),
              "k.hsaco is 10 bytes long, too short for an ELF header (64 bytes): not a code "
              "object");
    EXPECT_EQ(readError(std::string(100, 'x')),
              "k.hsaco is not an ELF file (it does not start with 0x7f 'ELF'): an AMD code "
              "object is the ELF an AMDGPU assembler or linker writes");
    std::string const good = codeObject(metadataNote(hipccLikeMetadata()));
    std::string x86 = good;
    put<std::uint16_t>(x86, 18, 62); // EM_X86_64
    EXPECT_EQ(readError(x86), "k.hsaco is an ELF for machine 62, not an AMDGPU code object "
                              "(e_machine 224)");
    EXPECT_EQ(readError(good.substr(0, good.size() - 1)),
              "k.hsaco: its section header table (2 entries of 64 bytes at byte " +
                  std::to_string(good.size() - 128) + ") does not fit in its " +
                  std::to_string(good.size() - 1) + " bytes");
    EXPECT_EQ(readError(codeObject(note("GNU", 1, "abcd"))),
              "k.hsaco has no AMDGPU metadata note (owner \"AMDGPU\", type NT_AMDGPU_METADATA)");
    EXPECT_EQ(readError(codeObject(note("AMD", 10, "---\n"))),
              "k.hsaco has no AMDGPU metadata note (owner \"AMDGPU\", type NT_AMDGPU_METADATA): "
              "it is a code object of version 2, whose YAML metadata HIP no longer loads; "
              "assemble it for code object version 4 or 5");
    std::string cut = note("AMDGPU", 32, "abcd");
    put<std::uint32_t>(cut, 4, 400); // the descriptor claims 400 bytes
    EXPECT_EQ(readError(codeObject(cut)),
              "k.hsaco: note section 1: the note at byte 0 claims a 7-byte name and a 400-byte "
              "descriptor, past its end");
}

TEST(CodeObject, AMalformedNoteIsAnErrorNamingWhere) {
    auto errorOf = [](Pack const& p) { return readError(codeObject(metadataNote(p.bytes()))); };
    EXPECT_EQ(errorOf(Pack().raw({0xc1})), "k.hsaco: the AMDGPU metadata note: malformed "
                                           "MessagePack: byte 0 is 0xc1, which is not a type");
    EXPECT_EQ(errorOf(Pack().raw({0xdf, 0xff, 0xff, 0xff, 0xff})),
              "k.hsaco: the AMDGPU metadata note: malformed MessagePack: a map before byte 5 "
              "claims 4294967295 entries but 0 bytes are left");
    EXPECT_EQ(errorOf(Pack().map(1).text("amdhsa.kernels").text("many")),
              "k.hsaco: the AMDGPU metadata note amdhsa.kernels is a string");
    Pack noOffset;
    noOffset.map(1).text("amdhsa.kernels").array(1).map(2).entry(".name", "k");
    noOffset.text(".args").array(1).map(2).entry(".size", 4).entry(".value_kind", "by_value");
    EXPECT_EQ(errorOf(noOffset), "k.hsaco: the AMDGPU metadata note amdhsa.kernels[0] 'k' "
                                 ".args[0] has no .offset");
    Pack textSize;
    textSize.map(1).text("amdhsa.kernels").array(1).map(2).entry(".name", "k");
    textSize.text(".args").array(1).map(3).entry(".offset", 0).entry(".size", "four");
    textSize.entry(".value_kind", "by_value");
    EXPECT_EQ(errorOf(textSize),
              "k.hsaco: the AMDGPU metadata note amdhsa.kernels[0] 'k' .args[0] .size is a "
              "string, not a size (a non-negative integer)");
}

TEST(CodeObject, NoDamageCrashesTheReader) {
    // Every truncation, and 3000 random byte changes (a fixed seed), of a good code object: each
    // read gives the kernels or an InvalidArgument, never a crash (the ASan build checks reads).
    std::string const good = codeObject(metadataNote(hipccLikeMetadata()));
    for (std::size_t size = 0; size < good.size(); ++size) {
        Expected<CodeObjectInfo> info = readCodeObject(good.substr(0, size), "cut");
        ASSERT_FALSE(info.ok()) << "cut to " << size << " bytes";
        EXPECT_EQ(info.error().code(), ErrorCode::InvalidArgument);
    }
    std::mt19937 random(7);
    int read = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::string damaged = good;
        for (int change = 0; change < 4; ++change)
            damaged[random() % damaged.size()] = static_cast<char>(random() % 256);
        Expected<CodeObjectInfo> info = readCodeObject(damaged, "damaged");
        if (info.ok())
            ++read;
        else
            EXPECT_EQ(info.error().code(), ErrorCode::InvalidArgument) << info.error().message();
    }
    EXPECT_GT(read, 0); // changes in padding and strings leave a readable object
}

TEST(CodeObject, AManifestIsCheckedAgainstTheNoteParameterByParameter) {
    Expected<CodeObjectInfo> info =
        readCodeObject(codeObject(metadataNote(hipccLikeMetadata())), "scale.hsaco");
    ASSERT_TRUE(info.ok()) << info.error().message();
    CodeObjectKernel const& scale = info->kernels[0];

    KernelManifest wide = scaleManifest();
    wide.parameters[1] = {"factor", ScalarType::F64, ParameterKind::Value, 8, 8};
    Status status = checkManifestAgainstCodeObject(wide, scale);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code(), ErrorCode::ArgumentMismatch);
    EXPECT_EQ(status.error().message(), "kernel 'scale': parameter 1 'factor' is 8 bytes at "
                                        "offset 8 in the manifest but 4 bytes at offset 8 in the "
                                        "code object's metadata");

    KernelManifest swapped = scaleManifest();
    swapped.parameters[0].name = "in";
    swapped.parameters[0].kind = ParameterKind::Value;
    swapped.parameters[0].type = ScalarType::U64;
    EXPECT_EQ(checkManifestAgainstCodeObject(swapped, scale).error().message(),
              "kernel 'scale': parameter 0 'in' is a value in the manifest but global_buffer in "
              "the code object's metadata (where it is named 'out')");

    KernelManifest more = scaleManifest();
    more.parameters.push_back({"n", ScalarType::U32, ParameterKind::Value, 4, 12});
    EXPECT_EQ(checkManifestAgainstCodeObject(more, scale).error().message(),
              "kernel 'scale': the manifest has 3 parameters but the code object's metadata has "
              "2 arguments");
}

TEST(CodeObject, KernelLoaderSpecsCarryCodeObjects) {
    KernelLoaderSpec const memory = KernelLoaderSpec::codeObjectInMemory("\x7f"
                                                                         "ELF...",
                                                                         "kiln_axpy");
    EXPECT_EQ(memory.format(), CodeFormat::CodeObject);
    EXPECT_EQ(name(memory.format()), "code object");
    EXPECT_EQ(memory.describe(), "code object in memory");
    EXPECT_EQ(*memory.image(), "\x7f"
                               "ELF...");
    KernelLoaderSpec const disk = KernelLoaderSpec::codeObjectOnDisk("out/kiln_axpy.hsaco", "k");
    EXPECT_EQ(disk.describe(), "code object file 'out/kiln_axpy.hsaco'");
    EXPECT_EQ(disk.path(), "out/kiln_axpy.hsaco");
}

TEST(CodeObject, ReadsAKernelKilnGeneratedAndAssembled) {
    std::ifstream file(std::string(KILN_SOURCE_DIR) + "/tests/golden/amdgcn/axpy_vec1.gfx942.s");
    std::stringstream source;
    source << file.rdbuf();
    Expected<std::unique_ptr<Assembler>> assembler = assemblerFor("gfx942");
    if (!assembler.ok())
        GTEST_SKIP() << assembler.error().message();
    Expected<std::string> code = (*assembler)->assemble(source.str(), "gfx942", "kiln_axpy.s");
    ASSERT_TRUE(code.ok()) << code.error().message();

    Expected<CodeObjectInfo> info = readCodeObject(*code, "kiln_axpy.hsaco");
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_EQ(info->machine, 0x4cu); // EF_AMDGPU_MACH_AMDGCN_GFX942
    EXPECT_EQ(info->processor, "gfx942");
    EXPECT_EQ(info->metadataVersion, (std::vector<int>{1, 1}));
    ASSERT_EQ(info->kernelNames(), "kiln_axpy");
    CodeObjectKernel const& axpy = info->kernels[0];
    EXPECT_EQ(axpy.symbol, "kiln_axpy.kd");
    EXPECT_EQ(axpy.kernargSegmentSize, 32u);
    EXPECT_EQ(axpy.groupSegmentFixedSize, 0u);
    EXPECT_EQ(axpy.wavefrontSize, 64);
    EXPECT_EQ(axpy.sgprCount, 24);
    EXPECT_EQ(axpy.vgprCount, 20);
    EXPECT_EQ(axpy.maxFlatWorkgroupSize, 256);
    std::vector<std::string> arguments;
    for (CodeObjectArgument const& a : axpy.arguments) {
        arguments.push_back(a.name + " " + std::to_string(a.offset) + " " + std::to_string(a.size) +
                            " " + a.valueKind +
                            (a.addressSpace.empty() ? "" : " " + a.addressSpace));
    }
    EXPECT_EQ(arguments,
              (std::vector<std::string>{"X 0 8 global_buffer global", "Y 8 8 global_buffer global",
                                        "alpha 16 4 by_value", "N 24 8 by_value"}));
    Expected<KernelManifest> manifest = KernelManifest::fromFile(
        std::string(KILN_SOURCE_DIR) + "/tests/runtime/amdgcn/kiln_axpy.json");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_TRUE(checkManifestAgainstCodeObject(*manifest, axpy).ok());
}

} // namespace
} // namespace kiln::runtime
