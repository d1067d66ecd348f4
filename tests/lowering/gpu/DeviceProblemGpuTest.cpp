// DeviceProblemGpuTest.cpp: one problem on the device, many kernels run on it, as a sweep does.
// The comparison on the device agrees with the host's metric; a kernel that writes nothing
// fails even after a correct one ran on the same buffers; timing stops where it is told to.
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/graph/Bindings.h"
#include "kiln/runtime/ScalarType.h"
#include "kiln/scheduler/DeviceCompare.h"
#include "kiln/scheduler/DeviceRun.h"

#include <cmath>
#include <cstring>

namespace kiln::test {
namespace {

using runtime::test::GpuTest;

class DeviceProblemGpuTest : public GpuTest {};

// f32 and f16 tensors of the same values, with NaNs on one side, on both, and near zero.
TEST_F(DeviceProblemGpuTest, TheDeviceComparisonAgreesWithTheHost) {
    KILN_ASSERT_OK_AND_ASSIGN(auto comparison, scheduler::DeviceComparison::load(device()));
    runtime::Stream stream = newStream();
    std::size_t const n = 100003;
    auto const a = runtime::test::randomFloats(n, 1), noise = runtime::test::randomFloats(n, 2);
    HostTensor actual{DataType::F32, {std::int64_t(n)}, {1}, {}}, expected = actual;
    for (std::size_t i = 0; i < n; ++i) {
        expected.data.push_back(a[i] * (i % 97 == 0 ? 1e-4 : 1.0));
        actual.data.push_back(expected.data.back() + 1e-3 * noise[i]);
    }
    actual.data[17] = NAN; // one side: an infinite error
    for (DataType type : {DataType::F32, DataType::F16}) {
        std::vector<std::uint16_t> a16, e16;
        std::vector<float> a32, e32;
        HostTensor roundedA = actual, roundedE = expected;
        for (std::size_t i = 0; i < n; ++i) {
            a16.push_back(runtime::Half::fromFloat(float(actual.data[i])).bits);
            e16.push_back(runtime::Half::fromFloat(float(expected.data[i])).bits);
            a32.push_back(float(actual.data[i]));
            e32.push_back(float(expected.data[i]));
            bool const half = type == DataType::F16;
            roundedA.data[i] = half ? runtime::Half{a16.back()}.toFloat() : a32.back();
            roundedE.data[i] = half ? runtime::Half{e16.back()}.toFloat() : e32.back();
        }
        std::size_t const bytes = type == DataType::F16 ? 2 * n : 4 * n;
        KILN_ASSERT_OK_AND_ASSIGN(auto da,
                                  runtime::DeviceMemory<std::uint8_t>::allocate(device(), bytes));
        KILN_ASSERT_OK_AND_ASSIGN(auto de,
                                  runtime::DeviceMemory<std::uint8_t>::allocate(device(), bytes));
        auto const* pa = type == DataType::F16 ? static_cast<void const*>(a16.data()) : a32.data();
        auto const* pe = type == DataType::F16 ? static_cast<void const*>(e16.data()) : e32.data();
        std::vector<std::uint8_t> ba(bytes), be(bytes);
        std::memcpy(ba.data(), pa, bytes);
        std::memcpy(be.data(), pe, bytes);
        stream.copy(da, std::span<std::uint8_t const>(ba))
            .copy(de, std::span<std::uint8_t const>(be));
        KILN_ASSERT_OK_AND_ASSIGN(
            double scale, comparison.largestMagnitude(stream, type, de.pointer().address(), n));
        double hostScale = 0;
        for (double v : roundedE.data)
            hostScale = std::max(hostScale, std::fabs(v));
        EXPECT_EQ(scale, hostScale);
        KILN_ASSERT_OK_AND_ASSIGN(double nanError,
                                  comparison.maxRelativeError(stream, type, da.pointer().address(),
                                                              de.pointer().address(), n, scale));
        EXPECT_EQ(nanError, INFINITY);
        // Without the NaN, the device's verdict is the host's to the last bit.
        roundedA.data[17] = roundedE.data[17];
        std::vector<std::uint8_t> fixed(ba);
        std::memcpy(fixed.data() + 17 * (bytes / n), be.data() + 17 * (bytes / n), bytes / n);
        stream.copy(da, std::span<std::uint8_t const>(fixed));
        KILN_ASSERT_OK_AND_ASSIGN(double error,
                                  comparison.maxRelativeError(stream, type, da.pointer().address(),
                                                              de.pointer().address(), n, scale));
        EXPECT_EQ(error, maxRelativeError(roundedA, roundedE)) << name(type);
        EXPECT_GT(error, 1e-4);
    }
}

// The PTX of `kernel` with an empty body: the same entry and parameters, nothing written.
lowering::EmittedKernel idle(lowering::EmittedKernel kernel) {
    auto const entry = kernel.code.find(".entry");
    auto const body = kernel.code.find('{', entry);
    kernel.code = kernel.code.substr(0, body) + "{\n    ret;\n}\n";
    return kernel;
}

TEST_F(DeviceProblemGpuTest, AKernelThatWritesNothingFailsAfterACorrectOne) {
    std::string const target = device()->description().target;
    KernelGraph const graph = lowered("axpy.json", "elementwise.pipeline.json", {}, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target});
    Command const command = loadCommand(sourcePath("examples/axpy.json"));
    auto problem = command.defaults;
    problem["N"] = 100003;
    KILN_ASSERT_OK_AND_ASSIGN(auto onDevice,
                              scheduler::DeviceProblem::create(device(), command, problem));
    EXPECT_EQ(onDevice->reference(), "CPU");
    KILN_ASSERT_OK_AND_ASSIGN(auto good, scheduler::loadEmitted(device(), kernel));
    KILN_ASSERT_OK_AND_ASSIGN(auto right, onDevice->run(good.kernel, graph, kernel.sharedBytes));
    EXPECT_LE(right.maxRelativeError, right.tolerance);
    KILN_ASSERT_OK_AND_ASSIGN(auto bad, scheduler::loadEmitted(device(), idle(kernel)));
    KILN_ASSERT_OK_AND_ASSIGN(auto wrong, onDevice->run(bad.kernel, graph, kernel.sharedBytes));
    EXPECT_GT(wrong.maxRelativeError, wrong.tolerance) << "the outputs were not reset";
    // And the correct one passes again after it.
    KILN_ASSERT_OK_AND_ASSIGN(auto again, onDevice->run(good.kernel, graph, kernel.sharedBytes));
    EXPECT_EQ(again.maxRelativeError, right.maxRelativeError);
}

TEST_F(DeviceProblemGpuTest, TimingStopsWhereItIsTold) {
    std::string const target = device()->description().target;
    KernelGraph const graph = lowered("axpy.json", "elementwise.pipeline.json", {}, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target});
    Command const command = loadCommand(sourcePath("examples/axpy.json"));
    auto problem = command.defaults;
    problem["N"] = 1 << 22;
    KILN_ASSERT_OK_AND_ASSIGN(auto onDevice,
                              scheduler::DeviceProblem::create(device(), command, problem));
    KILN_ASSERT_OK_AND_ASSIGN(auto loaded, scheduler::loadEmitted(device(), kernel));
    KILN_ASSERT_OK_AND_ASSIGN(auto fixed, onDevice->run(loaded.kernel, graph, kernel.sharedBytes,
                                                        {.warmup = 1, .repetitions = 7}));
    EXPECT_EQ(fixed.samplesMs.size(), 7u);
    // 2^22 elements take about 20 us: timed as replays of many launches on rotating copies,
    // which the cost of a launch and its events no longer slows.
    EXPECT_GT(fixed.launchesPerSample, 1);
    KILN_ASSERT_OK_AND_ASSIGN(auto each,
                              onDevice->run(loaded.kernel, graph, kernel.sharedBytes,
                                            {.warmup = 1, .repetitions = 7, .replayBelowMs = 0}));
    EXPECT_EQ(each.launchesPerSample, 1);
    // Not slower than launch by launch beyond the difference of what L2 holds: each single
    // launch comes after a read of 2 x L2 (clean lines), each replayed one after the last's
    // writes (dirty lines of Y to write back); the 10% this allowed failed once on the H100
    // after the flush became a read (2428b5f).
    EXPECT_LE(fixed.medianMs, 1.25 * each.medianMs);
    std::printf("[ gpu      ] axpy 2^22: %.4f ms a launch, %.4f ms replayed (%d a replay)\n",
                each.medianMs, fixed.medianMs, fixed.launchesPerSample);
    KILN_ASSERT_OK_AND_ASSIGN(auto adaptive, onDevice->run(loaded.kernel, graph, kernel.sharedBytes,
                                                           {.warmup = 1,
                                                            .repetitions = 5,
                                                            .maxRepetitions = 300,
                                                            .precision = 0.02,
                                                            .maxSeconds = 2}));
    EXPECT_GE(adaptive.samplesMs.size(), 5u);
    EXPECT_LE(adaptive.samplesMs.size(), 300u);
    EXPECT_TRUE(adaptive.precision <= 0.02 || adaptive.samplesMs.size() == 300u)
        << adaptive.samplesMs.size() << " samples, precision " << adaptive.precision;
    EXPECT_GT(adaptive.medianMs, 0);
    EXPECT_LE(adaptive.minMs, adaptive.medianMs);
    std::printf("[ gpu      ] axpy 2^22: %.4f ms median within %.2f%% after %zu launches\n",
                adaptive.medianMs, 100 * adaptive.precision, adaptive.samplesMs.size());
}

} // namespace
} // namespace kiln::test
