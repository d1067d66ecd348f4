// Pipeline.h: a lowering pipeline, the ordered rule sets and native steps that take a
// translated KernelGraph to one ready for code generation.
//
//   { "pipeline": "elementwise", "version": 1,
//     "params": { "WG_SIZE": 256 },
//     "steps": [ { "ruleset": "linear-to-workitems.rules.json" },
//                { "native": "simplify", "when": "$VEC > 1" } ] }
//
// Rule set paths are relative to the pipeline file. Parameters given to lower() override the
// pipeline's defaults, which override each rule set's.
#pragma once

#include "kiln/rules/Engine.h"
#include "kiln/rules/NativeStep.h"
#include "kiln/rules/Rule.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::rules {

struct PipelineStep {
    RuleSet const* ruleset() const { return rules ? &*rules : nullptr; }
    std::optional<RuleSet> rules;       ///< a declarative step
    NativeStep const* native = nullptr; ///< or a native one
    std::map<std::string, std::int64_t> args;
    std::optional<RuleExpression> when;
    std::string name;
    SourceLocation at;
};

struct Pipeline {
    std::string name, doc, file;
    std::map<std::string, std::int64_t> defaults;
    std::vector<PipelineStep> steps;
};

Pipeline loadPipeline(std::string const& path);

/// What one step did.
struct StepReport {
    std::string name;
    bool declarative = true;
    bool skipped = false; ///< its `when` was false
    std::int64_t applications = 0;
    double microseconds = 0;
    Usage spent; ///< of the lowering's limits, by this step and those before it
};

/// The schedule parameters `pipeline` reads: its defaults and its rule sets' declared ones.
std::set<std::string> parameterNames(Pipeline const& pipeline);

/// Runs every step of `pipeline` on `graph`; `options.parameters` override the defaults.
/// `options.limits` bound the whole lowering, every step together. On error the graph is left
/// as it was before the call.
std::vector<StepReport> lower(Pipeline const& pipeline, KernelGraph& graph,
                              EngineOptions const& options);

} // namespace kiln::rules
