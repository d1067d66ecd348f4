// TargetDefinitionTest.cpp: a new target is a few lines on top of a family (the example of
// docs/arch-db.md), and the generator refuses incomplete definitions.
#include "Families.h"
#include "kiln/arch-db/ArchLibrary.h"

#include <algorithm>
#include <gtest/gtest.h>

namespace kiln::arch::gen {
namespace {

/// The docs/arch-db.md example: an Ampere GA102 part.
TargetDefinition sm86() {
    TargetDefinition target = ampere("sm_86");
    target.part("NVIDIA GeForce RTX 3090")
        .fact("shared_bytes", 101376, "bytes", "CUDA C++ Programming Guide (99 KB opt-in)")
        .fact("multiprocessor_count", 82, "count", "NVIDIA Ampere GA102 whitepaper")
        .fact("boost_clock_mhz", 1695, "MHz", "NVIDIA Ampere GA102 whitepaper")
        .fact("memory_bandwidth_gbps", 936, "GB/s", "NVIDIA Ampere GA102 whitepaper")
        .fact("l2_bytes", 6291456, "bytes", "NVIDIA Ampere GA102 whitepaper")
        .fact("peak_fp32_gflops", 35600, "GFLOP/s", "NVIDIA Ampere GA102 whitepaper")
        .fact("peak_fp16_matrix_gflops", 71000, "GFLOP/s", "NVIDIA Ampere GA102 whitepaper")
        .fact("peak_bf16_matrix_gflops", 71000, "GFLOP/s", "NVIDIA Ampere GA102 whitepaper");
    return target;
}

Arch load(TargetDefinition const& target) {
    nlohmann::ordered_json db = {{"schema_version", 1}, {"targets", {target.toJson()}}};
    return ArchLibrary::fromJson(db.dump(), "test").target(target.name());
}

TEST(TargetDefinition, NewTargetFromAFamily) {
    TargetDefinition target = sm86();
    EXPECT_TRUE(target.problems().empty());
    Arch arch = load(target);
    EXPECT_EQ(arch.family(), "ampere");
    EXPECT_EQ(arch.fact("shared_bytes"), 101376); // the part overrides the family
    EXPECT_EQ(arch.fact("wave_size"), 32);        // the family's default
    EXPECT_TRUE(arch.has(Capability::HasCpAsync));
    EXPECT_FALSE(arch.has(Capability::HasTMA));
    // Instruction rows follow the capabilities: cp.async and mma.sync yes, wgmma no.
    EXPECT_EQ(arch.instruction("cp.async.cg.shared.global").waitQueue, WaitQueue::AsyncGroup);
    EXPECT_TRUE(arch.findInstruction("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    EXPECT_FALSE(arch.findInstruction("wgmma.fence.sync.aligned"));
}

TEST(TargetDefinition, InstructionRowsFollowCapabilities) {
    TargetDefinition sm90 = hopper("sm_90", false);
    TargetDefinition sm90a = hopper("sm_90a", true);
    auto has = [](TargetDefinition const& target, char const* name) {
        return target.toJson()["instructions"].contains(name);
    };
    EXPECT_FALSE(has(sm90, "wgmma.commit_group.sync.aligned"));
    EXPECT_TRUE(has(sm90a, "wgmma.commit_group.sync.aligned"));
    EXPECT_TRUE(
        has(sm90, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"));
    EXPECT_FALSE(has(ampere("sm_80"), "stmatrix.sync.aligned.m8n8.x4.shared.b16"));
    EXPECT_TRUE(has(cdna2("gfx90a"), "buffer_load_dword_lds"));
    EXPECT_FALSE(has(rdna3("gfx1100"), "buffer_load_dword_lds"));
    EXPECT_TRUE(has(rdna3("gfx1100"), "s_waitcnt_vscnt"));
    EXPECT_FALSE(has(cdna3("gfx942"), "s_waitcnt_vscnt"));
}

TEST(TargetDefinition, IncompleteDefinitionsAreRefused) {
    auto problems = [](TargetDefinition const& target) {
        std::string all;
        for (auto const& problem : target.problems()) {
            all += problem + "\n";
        }
        return all;
    };
    // A family alone has no part and no part facts.
    std::string bare = problems(ampere("sm_86"));
    EXPECT_NE(bare.find("sm_86: no reference part"), std::string::npos) << bare;
    EXPECT_NE(bare.find("missing required fact multiprocessor_count"), std::string::npos);

    TargetDefinition noSource = sm86();
    noSource.fact("l2_bytes", 6291456, "bytes", "");
    EXPECT_NE(problems(noSource).find("fact l2_bytes needs a unit and a source"),
              std::string::npos);

    TargetDefinition noTiming = sm86();
    noTiming.instruction(Op::alu("fma.rn.f32").latency(4, "estimate: test"));
    EXPECT_NE(problems(noTiming).find("instruction fma.rn.f32 needs a latency source and an "
                                      "issue source"),
              std::string::npos)
        << problems(noTiming);
}

} // namespace
} // namespace kiln::arch::gen
