// Compile.h: a Command to a kernel in one call: translate, lower by a pipeline for a target,
// emit. `kiln emit`, `run`, `export`, `tune` and the sweep's compile worker all go through it,
// so a schedule means the same kernel everywhere.
//
// The schedule a kernel records is the pipeline's defaults overridden by the parameters given;
// the lowering sees the target's arch-db facts (arch.NAME in a rule set or a pipeline's `when`).
// lowerCommand stops before code generation, for callers that look at the lowered graph first
// (the worker's compile cache is keyed by it).
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/Pipeline.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::lowering {

struct CompileOptions {
    std::string target = "sm_90a";                  ///< an arch-db target
    std::map<std::string, std::int64_t> parameters; ///< over the pipeline's defaults
    /// The problem's sizes where the kernel is made for one problem (CodegenOptions::sizes).
    std::map<std::string, std::int64_t> sizes;
};

/// A Command lowered for a target, with the options code generation will take.
struct LoweredCommand {
    KernelGraph graph;
    std::vector<rules::StepReport> steps;
    CodegenOptions codegen;
    /// Rule applications over every step: 0 means every guard refused the parameters.
    std::int64_t applications() const;
};

/// Translates `command` and lowers it by `pipeline` with the parameters, for the target.
LoweredCommand lowerCommand(Command const& command, rules::Pipeline const& pipeline,
                            CompileOptions const& options);

struct CompiledCommand {
    LoweredCommand lowered;
    EmittedKernel kernel;
};

/// lowerCommand, then emitKernel (the target's vendor chooses the code generator).
CompiledCommand compileCommand(Command const& command, rules::Pipeline const& pipeline,
                               CompileOptions const& options);

} // namespace kiln::lowering
