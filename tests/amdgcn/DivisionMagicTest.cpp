// DivisionMagicTest.cpp: the constants of division by a constant, checked against n / d.
#include "kiln/amdgcn/DivisionMagic.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>

namespace kiln::amdgcn {
namespace {

std::vector<std::int64_t> dividends(int bits) {
    std::int64_t const max = bits == 32 ? std::numeric_limits<std::int32_t>::max()
                                        : std::numeric_limits<std::int64_t>::max();
    std::int64_t const min = bits == 32 ? std::numeric_limits<std::int32_t>::min()
                                        : std::numeric_limits<std::int64_t>::min();
    std::vector<std::int64_t> out = {0, 1,   -1,   2,   -2,  3,       6,      7,
                                     8, 100, -100, max, min, max - 1, min + 1};
    std::mt19937_64 random(1234);
    for (int k = 0; k < 2000; ++k) {
        std::int64_t n = static_cast<std::int64_t>(random());
        if (bits == 32)
            n = static_cast<std::int32_t>(n);
        out.push_back(n);
        out.push_back(n % 100000);
    }
    return out;
}

TEST(DivisionMagic, MatchesTruncatingDivision) {
    for (int bits : {32, 64}) {
        for (std::int64_t d : {3LL, 5LL, 6LL, 7LL, 10LL, 12LL, 25LL, 100LL, 641LL, 1000LL, 65537LL,
                               1000000007LL, -3LL, -7LL, -1000LL}) {
            SignedMagic const m = signedMagic(d, bits);
            for (std::int64_t n : dividends(bits)) {
                if (bits == 64 && n == std::numeric_limits<std::int64_t>::min() && d == -1)
                    continue;
                ASSERT_EQ(evaluateSigned(n, m, bits), n / d)
                    << "n=" << n << " d=" << d << " bits=" << bits;
            }
        }
    }
}

TEST(DivisionMagic, KnownConstants) {
    // Hacker's Delight, table 10-1: d = 7 -> M = 0x92492493, s = 2 (add); d = 3 -> 0x55555556, 0.
    SignedMagic const seven = signedMagic(7, 32);
    EXPECT_EQ(static_cast<std::uint32_t>(seven.multiplier), 0x92492493u);
    EXPECT_EQ(seven.shift, 2);
    EXPECT_EQ(seven.addend, 1);
    SignedMagic const three = signedMagic(3, 32);
    EXPECT_EQ(static_cast<std::uint32_t>(three.multiplier), 0x55555556u);
    EXPECT_EQ(three.shift, 0);
    EXPECT_EQ(three.addend, 0);
}

TEST(DivisionMagic, PowersOfTwo) {
    EXPECT_EQ(powerOfTwo(1), 0);
    EXPECT_EQ(powerOfTwo(64), 6);
    EXPECT_EQ(powerOfTwo(-8), 3);
    EXPECT_EQ(powerOfTwo(6), -1);
    EXPECT_EQ(powerOfTwo(0), -1);
}

} // namespace
} // namespace kiln::amdgcn
