// FakeHipFixture.h: the fixture of the tests that run the HIP platform over the fake
// libamdhip64 (FakeHip.h): the fake reset to one MI300X, the platform and its device loaded over
// it, and Kiln's kiln_axpy assembled for gfx942 with its manifest.
#pragma once

#include "FakeHip.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Platform.h"

#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>

namespace kiln::runtime {

/// The fake library, the one loadPlatform("hip") loads in these tests.
inline constexpr char const* kFakeHipLibrary = KILN_FAKE_HIP_LIBRARY;

/// The fake runtime, reset to one MI300X before each test, and the platform loaded over it.
class FakeHip : public ::testing::Test {
protected:
    void SetUp() override { fake().reset(); }
    /// What the fake answers and what it was asked.
    static test::FakeHipState& fake() { return test::fakeHip(); }

    /// loadPlatform("hip") over the fake.
    static Expected<std::shared_ptr<Platform>> load();
    /// Device `ordinal` of it, or null after a test failure saying why.
    static std::shared_ptr<Device> openDevice(int ordinal = 0);

    /// kiln_axpy (tests/golden/amdgcn/axpy_vec1.gfx942.s, written by Kiln's AMDGCN backend)
    /// assembled for gfx942, or nothing, with why_ saying why, when there is no assembler.
    std::optional<std::string> axpy();
    /// Its manifest (tests/runtime/amdgcn/kiln_axpy.json).
    static KernelManifest manifest();

    std::string why_;
};

} // namespace kiln::runtime
