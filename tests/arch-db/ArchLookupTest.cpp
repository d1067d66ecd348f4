// ArchLookupTest.cpp: the query API, its errors, device overlays, diffs and JSON round trips.
#include "kiln/arch-db/ArchDiff.h"
#include "kiln/arch-db/ArchError.h"
#include "kiln/arch-db/ArchJson.h"
#include "kiln/arch-db/ArchLibrary.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace kiln::arch {
namespace {

/// Runs `action`, expects an ArchError of `kind`, returns it for further checks.
template <typename Action>
ArchError expectArchError(Action&& action, ArchError::Kind kind) {
    try {
        action();
    } catch (ArchError const& error) {
        EXPECT_EQ(error.kind(), kind) << error.what();
        return error;
    }
    ADD_FAILURE() << "expected an ArchError";
    return ArchError(kind, "none");
}

TEST(ArchLookup, KnownTargets) {
    std::vector<std::string> expected = {"gfx1100", "gfx90a", "gfx942", "sm_80",
                                         "sm_86",   "sm_89",  "sm_90",  "sm_90a"};
    EXPECT_EQ(ArchLibrary::instance().targetNames(), expected);
    EXPECT_EQ(ArchLibrary::get("sm_90a").name(), "sm_90a");
    EXPECT_EQ(ArchLibrary::get("sm_90a").vendor(), Vendor::Nvidia);
    EXPECT_EQ(ArchLibrary::get("gfx942").vendor(), Vendor::Amd);
    EXPECT_EQ(ArchLibrary::get("gfx942").family(), "cdna3");
}

TEST(ArchLookup, UnknownTargetListsTargetsAndSuggests) {
    ArchError error =
        expectArchError([] { ArchLibrary::get("sm_91"); }, ArchError::Kind::UnknownTarget);
    std::string message = error.what();
    EXPECT_NE(message.find("target 'sm_91' is unknown"), std::string::npos) << message;
    EXPECT_NE(message.find("did you mean 'sm_90"), std::string::npos) << message;
    EXPECT_NE(message.find("gfx1100, gfx90a, gfx942, sm_80, sm_86, sm_89, sm_90, sm_90a"),
              std::string::npos)
        << message;
    EXPECT_EQ(expectArchError([] { ArchLibrary::get("GFX942"); }, ArchError::Kind::UnknownTarget)
                  .suggestion(),
              "gfx942");
    // Nothing close: no suggestion, but still the list.
    ArchError far =
        expectArchError([] { ArchLibrary::get("tpu_v5"); }, ArchError::Kind::UnknownTarget);
    EXPECT_TRUE(far.suggestion().empty());
    EXPECT_EQ(std::string(far.what()).find("did you mean"), std::string::npos);
    EXPECT_EQ(ArchLibrary::instance().find("tpu_v5"), nullptr);
}

TEST(ArchLookup, UnknownInstructionListsInstructionsAndSuggests) {
    Arch const& arch = ArchLibrary::get("gfx942");
    ArchError error = expectArchError([&] { arch.instruction("global_load_dwordx3"); },
                                      ArchError::Kind::UnknownInstruction);
    std::string message = error.what();
    EXPECT_NE(message.find("instruction 'global_load_dwordx3' is unknown on gfx942"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("known instructions: "), std::string::npos);
    EXPECT_NE(message.find("ds_read_b128"), std::string::npos);
    EXPECT_FALSE(error.suggestion().empty());
    EXPECT_EQ(arch.findInstruction("global_load_dwordx3"), nullptr);
    // An NVIDIA mnemonic on an AMD target is unknown, not defaulted.
    expectArchError([&] { arch.instruction("ld.global.v4.f32"); },
                    ArchError::Kind::UnknownInstruction);
}

TEST(ArchLookup, AliasesFindRenamedMnemonics) {
    Arch const& gfx942 = ArchLibrary::get("gfx942");
    EXPECT_EQ(&gfx942.instruction("v_mfma_f32_32x32x8f16"),
              &gfx942.instruction("v_mfma_f32_32x32x8_f16"));
    Arch const& gfx1100 = ArchLibrary::get("gfx1100");
    EXPECT_EQ(gfx1100.instruction("global_load_dwordx4").name, "global_load_b128");
    EXPECT_EQ(gfx1100.instruction("ds_read_b128").name, "ds_load_b128");
}

TEST(ArchLookup, CapabilitiesByName) {
    Arch const& arch = ArchLibrary::get("sm_90a");
    EXPECT_TRUE(arch.has("HasWGMMA"));
    EXPECT_FALSE(arch.has("HasMFMA"));
    ArchError error =
        expectArchError([&] { arch.has("HasWGMA"); }, ArchError::Kind::UnknownCapability);
    EXPECT_EQ(error.suggestion(), "HasWGMMA");
    for (auto const& info : kCapabilityTable) {
        EXPECT_EQ(capabilityFromName(info.name), info.capability);
        EXPECT_EQ(arch.has(info.name), arch.has(info.capability));
    }
    EXPECT_FALSE(capabilityFromName("hasWGMMA")); // names are case-sensitive
}

TEST(ArchLookup, FactsByName) {
    Arch const& arch = ArchLibrary::get("sm_90a");
    EXPECT_EQ(arch.fact("shared_bytes"), 232448);
    EXPECT_EQ(arch.fact("no_such_fact"), std::nullopt);
    Fact const* shared = arch.findFact("shared_bytes");
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(shared->unit, "bytes");
    EXPECT_EQ(shared->origin, FactOrigin::Database);
    ArchError error =
        expectArchError([&] { arch.requireFact("shared_byte"); }, ArchError::Kind::UnknownFact);
    EXPECT_EQ(error.suggestion(), "shared_bytes");
    EXPECT_TRUE(std::is_sorted(arch.facts().begin(), arch.facts().end(),
                               [](auto const& a, auto const& b) { return a.name < b.name; }));
}

TEST(ArchLookup, ConcurrentFirstUseSeesOneLibrary) {
    std::vector<Arch const*> seen(8, nullptr);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i) {
        threads.emplace_back([&seen, i] { seen[i] = &ArchLibrary::get("gfx90a"); });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    for (Arch const* arch : seen) {
        EXPECT_EQ(arch, seen.front());
    }
}

TEST(ArchLookup, DeviceOverlayKeepsTheDatabaseValue) {
    Arch const& database = ArchLibrary::get("sm_90a");
    std::vector<FactOverlay> device = {
        {"multiprocessor_count", 114, "count", "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"},
        {"ecc_enabled", 1, "count", "cuDeviceGetAttribute(ECC_ENABLED)"}};
    Arch overlaid = database.withOverlay(device);
    EXPECT_EQ(overlaid.fact("multiprocessor_count"), 114);
    Fact const* count = overlaid.findFact("multiprocessor_count");
    EXPECT_EQ(count->origin, FactOrigin::Device);
    EXPECT_EQ(count->databaseValue, 132);
    EXPECT_EQ(overlaid.fact("ecc_enabled"), 1);
    EXPECT_EQ(overlaid.findFact("ecc_enabled")->databaseValue, std::nullopt);
    EXPECT_EQ(database.fact("multiprocessor_count"), 132); // the library is untouched
    EXPECT_EQ(overlaid.fact("shared_bytes"), database.fact("shared_bytes"));
}

TEST(ArchLookup, JsonRoundTrip) {
    for (Arch const& arch : ArchLibrary::instance().targets()) {
        std::string text = R"({"schema_version": 1, "targets": [)" + toJsonText(arch) + "]}";
        ArchLibrary reread = ArchLibrary::fromJson(text, "round trip");
        EXPECT_TRUE(reread.target(arch.name()) == arch) << arch.name();
    }
    Arch overlaid = ArchLibrary::get("gfx942").withOverlay(
        std::vector<FactOverlay>{{"boost_clock_mhz", 1900, "MHz", "rocm-smi"}});
    std::string text = R"({"schema_version": 1, "targets": [)" + toJsonText(overlaid) + "]}";
    EXPECT_TRUE(ArchLibrary::fromJson(text, "round trip").target("gfx942") == overlaid);
}

TEST(ArchLookup, DiffPairsRenamedInstructions) {
    ArchDiff d = diff(ArchLibrary::get("gfx90a"), ArchLibrary::get("gfx942"));
    auto fact = std::find_if(d.facts.begin(), d.facts.end(),
                             [](auto const& f) { return f.name == "multiprocessor_count"; });
    ASSERT_NE(fact, d.facts.end());
    EXPECT_EQ(fact->left, 110);
    EXPECT_EQ(fact->right, 304);
    auto mfma = std::find_if(d.instructions.begin(), d.instructions.end(),
                             [](auto const& i) { return i.name == "v_mfma_f32_32x32x8f16"; });
    ASSERT_NE(mfma, d.instructions.end());
    ASSERT_NE(mfma->left, nullptr);
    ASSERT_NE(mfma->right, nullptr);
    EXPECT_EQ(mfma->right->name, "v_mfma_f32_32x32x8_f16");
    EXPECT_NE(std::find(mfma->fields.begin(), mfma->fields.end(), "issue_cycles"),
              mfma->fields.end());
    EXPECT_NE(std::find(d.onlyRight.begin(), d.onlyRight.end(), Capability::HasFP8Matrix),
              d.onlyRight.end());
    EXPECT_TRUE(diff(ArchLibrary::get("sm_90"), ArchLibrary::get("sm_90")).empty());
    ArchDiff hopper = diff(ArchLibrary::get("sm_90"), ArchLibrary::get("sm_90a"));
    EXPECT_EQ(hopper.onlyRight,
              (std::vector<Capability>{Capability::HasWGMMA, Capability::HasSetMaxNReg}));
    EXPECT_TRUE(hopper.facts.empty());
}

} // namespace
} // namespace kiln::arch
