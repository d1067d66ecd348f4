// DeviceRunTest.cpp: what the measuring path decides on the host: when the median is known
// well enough to stop timing, and that the comparison kernels assemble.
#include "kiln/scheduler/DeviceRun.h"

#include "kiln/runtime/Ptxas.h"
#include "kiln/scheduler/DeviceCompare.h"

#include <gtest/gtest.h>
#include <limits>

namespace kiln::scheduler {
namespace {

TEST(MedianAndPrecision, TheMedianInterpolatesBetweenTheMiddleSamples) {
    EXPECT_DOUBLE_EQ(medianAndPrecision({3, 1, 2}).first, 2);
    EXPECT_DOUBLE_EQ(medianAndPrecision({4, 1, 2, 3}).first, 2.5);
}

TEST(MedianAndPrecision, IdenticalSamplesKnowTheMedianExactly) {
    auto const [median, precision] = medianAndPrecision(std::vector<double>(10, 0.25));
    EXPECT_DOUBLE_EQ(median, 0.25);
    EXPECT_DOUBLE_EQ(precision, 0);
}

TEST(MedianAndPrecision, TheIntervalIsSpannedByOrderStatisticsAroundTheMiddle) {
    // n = 16: ranks 8 -+ 0.98 * 4, i.e. the 4th and 12th smallest (1-based): 4 and 12 here,
    // around a median of 8.5: half-width (12 - 4) / 2 = 4, relative 4 / 8.5.
    std::vector<double> samples;
    for (int i = 16; i >= 1; --i)
        samples.push_back(i);
    auto const [median, precision] = medianAndPrecision(samples);
    EXPECT_DOUBLE_EQ(median, 8.5);
    EXPECT_DOUBLE_EQ(precision, 4 / 8.5);
}

TEST(MedianAndPrecision, MoreSamplesOfTheSameSpreadNarrowTheInterval) {
    std::vector<double> few, many;
    for (int i = 0; i < 10; ++i)
        few.push_back(1 + 0.01 * (i % 5));
    for (int i = 0; i < 1000; ++i)
        many.push_back(1 + 0.01 * (i % 5) + 1e-6 * i);
    EXPECT_GT(medianAndPrecision(few).second, medianAndPrecision(many).second);
}

TEST(MedianAndPrecision, NoSamplesKnowNothing) {
    EXPECT_EQ(medianAndPrecision({}).second, std::numeric_limits<double>::infinity());
}

TEST(DeviceComparison, ItsKernelsAssembleForAmpereAndHopper) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas";
    for (char const* target : {"sm_80", "sm_90a"}) {
        auto assembled = runtime::assemblePtx(comparisonPtx(), target);
        ASSERT_TRUE(assembled.ok()) << target << ": " << assembled.error().message();
        EXPECT_FALSE(assembled->cubin.empty());
        EXPECT_EQ(assembled->spillStores + assembled->spillLoads, 0) << target;
    }
}

TEST(DeviceComparison, ComparesTheFloatingPointTypes) {
    EXPECT_TRUE(DeviceComparison::supports(DataType::F16));
    EXPECT_TRUE(DeviceComparison::supports(DataType::BF16));
    EXPECT_TRUE(DeviceComparison::supports(DataType::F32));
    EXPECT_TRUE(DeviceComparison::supports(DataType::F64));
    EXPECT_FALSE(DeviceComparison::supports(DataType::I32));
    EXPECT_FALSE(DeviceComparison::supports(DataType::Bool));
}

} // namespace
} // namespace kiln::scheduler
