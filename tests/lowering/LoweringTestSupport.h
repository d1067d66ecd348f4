// LoweringTestSupport.h: lowering an example Command through a shipped pipeline, for the
// code generation tests.
#pragma once

#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"

#include <map>
#include <string>

namespace kiln::test {

inline std::string sourcePath(std::string const& relative) {
    return std::string(KILN_SOURCE_DIR) + "/" + relative;
}

/// examples/COMMAND lowered by rules/PIPELINE with `params` over the pipeline's defaults.
inline KernelGraph lowered(std::string const& command, std::string const& pipeline,
                           std::map<std::string, std::int64_t> const& params = {},
                           std::string const& target = "sm_90a") {
    KernelGraph graph = translate(loadCommand(sourcePath("examples/" + command)));
    rules::Pipeline const p = rules::loadPipeline(sourcePath("rules/" + pipeline));
    rules::lower(p, graph, {.parameters = params, .arch = rules::archFacts(target)});
    return graph;
}

} // namespace kiln::test
