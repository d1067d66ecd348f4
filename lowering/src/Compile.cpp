// Compile.cpp: translate, lower, emit (Compile.h).
#include "kiln/lowering/Compile.h"

#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"

namespace kiln::lowering {

std::int64_t LoweredCommand::applications() const {
    std::int64_t total = 0;
    for (auto const& step : steps)
        total += step.applications;
    return total;
}

LoweredCommand lowerCommand(Command const& command, rules::Pipeline const& pipeline,
                            CompileOptions const& options) {
    LoweredCommand lowered{.graph = translate(command),
                           .steps = {},
                           .codegen = {.target = options.target,
                                       .schedule = pipeline.defaults,
                                       .sizes = options.sizes}};
    lowered.steps =
        rules::lower(pipeline, lowered.graph,
                     {.parameters = options.parameters, .arch = rules::archFacts(options.target)});
    for (auto const& [name, value] : options.parameters)
        lowered.codegen.schedule[name] = value;
    return lowered;
}

CompiledCommand compileCommand(Command const& command, rules::Pipeline const& pipeline,
                               CompileOptions const& options) {
    LoweredCommand lowered = lowerCommand(command, pipeline, options);
    EmittedKernel kernel = emitKernel(lowered.graph, lowered.codegen);
    return {std::move(lowered), std::move(kernel)};
}

} // namespace kiln::lowering
