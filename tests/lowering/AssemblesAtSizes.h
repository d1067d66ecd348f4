// AssemblesAtSizes.h: a Command's kernel assembled by ptxas for any size and for given sizes, on
// both NVIDIA targets, without spilling: what the one-pass statistics' tests (online softmax,
// Welford's layer norm) ask of every schedule.
#pragma once

#include "LoweringTestSupport.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

namespace kiln::test {

/// examples/`command` lowered by rules/reduction.pipeline.json at `params`, emitted for every
/// size ({}) and for each of `sizes`, on sm_80 and sm_90a: each assembles, without spills.
inline void expectAssemblesAtSizes(std::string const& command,
                                   std::map<std::string, std::int64_t> const& params,
                                   std::vector<std::map<std::string, std::int64_t>> const& sizes) {
    for (std::string const target : {"sm_80", "sm_90a"}) {
        KernelGraph const graph = lowered(command, "reduction.pipeline.json", params, target);
        for (auto const& these : sizes) {
            lowering::CodegenOptions options{.target = target, .schedule = params};
            options.sizes = these;
            auto const kernel = lowering::emitKernel(graph, options);
            auto const result = runtime::assemblePtx(kernel.code, target);
            ASSERT_TRUE(result.ok()) << result.error().message() << "\n" << kernel.code;
            EXPECT_EQ(result.value().spillStores, 0) << target;
        }
    }
}

} // namespace kiln::test
