// libFuzzer target: the rule engine. The input is a rule set (JSON); one that loads is applied
// to small Commands (axpy, a row reduction, GEMM translated and GEMM with its macro tiles and
// K loop already made, so that the later GEMM rule sets find what they rewrite) within small
// Limits, so that no input runs long. Loading may fail only with a located UserError;
// applying only with a UserError (a LimitError among them) that leaves the graph as it was.
// A result must pass the graph verifier and stay within the limits. Anything else (a crash,
// undefined behaviour, a leak, an InternalError or another exception, a hang) is a finding.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Engine.h"
#include "kiln/rules/RuleJson.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

struct Subject {
    std::string name;
    kiln::KernelGraph graph;
    std::string text; ///< toText(graph), to tell that a failed application changed nothing
    kiln::rules::ArchFacts arch;
};

std::map<std::string, std::int64_t> const& shippedParameters();

std::vector<Subject> const& subjects() {
    static std::vector<Subject> const all = [] {
        std::vector<Subject> out;
        // `example` translated, then lowered by the shipped rule sets `before`.
        auto add = [&](std::string const& example, std::string const& target,
                       std::vector<std::string> const& before) {
            std::string const root = KILN_SOURCE_DIR;
            kiln::KernelGraph graph =
                kiln::translate(kiln::loadCommand(root + "/examples/" + example));
            kiln::rules::EngineOptions options{.parameters = shippedParameters(),
                                               .arch = kiln::rules::archFacts(target)};
            std::string name = example + " for " + target;
            for (auto const& file : before) {
                kiln::rules::apply(kiln::rules::loadRuleSet(root + "/rules/" + file), graph,
                                   options);
                name += " after " + file;
            }
            std::string text = kiln::toText(graph);
            out.push_back({name, std::move(graph), std::move(text), options.arch});
        };
        std::vector<std::string> const tiled = {"gemm-macro-tiles.rules.json",
                                                "gemm-k-loop.rules.json"};
        add("axpy.json", "sm_90a", {});
        add("row-reduction.json", "sm_90a", {});
        add("gemm.json", "sm_90a", {});
        add("gemm.json", "sm_90a", tiled);
        add("gemm-f16.json", "gfx942", tiled);
        return out;
    }();
    return all;
}

// Values the shipped pipelines give their parameters, so that their rule sets get past their
// `valid` conditions; any other parameter without a default reads 4.
std::map<std::string, std::int64_t> const& shippedParameters() {
    static std::map<std::string, std::int64_t> const values = {
        {"WG_SIZE", 256}, {"VEC", 4},   {"ROWS", 64}, {"MT_M", 64},  {"MT_N", 64},
        {"MT_K", 16},     {"TT_M", 4},  {"TT_N", 4},  {"STAGES", 1}, {"MIN_BLOCKS", 1},
        {"MMA", 0},       {"WT_M", 32}, {"WT_N", 0},  {"UNROLL", 2}};
    return values;
}

[[noreturn]] void finding(std::string const& what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    std::optional<kiln::rules::RuleSet> set;
    try {
        set = kiln::rules::parseRuleSet(text, "fuzz.rules.json");
    } catch (kiln::UserError const& e) {
        if (e.location().line <= 0 || e.location().column <= 0)
            finding(std::string("a UserError without a location: ") + e.what());
        return 0;
    }

    kiln::rules::EngineOptions options;
    options.parameters = shippedParameters();
    for (auto const& p : set->parameters)
        if (!p.fallback && !options.parameters.count(p.name))
            options.parameters[p.name] = 4;
    options.limits = {.applications = 64, .steps = 4096, .candidates = 100'000, .seconds = 2};
    for (auto const& subject : subjects()) {
        options.arch = subject.arch;
        kiln::KernelGraph graph = subject.graph;
        try {
            auto const result = kiln::rules::apply(*set, graph, options);
            if (result.spent.applications > options.limits.applications ||
                result.spent.steps > options.limits.steps ||
                result.spent.candidates > options.limits.candidates)
                finding("the rule set went past its limits on " + subject.name);
            if (auto const problems = kiln::verify(graph); !problems.empty())
                finding("the rule set left an invalid graph on " + subject.name + ": " +
                        kiln::describe(graph, problems));
        } catch (kiln::UserError const& e) {
            if (kiln::toText(graph) != subject.text)
                finding("a failed application changed the graph of " + subject.name + ": " +
                        e.what());
        }
    }
    return 0;
}
