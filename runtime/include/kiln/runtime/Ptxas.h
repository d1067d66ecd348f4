// Ptxas.h: assembling PTX with NVIDIA's ptxas, ahead of time.
//
// The driver can JIT PTX at load, but ptxas also tells what the kernel costs: registers per
// thread, spills and static shared memory, which the manifest keeps and the tuner reads. ptxas
// ships with the CUDA toolkit and needs no GPU, so every emitted kernel is assembled in the test
// suite on the CPU machine. Which ptxas runs: $KILN_PTXAS, else /usr/local/cuda/bin/ptxas, else
// the one on PATH.
#pragma once

#include "kiln/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::runtime {

/// What ptxas made of one kernel.
struct PtxasResult {
    std::vector<std::uint8_t> cubin;
    int registers = 0;
    int spillStores = 0, spillLoads = 0; ///< bytes
    int sharedBytes = 0;                 ///< static shared memory, bytes
    std::string log;                     ///< ptxas's complete -v output
};

/// The ptxas this process would run, or NotFound.
Expected<std::string> findPtxas();

/// Assembles `ptx` for `target` (e.g. "sm_90a"). A JitFailed error carries ptxas's complete
/// log; NotFound when there is no ptxas.
Expected<PtxasResult> assemblePtx(std::string const& ptx, std::string const& target);

} // namespace kiln::runtime
