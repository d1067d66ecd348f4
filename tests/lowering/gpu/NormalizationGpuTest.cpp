// NormalizationGpuTest.cpp: softmax, layer norm and RMS norm over the rows of an f16 matrix
// (examples/*-f16.json, COOP=1 of rules/reduction.pipeline.json) run on the GPU on random
// inputs at odd sizes (the Command's 33 x 257, one long row, one-element rows, rows shorter than
// a step of their workitems) and round ones, and match the CPU reference (f16: within 1e-2);
// each also as the kernel for its sizes only.
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

namespace kiln::test {
namespace {

struct NormalizationCase {
    std::string name, command;
    std::map<std::string, std::int64_t> params; ///< COOP=1 is added
    std::map<std::string, double> problem;
};

class NormalizationGpuTest : public runtime::test::GpuTest,
                             public ::testing::WithParamInterface<NormalizationCase> {};

TEST_P(NormalizationGpuTest, MatchesTheReference) {
    NormalizationCase const& c = GetParam();
    std::string const target = device()->description().target;
    auto params = c.params;
    params.emplace("COOP", 1);
    KernelGraph const graph = lowered(c.command, "reduction.pipeline.json", params, target);
    Command const command = loadCommand(sourcePath("examples/" + c.command));
    auto problem = command.defaults;
    for (auto const& [name, value] : c.problem)
        problem[name] = value;
    lowering::CodegenOptions general{.target = target, .schedule = params};
    lowering::CodegenOptions forProblem = general;
    for (auto const& name : command.sizes())
        forProblem.sizes[name] = static_cast<std::int64_t>(problem.at(name));
    for (auto const* options : {&general, &forProblem}) {
        auto const kernel = lowering::emitKernel(graph, *options);
        auto const result = scheduler::runOnDevice(device(), command, problem, graph, kernel);
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
            << (options == &general ? "" : "for these sizes only, ") << "in "
            << result.value().worstTensor;
        std::printf("[ gpu      ] %s%s: max relative error %.3g, %d registers\n", c.name.c_str(),
                    options == &general ? "" : " for these sizes only",
                    result.value().maxRelativeError, result.value().registers);
    }
}

using Params = std::map<std::string, std::int64_t>;
Params const kWide{{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}};
Params const kWarps{{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"UNROLL", 2}};
Params const kTwoRows{{"ROWS", 2}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}};

std::vector<NormalizationCase> cases() {
    std::vector<NormalizationCase> all;
    for (std::string const name : {"softmax", "layernorm", "rmsnorm"}) {
        std::string const command = name + "-f16.json";
        all.push_back({name + "_odd", command, kWide, {}});
        all.push_back({name + "_one_row", command, kWide, {{"M", 1}, {"N", 5003}}});
        all.push_back({name + "_one_column", command, kWarps, {{"M", 1000}, {"N", 1}}});
        all.push_back({name + "_short_rows", command, kTwoRows, {{"M", 301}, {"N", 129}}});
        all.push_back({name + "_warps_odd", command, kWarps, {{"M", 77}, {"N", 1031}}});
        all.push_back({name + "_round", command, kTwoRows, {{"M", 1024}, {"N", 4096}}});
    }
    return all;
}

INSTANTIATE_TEST_SUITE_P(Shipped, NormalizationGpuTest, ::testing::ValuesIn(cases()),
                         [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
