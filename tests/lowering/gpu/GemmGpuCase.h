// GemmGpuCase.h: a shipped Command run on the GPU at one schedule and problem, as the GEMM
// schedule tests (tile order, persistent tiles, ping-pong) do it: the case, its name in test
// output, and its run through the launcher that sweeps and `kiln run` use
// (scheduler::runOnDevice), checked against the reference (the CPU, or cuBLAS for a large GEMM).
#pragma once

#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

#include <gtest/gtest.h>
#include <map>
#include <ostream>
#include <string>

namespace kiln::test {

using Schedule = std::map<std::string, std::int64_t>;

/// examples/`command` at schedule `params` and the Command's sizes with `problem` over them.
struct GemmGpuCase {
    std::string name, command;
    Schedule params;
    std::map<std::string, double> problem;
    bool needsSm90a = false; ///< wgmma, TMA: skipped on other GPUs
};

inline void PrintTo(GemmGpuCase const& c, std::ostream* os) {
    *os << c.name;
}

/// Runs `kernel` (emitted from `graph`) of case `c` on `device`; the run's result, its largest
/// error expected within the tolerance (a failed launch fails the test and returns nothing).
inline std::optional<scheduler::DeviceRunResult>
runGemmCase(std::shared_ptr<runtime::Device> const& device, GemmGpuCase const& c,
            KernelGraph const& graph, lowering::EmittedKernel const& kernel) {
    Command const command = loadCommand(sourcePath("examples/" + c.command));
    auto problem = command.defaults;
    for (auto const& [name, value] : c.problem)
        problem[name] = value;
    auto result = scheduler::runOnDevice(device, command, problem, graph, kernel);
    if (!result.ok()) {
        ADD_FAILURE() << c.name << ": " << result.error().message();
        return std::nullopt;
    }
    EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
        << c.name << ": in " << result.value().worstTensor;
    return std::move(result.value());
}

} // namespace kiln::test
