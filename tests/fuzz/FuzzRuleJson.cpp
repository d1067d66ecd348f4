// libFuzzer target: rule set JSON. Any input must either load or fail with a UserError that
// points into the input; a rule set that loads is then applied to the translated axpy graph,
// where it may fail only with a UserError too (a guard it cannot decide, a rewrite the verifier
// refuses, a fixpoint that runs out of budget, a limit of the lowering reached: small limits
// keep every input fast). Anything else is a finding.
#include "kiln/graph/Translate.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/RuleJson.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {
kiln::KernelGraph const& axpyGraph() {
    static kiln::KernelGraph const graph = [] {
        kiln::Command c("axpy");
        auto n = c.size("N");
        c.tensor("X", kiln::DataType::F32, {n}).tensor("Y", kiln::DataType::F32, {n});
        c.scalar("alpha", kiln::DataType::F32);
        auto x = c.loadLinear("X");
        auto y = c.loadLinear("Y");
        c.storeLinear("Y", c.execute("alpha * " + x + " + " + y));
        return kiln::translate(c);
    }();
    return graph;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    std::optional<kiln::rules::RuleSet> set;
    try {
        set = kiln::rules::parseRuleSet(text, "fuzz.rules.json");
    } catch (kiln::UserError const& e) {
        if (e.location().line <= 0 || e.location().column <= 0) {
            std::fprintf(stderr, "a UserError without a location: %s\n", e.what());
            std::abort();
        }
        return 0;
    }
    kiln::KernelGraph graph = axpyGraph();
    kiln::rules::EngineOptions options;
    for (auto const& p : set->parameters)
        options.parameters[p.name] = 4;
    // A budget or a repeat the file chose may be large; fuzzing needs speed.
    options.limits = {.applications = 200, .steps = 10'000, .candidates = 200'000, .seconds = 2};
    try {
        kiln::rules::apply(*set, graph, options);
    } catch (kiln::UserError const&) {
    }
    return 0;
}
