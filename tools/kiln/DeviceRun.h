// DeviceRun.h: a generated kernel run on a GPU on random inputs, checked and timed.
//
// The one path from an emitted kernel to a verdict, shared by `kiln run`, the GPU tests and the
// code generation benchmark: random inputs for the Command (never zeros), the CPU reference on
// a copy, the kernel assembled by ptxas where there is one (else JIT-compiled by the driver),
// loaded with its manifest so that arguments are checked, launched on the grid its formula
// gives for this problem, every tensor compared with the reference, then timed with device
// events (warm-up first, the median of the repetitions). GEMMs too large for the CPU reference
// are checked against cuBLAS on the device (GemmReference.h). Before each timed repetition a
// buffer of twice the device's L2 is written, so that no repetition finds its inputs in L2 from
// the one before.
#pragma once

#include "kiln/graph/Bindings.h"
#include "kiln/graph/Command.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Device.h"
#include "kiln/runtime/Status.h"

#include <map>
#include <memory>
#include <string>

namespace kiln::cli {

struct DeviceRunOptions {
    std::uint64_t seed = 7;
    int warmup = 3;
    int repetitions = 0; ///< 0: check only
    bool flushL2 = true; ///< write 2 x L2 bytes before each timed repetition
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
    double bytes = 0;  ///< bytes the kernel must move: each tensor loaded, each tensor stored
    int registers = 0; ///< from ptxas (0 when the driver compiled the PTX)
    std::array<std::int64_t, 3> grid{1, 1, 1};
};

/// Runs `kernel`, emitted from `lowered` (the Command's graph), on `device` at `problem`.
runtime::Expected<DeviceRunResult>
runOnDevice(std::shared_ptr<runtime::Device> const& device, Command const& command,
            std::map<std::string, double> const& problem, KernelGraph const& lowered,
            lowering::EmittedKernel const& kernel, DeviceRunOptions const& options = {});

} // namespace kiln::cli
