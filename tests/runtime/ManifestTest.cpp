// ManifestTest.cpp: kernel manifests: reading, writing, and every malformed form's message.
#include "kiln/runtime/KernelManifest.h"

#include <gtest/gtest.h>
#include <string>

namespace kiln::runtime {
namespace {

std::string const kSaxpyPath = std::string(KILN_SOURCE_DIR) + "/tests/runtime/ptx/saxpy.json";

TEST(Manifest, ReadsTheSaxpyManifest) {
    Expected<KernelManifest> manifest = KernelManifest::fromFile(kSaxpyPath);
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->entry, "kiln_saxpy");
    EXPECT_EQ(manifest->target, "sm_80");
    ASSERT_TRUE(manifest->block.has_value());
    EXPECT_EQ(*manifest->block, (Dim3{256, 1, 1}));
    EXPECT_EQ(manifest->sharedBytes, 0u);
    ASSERT_EQ(manifest->parameters.size(), 4u);
    EXPECT_EQ(manifest->parameters[2],
              (KernelParameter{"alpha", ScalarType::F32, ParameterKind::Value, 4, 16}));
    EXPECT_EQ(manifest->parameters[1],
              (KernelParameter{"y", ScalarType::F32, ParameterKind::Pointer, 8, 8}));
    EXPECT_EQ(manifest->parameterBytes(), 24u);
}

TEST(Manifest, RoundTripsThroughJson) {
    Expected<KernelManifest> manifest = KernelManifest::fromFile(kSaxpyPath);
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    manifest->sharedBytes = 65536;
    manifest->block = Dim3{128, 2, 1};
    Expected<KernelManifest> again = KernelManifest::fromJson(manifest->toJson(), "round trip");
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, *manifest);
}

TEST(Manifest, AcceptsAScalarBlockNoParametersAndUnknownKeys) {
    Expected<KernelManifest> manifest = KernelManifest::fromJson(
        R"({"entry": "k", "target": "sm_90a", "block": 128, "parameters": [],
            "registers": 40, "graph_hash": "abc"})",
        "m.json");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(*manifest->block, (Dim3{128, 1, 1}));
    EXPECT_TRUE(manifest->parameters.empty());
    EXPECT_EQ(manifest->parameterBytes(), 0u);
}

TEST(Manifest, NoBlockMeansAnyBlock) {
    Expected<KernelManifest> manifest =
        KernelManifest::fromJson(R"({"entry": "k", "target": "sm_80", "parameters": []})", "m");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_FALSE(manifest->block.has_value());
}

/// The message of a manifest that must be refused.
std::string refusal(std::string const& parameters, std::string const& extra = "") {
    std::string const text =
        R"({"entry": "k", "target": "sm_80")" + extra + R"(, "parameters": [)" + parameters + "]}";
    Expected<KernelManifest> manifest = KernelManifest::fromJson(text, "m.json");
    if (manifest.ok())
        return "accepted";
    EXPECT_EQ(manifest.error().code(), ErrorCode::InvalidManifest);
    return manifest.error().message();
}

TEST(Manifest, RefusesMalformedParameters) {
    EXPECT_EQ(refusal(R"({"name": "a", "type": "f33", "kind": "value", "size": 4, "offset": 0})"),
              "m.json: /parameters/0/type: unknown type 'f33'; known types: i8, i16, i32, i64, "
              "u8, u16, u32, u64, f16, bf16, f32, f64");
    EXPECT_EQ(refusal(R"({"name": "a", "type": "f32", "kind": "value", "size": 8, "offset": 0})"),
              "m.json: /parameters/0/size: 8 does not match a f32 value (4 bytes)");
    EXPECT_EQ(refusal(R"({"name": "a", "type": "f32", "kind": "pointer", "size": 4, "offset": 0})"),
              "m.json: /parameters/0/size: 4 does not match a pointer (8 bytes)");
    EXPECT_EQ(refusal(R"({"name": "a", "type": "f32", "kind": "ref", "size": 4, "offset": 0})"),
              "m.json: /parameters/0/kind: must be \"pointer\", \"value\" or \"tensor_map\", not "
              "'ref'");
    EXPECT_EQ(refusal(R"({"name": "a", "type": "u64", "kind": "value", "size": 8, "offset": 4})"),
              "m.json: /parameters/0/offset: 4 is not a multiple of the parameter's alignment (8)");
    EXPECT_EQ(refusal(R"({"name": "a", "type": "f32", "kind": "value", "size": 4, "offset": -4})"),
              "m.json: /parameters/0/offset: must be a non-negative integer, not -4");
    EXPECT_EQ(refusal(R"({"name": "a", "type": "f32", "kind": "value", "size": 4})"),
              "m.json: /parameters/0/offset: missing (bytes in the parameter buffer)");
    EXPECT_EQ(refusal(R"({"type": "f32", "kind": "value", "size": 4, "offset": 0})"),
              "m.json: /parameters/0/name: missing (the parameter's name)");
    EXPECT_EQ(refusal(R"("x")"), "m.json: /parameters/0: must be an object, not \"x\"");
}

std::string const kTensorMapA =
    R"({"name": "A_map", "type": "f16", "kind": "tensor_map", "size": 128, "offset": 64,
        "tensor_map": {"tensor": "A", "box": [64, 128], "swizzle": "128B"}})";

TEST(Manifest, ReadsTensorMapParametersAndClusters) {
    Expected<KernelManifest> manifest = KernelManifest::fromJson(
        R"({"entry": "k", "target": "sm_90a", "cluster": [2, 1, 1], "parameters": [
            {"name": "n", "type": "u32", "kind": "value", "size": 4, "offset": 0}, )" +
            kTensorMapA + "]}",
        "m.json");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->cluster, (Dim3{2, 1, 1}));
    KernelParameter const& map = manifest->parameters[1];
    EXPECT_EQ(map.kind, ParameterKind::TensorMap);
    EXPECT_EQ(map.tensor, "A");
    ASSERT_TRUE(map.tensorMap.has_value());
    EXPECT_EQ(map.tensorMap->toString(), "f16 box [64, 128] swizzle 128B");
    EXPECT_EQ(manifest->parameterBytes(), 192u);
    Expected<KernelManifest> again = KernelManifest::fromJson(manifest->toJson(), "round trip");
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, *manifest);
}

TEST(Manifest, RefusesMalformedTensorMapsAndClusters) {
    auto map = [](std::string const& fields, std::string const& inner) {
        return R"({"name": "A_map", "type": "f16", "kind": "tensor_map", )" + fields +
               R"(, "tensor_map": {"tensor": "A", )" + inner + "}}";
    };
    std::string const at64 = R"("size": 128, "offset": 64)";
    EXPECT_EQ(refusal(map(R"("size": 8, "offset": 0)", R"("box": [64], "swizzle": "none")")),
              "m.json: /parameters/0/size: 8 does not match a tensor map (128 bytes)");
    EXPECT_EQ(refusal(map(R"("size": 128, "offset": 8)", R"("box": [64], "swizzle": "none")")),
              "m.json: /parameters/0/offset: 8 is not a multiple of the parameter's alignment "
              "(64)");
    EXPECT_EQ(refusal(map(at64, R"("box": [64, 0], "swizzle": "none")")),
              "m.json: /parameters/0/tensor_map/box/1: must be between 1 and 256, not 0");
    EXPECT_EQ(refusal(map(at64, R"("box": [1, 2, 3, 4, 5, 6], "swizzle": "none")")),
              "m.json: /parameters/0/tensor_map/box: must have 1 to 5 extents, not "
              "[1,2,3,4,5,6]");
    EXPECT_EQ(refusal(map(at64, R"("box": [64], "swizzle": "256B")")),
              "m.json: /parameters/0/tensor_map/swizzle: must be \"none\", \"32B\", \"64B\" or "
              "\"128B\", not '256B'");
    EXPECT_EQ(refusal(map(at64, R"("swizzle": "none")")),
              "m.json: /parameters/0/tensor_map/box: missing (elements per dimension, innermost "
              "first)");
    EXPECT_EQ(refusal(R"({"name": "A_map", "type": "f16", "kind": "tensor_map", )" + at64 + "}"),
              "m.json: /parameters/0/tensor_map: missing (the tensor, box and swizzle it maps)");
    EXPECT_EQ(refusal(R"({"name": "n", "type": "u32", "kind": "value", "size": 4, "offset": 0,
                          "tensor_map": {}})"),
              "m.json: /parameters/0/tensor_map: only a parameter of kind \"tensor_map\" has one");
    EXPECT_EQ(refusal("", R"(, "cluster": [2, 1])"),
              "m.json: /cluster: must be an array of 3 extents, not [2,1]");
    EXPECT_EQ(refusal("", R"(, "cluster": [0, 1, 1])"),
              "m.json: /cluster/0: must be between 1 and 8, not 0");
    EXPECT_EQ(refusal("", R"(, "cluster": [4, 4, 1])"),
              "m.json: /cluster: has 16 blocks; a portable cluster has at most 8");
}

// A persistent kernel's workgroups per multiprocessor (PersistentGrid.h), read and written.
TEST(Manifest, ReadsAPersistentGrid) {
    auto const manifest = KernelManifest::fromJson(
        R"({"entry": "k", "target": "sm_90a", "persistent": {"workgroups_per_multiprocessor": 2},
            "parameters": []})",
        "m.json");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->workgroupsPerMultiprocessor, 2u);
    auto const again = KernelManifest::fromJson(manifest->toJson(), "again");
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, *manifest);
    EXPECT_EQ(KernelManifest::fromJson(R"({"entry": "k", "target": "sm_90a", "parameters": []})",
                                       "m.json")
                  ->workgroupsPerMultiprocessor,
              0u);
    EXPECT_EQ(refusal("", R"(, "persistent": 1)"),
              "m.json: /persistent: must be {\"workgroups_per_multiprocessor\": N}, not 1");
    EXPECT_EQ(refusal("", R"(, "persistent": {"workgroups_per_multiprocessor": 0})"),
              "m.json: /persistent/workgroups_per_multiprocessor: must be between 1 and 1024, "
              "not 0");
}

// A workspace (a Reduce's rows split over workgroups): a pointer the launcher allocates, its
// bytes a formula of the sizes, zeroed before the first launch; read, written and refused.
TEST(Manifest, ReadsAWorkspace) {
    auto const manifest = KernelManifest::fromJson(
        R"({"entry": "k", "target": "sm_90a", "parameters": [
              {"name": "M", "type": "i64", "kind": "value", "size": 8, "offset": 0},
              {"name": "kiln_workspace", "type": "u8", "kind": "pointer", "size": 8,
               "offset": 8, "workspace": {"bytes": "ceildiv(M, 4) * 16 + M * 64",
                                          "zeroed": true}}]})",
        "m.json");
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    EXPECT_EQ(manifest->parameters[1].workspaceBytes, "ceildiv(M, 4) * 16 + M * 64");
    EXPECT_EQ(manifest->parameters[1].kind, ParameterKind::Pointer);
    EXPECT_TRUE(manifest->parameters[0].workspaceBytes.empty());
    auto const again = KernelManifest::fromJson(manifest->toJson(), "again");
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, *manifest);
    std::string const pointer =
        R"({"name": "w", "type": "u8", "kind": "pointer", "size": 8, "offset": 0, )";
    EXPECT_EQ(refusal(R"({"name": "w", "type": "u64", "kind": "value", "size": 8, "offset": 0,
                          "workspace": {"bytes": "64", "zeroed": true}})"),
              "m.json: /parameters/0/workspace: only a parameter of kind \"pointer\" is a "
              "workspace");
    EXPECT_EQ(refusal(pointer + R"("workspace": 64})"),
              "m.json: /parameters/0/workspace: must be an object, not 64");
    EXPECT_EQ(refusal(pointer + R"("workspace": {"bytes": "64"}})"),
              "m.json: /parameters/0/workspace/zeroed: must be true (a workspace starts zeroed)");
}

TEST(Manifest, RefusesOverlapsAndDuplicates) {
    std::string const x =
        R"({"name": "x", "type": "f32", "kind": "pointer", "size": 8, "offset": 0})";
    EXPECT_EQ(
        refusal(x + R"(, {"name": "n", "type": "u32", "kind": "value", "size": 4, "offset": 4})"),
        "m.json: /parameters/1/offset: 4 overlaps parameter 0 'x', which ends at byte 8");
    EXPECT_EQ(
        refusal(x + R"(, {"name": "x", "type": "u32", "kind": "value", "size": 4, "offset": 8})"),
        "m.json: /parameters/1/name: 'x' is already parameter 0");
}

TEST(Manifest, RefusesMalformedDocuments) {
    auto message = [](std::string const& text) {
        Expected<KernelManifest> manifest = KernelManifest::fromJson(text, "m.json");
        return manifest.ok() ? std::string("accepted") : manifest.error().message();
    };
    EXPECT_EQ(message("[]"), "m.json: /: a manifest is a JSON object, not []");
    EXPECT_EQ(message(R"({"target": "sm_80", "parameters": []})"),
              "m.json: /entry: missing (the kernel's entry name)");
    EXPECT_EQ(message(R"({"entry": "", "target": "sm_80", "parameters": []})"),
              "m.json: /entry: must be a non-empty string, not \"\"");
    EXPECT_EQ(message(R"({"entry": "k", "parameters": []})"),
              "m.json: /target: missing (e.g. \"sm_90a\")");
    EXPECT_EQ(message(R"({"entry": "k", "target": "sm_80"})"),
              "m.json: /parameters: missing (the kernel's parameters, [] for none)");
    EXPECT_EQ(message(R"({"entry": "k", "target": "sm_80", "parameters": {}})"),
              "m.json: /parameters: must be an array, not {}");
    EXPECT_EQ(refusal("", R"(, "block": [0, 1])"),
              "m.json: /block/0: must be between 1 and 2^32-1, not 0");
    EXPECT_EQ(refusal("", R"(, "block": [1, 2, 3, 4])"),
              "m.json: /block: must have 1 to 3 extents, not [1,2,3,4]");
    EXPECT_EQ(refusal("", R"(, "shared_bytes": "lots")"),
              "m.json: /shared_bytes: must be a non-negative integer, not \"lots\"");
    std::string const broken = message("{\"entry\": ");
    EXPECT_EQ(broken.rfind("m.json: not valid JSON: ", 0), 0u) << broken;
}

TEST(Manifest, MissingFileIsNotFound) {
    Expected<KernelManifest> manifest = KernelManifest::fromFile("/nonexistent/k.json");
    ASSERT_FALSE(manifest.ok());
    EXPECT_EQ(manifest.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(manifest.error().message(), "cannot read the manifest file '/nonexistent/k.json'");
}

} // namespace
} // namespace kiln::runtime
