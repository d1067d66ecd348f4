// ArchOverlayTest.cpp: a device's facts laid over the architecture database.
#include "kiln/runtime/ArchOverlay.h"

#include "FakeDevice.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

TEST(ArchOverlay, ThePartsOwnFiguresReplaceTheReferencePart) {
    DeviceDescription device = test::fakeH100();
    device.multiprocessorCount = 114; // an H100 PCIe
    device.l2Bytes = 52428800;
    Expected<arch::Arch> live = liveArch(device);
    ASSERT_TRUE(live.ok()) << live.error().message();
    EXPECT_EQ(live->name(), "sm_90");
    arch::Fact const* sms = live->findFact("multiprocessor_count");
    ASSERT_NE(sms, nullptr);
    EXPECT_EQ(sms->value, 114);
    EXPECT_EQ(sms->origin, arch::FactOrigin::Device);
    EXPECT_EQ(sms->databaseValue, 132);
    EXPECT_EQ(sms->source, "cuda device 0 'NVIDIA H100 80GB HBM3' (sm_90): multiprocessor count");
    EXPECT_EQ(live->fact("shared_bytes"), 232448);
    EXPECT_EQ(live->fact("max_warps_per_multiprocessor"), 64);
    EXPECT_EQ(live->fact("boost_clock_mhz"), 1980);
    EXPECT_EQ(live->fact("memory_bandwidth_gbps"), 3352); // 2 x 2619 MHz x 640 bytes
    EXPECT_EQ(live->fact("memory_bytes"), 85520809984);
    // Facts the device does not report stay the database's.
    EXPECT_EQ(live->findFact("peak_fp32_gflops")->origin, arch::FactOrigin::Database);
}

TEST(ArchOverlay, AnExplicitTargetIsUsed) {
    Expected<arch::Arch> live = liveArch(test::fakeH100(), "sm_90a");
    ASSERT_TRUE(live.ok()) << live.error().message();
    EXPECT_EQ(live->name(), "sm_90a");
    EXPECT_TRUE(live->has(arch::Capability::HasWGMMA));
}

TEST(ArchOverlay, FactsTheDriverDidNotGiveAreLeftOut) {
    DeviceDescription device = test::fakeH100();
    device.clockKHz = 0;
    device.memoryClockKHz = 0;
    for (arch::FactOverlay const& fact : deviceFacts(device)) {
        EXPECT_NE(fact.name, "boost_clock_mhz");
        EXPECT_NE(fact.name, "memory_bandwidth_gbps");
    }
}

TEST(ArchOverlay, AnUnknownTargetIsNotFound) {
    DeviceDescription device = test::fakeH100();
    device.target = "sm_75";
    Expected<arch::Arch> live = liveArch(device);
    ASSERT_FALSE(live.ok());
    EXPECT_EQ(live.error().code(), ErrorCode::NotFound);
    EXPECT_EQ(live.error().message().rfind(
                  "no architecture facts for device 0 'NVIDIA H100 80GB HBM3' (sm_75): target "
                  "'sm_75' is unknown",
                  0),
              0u)
        << live.error().message();
}

} // namespace
} // namespace kiln::runtime
