// ScalarTypeTest.cpp: scalar type names and the f16/bf16 conversions, bit for bit.
#include "kiln/runtime/ScalarType.h"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace kiln::runtime {
namespace {

TEST(ScalarType, NamesRoundTrip) {
    for (ScalarType type :
         {ScalarType::I8, ScalarType::U32, ScalarType::F16, ScalarType::BF16, ScalarType::F64}) {
        EXPECT_EQ(parseScalarType(name(type)), type);
    }
    EXPECT_EQ(sizeOf(ScalarType::BF16), 2u);
    EXPECT_EQ(sizeOf(ScalarType::I64), 8u);
    EXPECT_EQ(cppName(ScalarType::U16), "uint16_t");
    EXPECT_FALSE(parseScalarType("f8").has_value());
    EXPECT_FALSE(parseScalarType("F32").has_value());
}

TEST(Half, KnownValues) {
    EXPECT_EQ(Half::fromFloat(1.0f).bits, 0x3c00);
    EXPECT_EQ(Half::fromFloat(-2.0f).bits, 0xc000);
    EXPECT_EQ(Half::fromFloat(65504.0f).bits, 0x7bff);              // largest finite
    EXPECT_EQ(Half::fromFloat(65520.0f).bits, 0x7c00);              // rounds to infinity
    EXPECT_EQ(Half::fromFloat(std::ldexp(1.0f, -24)).bits, 0x0001); // smallest subnormal
    EXPECT_EQ(Half::fromFloat(std::ldexp(1.0f, -25)).bits, 0x0000); // tie to even: zero
    EXPECT_EQ(Half::fromFloat(std::ldexp(1.5f, -25)).bits, 0x0001);
    EXPECT_EQ(Half::fromFloat(std::ldexp(1.0f, -14)).bits, 0x0400);        // smallest normal
    EXPECT_EQ(Half::fromFloat(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00); // tie to even
    EXPECT_EQ(Half::fromFloat(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
    EXPECT_EQ(Half::fromFloat(std::numeric_limits<float>::infinity()).bits, 0x7c00);
    EXPECT_TRUE(std::isnan(Half::fromFloat(std::nanf("")).toFloat()));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(Half::fromFloat(-0.0f).toFloat()), 0x80000000u);
}

TEST(Half, EveryFiniteHalfRoundTrips) {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        Half const half{static_cast<std::uint16_t>(bits)};
        if (((bits >> 10) & 0x1f) == 0x1f)
            continue; // infinities and NaNs
        ASSERT_EQ(Half::fromFloat(half.toFloat()).bits, bits) << std::hex << bits;
    }
    EXPECT_EQ(Half{0x0001}.toFloat(), std::ldexp(1.0f, -24));
    EXPECT_EQ(Half{0x7bff}.toFloat(), 65504.0f);
}

TEST(BFloat16, KnownValuesAndRounding) {
    EXPECT_EQ(BFloat16::fromFloat(1.0f).bits, 0x3f80);
    EXPECT_EQ(BFloat16::fromFloat(-3.0f).bits, 0xc040);
    EXPECT_EQ(BFloat16::fromFloat(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80); // tie, even
    EXPECT_EQ(BFloat16::fromFloat(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82); // tie, up
    EXPECT_EQ(BFloat16::fromFloat(std::bit_cast<float>(0x3f808001u)).bits, 0x3f81);
    EXPECT_TRUE(std::isnan(BFloat16::fromFloat(std::nanf("")).toFloat()));
    EXPECT_EQ(BFloat16{0x4049}.toFloat(), 3.140625f);
}

} // namespace
} // namespace kiln::runtime
