// GpuFixture.h: the device the GPU tests run on, or a clear skip where there is none.
//
// Each test asks for device 0 of the CUDA platform; with no driver or no device the test is
// skipped with the platform's message (or fails, when KILN_REQUIRE_GPU=1, as on the GPU machine,
// so a broken driver load cannot pass as a skip).
#pragma once

#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Stream.h"

#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <vector>

namespace kiln::runtime::test {

/// A test that needs a CUDA device of compute capability 8.0 or newer (the test PTX's target).
class GpuTest : public ::testing::Test {
protected:
    void SetUp() override;

    /// Device 0, shared by all tests of the process.
    std::shared_ptr<Device> const& device() const { return device_; }
    /// A fresh stream on it.
    Stream newStream() const;

private:
    std::shared_ptr<Device> device_;
};

/// `count` random floats in [-1, 1), none of them zero.
std::vector<float> randomFloats(std::size_t count, std::uint32_t seed);
/// `count` random 32-bit words.
std::vector<std::uint32_t> randomWords(std::size_t count, std::uint32_t seed);

/// Asserts an Expected holds a value, printing its error otherwise, and yields the value.
#define KILN_ASSERT_OK_AND_ASSIGN(lhs, expr)                                                       \
    KILN_ASSERT_OK_AND_ASSIGN_IMPL(KILN_RUNTIME_CONCAT(kilnTestExpected_, __LINE__), lhs, expr)
#define KILN_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)                                             \
    auto tmp = (expr);                                                                             \
    ASSERT_TRUE(tmp.ok()) << tmp.error().message();                                                \
    lhs = std::move(tmp).value()

} // namespace kiln::runtime::test
