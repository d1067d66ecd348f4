// DeviceRun.h: generated kernels run on a GPU on random inputs, checked and timed.
//
// The one path from an emitted kernel to a verdict, shared by `kiln run`, the sweep's measuring
// worker, the GPU tests and the code generation benchmarks. A DeviceProblem is a Command at one
// problem size on one device, made once and kept for every kernel that computes it: random
// inputs (never zeros) uploaded, the reference computed once (on the CPU, or by cuBLAS for a
// GEMM too large for it, with reduced-precision reductions disallowed) and kept on the device,
// and a buffer of twice the device's L2. Running a kernel on it resets every tensor to its
// inputs, launches the kernel on the grid its formula gives for this problem, compares every
// tensor with the reference on the device (DeviceCompare.h: only the error comes back), then
// times it with device events: warm-up first, then repetitions, each after a write of the L2
// buffer so that no repetition finds its inputs in L2 from the one before, until the median is
// known within the precision asked for or the time cap is reached. A kernel of tens of
// microseconds is timed instead as a command buffer (runtime/CommandBuffer.h) of many launches,
// each on its own copy of the tensors, replayed between one pair of events, so that the cost
// of launching and of the events does not count.
#pragma once
#include "kiln/graph/Bindings.h"
#include "kiln/graph/Command.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/Status.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln::scheduler {

struct DeviceRunOptions {
    std::uint64_t seed = 7;
    int warmup = 3;
    /// Untimed launches go on for at least this long, so that timing starts at the clocks the
    /// GPU holds under sustained load: on an H100 the 4096^3 f16 GEMM took 182 us in bursts of
    /// 10 launches and 225 us after 0.25 s of launches (2026-11-26-h100-floors-3.md).
    double warmupSeconds = 0;
    int repetitions = 0; ///< timed launches (the fewest, when adaptive); 0: check only
    /// Adaptive timing: above `repetitions`, timing goes on in rounds until the median is known
    /// within `precision`, `maxSeconds` of timing have passed or this many launches were timed.
    int maxRepetitions = 0;
    double precision = 0.01; ///< the median's 95% confidence half-width, relative to it
    double maxSeconds = 1.0;
    /// A kernel whose median launch is shorter than this is timed as a replayed command
    /// buffer of many launches on rotating copies of its tensors (0: never).
    double replayBelowMs = 0.05;
    bool flushL2 = true; ///< read 2 x L2 bytes before each timed repetition
    /// GEMM Commands of more FLOPs than this are checked against cuBLAS where it loads.
    double deviceReferenceFlops = 1e8;
};

struct DeviceRunResult {
    /// Tolerance: 1e-2 for f16/bf16, 1e-5 for f32; against cuBLAS, f32 allows sqrt(K) / 4 times
    /// that (two f32 sums of K terms in different orders).
    double maxRelativeError = 0, tolerance = 0;
    std::string worstTensor;        ///< where the largest error is
    std::string reference;          ///< "CPU", or "cuBLAS VERSION" for a large GEMM
    double medianMs = 0, minMs = 0; ///< per launch, when timed
    std::vector<double> samplesMs;  ///< every timed launch, in order
    double precision = 0;           ///< the median's 95% confidence half-width, relative
    int launchesPerSample = 1;      ///< above 1: each sample is a replay's mean per launch
    double bytes = 0;  ///< bytes the kernel must move: each tensor loaded, each tensor stored
    int registers = 0; ///< from ptxas (0 when the driver compiled the PTX)
    std::array<std::int64_t, 3> grid{1, 1, 1};
};

/// A Command at one problem size on one device: inputs, reference and scratch, kept there.
class DeviceProblem {
public:
    /// Makes the inputs (seeded by `options.seed`), the reference and the L2 buffer.
    static runtime::Expected<std::unique_ptr<DeviceProblem>>
    create(std::shared_ptr<runtime::Device> device, Command const& command,
           std::map<std::string, double> const& problem, DeviceRunOptions const& options = {});
    ~DeviceProblem();

    /// Runs `kernel`, loaded from code emitted for `lowered` (a lowering of the Command), with
    /// `sharedBytes` of dynamic shared memory: checked, then timed as `options` say.
    runtime::Expected<DeviceRunResult> run(runtime::Kernel const& kernel,
                                           KernelGraph const& lowered, std::size_t sharedBytes,
                                           DeviceRunOptions const& options = {});

    /// "CPU", or "cuBLAS VERSION".
    std::string const& reference() const;

    struct State; ///< what is kept on the device (DeviceRun.cpp)

private:
    explicit DeviceProblem(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

/// A kernel loaded for running, and its registers (0 when the driver compiled the PTX).
struct LoadedKernel {
    runtime::Kernel kernel;
    int registers = 0;
};

/// Loads `kernel` on `device` with its manifest: assembled by ptxas where there is one, else
/// JIT-compiled by the driver.
runtime::Expected<LoadedKernel> loadEmitted(std::shared_ptr<runtime::Device> const& device,
                                            lowering::EmittedKernel const& kernel);

/// The median of `samples` (interpolated) and its 95% distribution-free confidence half-width
/// relative to it (order statistics n/2 -+ 0.98 sqrt(n)); {0, inf} for no samples.
std::pair<double, double> medianAndPrecision(std::vector<double> samples);

/// Runs `kernel`, emitted from `lowered` (the Command's graph), on `device` at `problem`: a
/// DeviceProblem made for this one kernel.
runtime::Expected<DeviceRunResult>
runOnDevice(std::shared_ptr<runtime::Device> const& device, Command const& command,
            std::map<std::string, double> const& problem, KernelGraph const& lowered,
            lowering::EmittedKernel const& kernel, DeviceRunOptions const& options = {});

} // namespace kiln::scheduler
