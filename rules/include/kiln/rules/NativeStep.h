// NativeStep.h: the pipeline steps written in C++, registered by name in one table.
//
// A native step is allowed only where a rule cannot reasonably express the step; each one says
// why in its doc, which `kiln lower --help-steps` prints. `kiln lower --stats` counts them
// against the declarative steps.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace kiln::rules {

struct NativeStep {
    std::string_view name;
    std::string_view doc;
    void (*run)(KernelGraph& graph, std::map<std::string, std::int64_t> const& args);
};

/// Every native step, in the order `--help-steps` lists them.
std::span<NativeStep const> nativeSteps();

/// The step called `name`, or nullptr.
NativeStep const* findNativeStep(std::string_view name);

} // namespace kiln::rules
