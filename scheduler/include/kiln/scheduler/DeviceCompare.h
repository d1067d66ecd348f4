// DeviceCompare.h: a result judged where it lies, on the device.
//
// A sweep checks every candidate's output against the reference. Copying a 4096 x 4096 result
// to the host and comparing there costs more than running the kernel, so the comparison runs on
// the device and only the verdict comes back: two small kernels (PTX written here, loaded once
// per device through the driver's JIT) compute the largest magnitude of the reference and the
// largest relative error, by exactly the metric of Bindings.h's maxRelativeError:
// |a - r| / max(|r|, 1e-2 * max|r|), in f64, a NaN on one side only an infinite error and
// NaN on both sides none. f16, bf16, f32 and f64 tensors are compared this way.
#pragma once

#include "kiln/graph/DataType.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Stream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kiln::scheduler {

/// The PTX of the two kernels (for ptxas in the tests).
std::string comparisonPtx();

class DeviceComparison {
public:
    /// Loads the two kernels on `device`.
    static runtime::Expected<DeviceComparison> load(std::shared_ptr<runtime::Device> device);

    /// Whether tensors of `type` can be compared on the device (the floating-point types).
    static bool supports(DataType type);

    /// The largest |x| of `count` elements of `type` at `address` (NaNs skipped).
    runtime::Expected<double> largestMagnitude(runtime::Stream& stream, DataType type,
                                               std::uint64_t address, std::size_t count);

    /// Queues a read of the `count` f32 elements at `address` (their largest magnitude, left
    /// on the device) and returns: what DeviceRun reads before each timed launch, so that the
    /// launch finds L2 holding other lines, none of them dirty (a write there would leave it
    /// write-backs to pay).
    void readThrough(runtime::Stream& stream, std::uint64_t address, std::size_t count);
    /// The largest relative error of `actual` against `expected` (both `count` elements of
    /// `type`), each element measured against max(|expected|, 1e-2 * `scale`), where `scale` is
    /// the reference's largest magnitude.
    runtime::Expected<double> maxRelativeError(runtime::Stream& stream, DataType type,
                                               std::uint64_t actual, std::uint64_t expected,
                                               std::size_t count, double scale);

private:
    DeviceComparison() = default;
    /// Queues `kernel` over `count` elements of `type` (no wait, nothing copied back).
    void launch(runtime::Stream& stream, runtime::Kernel const& kernel, DataType type,
                std::uint64_t actual, std::uint64_t expected, std::size_t count, double floor);
    runtime::Expected<double> reduce(runtime::Stream& stream, runtime::Kernel const& kernel,
                                     DataType type, std::uint64_t actual, std::uint64_t expected,
                                     std::size_t count, double floor);

    std::optional<runtime::Kernel> magnitude_, error_;
    runtime::DeviceMemory<std::uint32_t> result_; ///< the f64 bits of the reduction, low first
    std::uint32_t blocks_ = 1;
};

} // namespace kiln::scheduler
