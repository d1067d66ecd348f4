// CooperativeReductionGpuTest.cpp: Reduces whose rows several workitems share (COOP=1 of
// rules/reduction.pipeline.json) run on the GPU on random inputs, in both layouts, at odd sizes
// (300 x 257, one row, one column, rows shorter than a step of their workitems) and round ones
// (sum, max, min and mean; f32, f16 and bf16), and match the CPU reference; each also as the kernel
// for its sizes only (kiln run, a sweep). So do softmax, layer norm and RMS norm over the rows of
// an f16 matrix (examples/*-f16.json, a row's reduced value used back along it; instantiated as
// Normalization): one long row, one-element rows, rows shorter than a step of their workitems;
// the softmax also with ONLINE=1 (its row max and sum in one pass, lowering/OnlineSoftmax.h), and
// the layer norm (its row mean and variance in one pass, lowering/MeanVariance.h), also of rows
// whose mean (1000) is large beside their spread; and with PREFETCH (each workgroup asks L2 for
// a later one's rows), near the grid's end and with a short last workgroup, also in a persistent
// grid (PERSISTENT=1).
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

namespace kiln::test {
namespace {

struct ReductionCase {
    std::string name, command;
    std::map<std::string, std::int64_t> params; ///< COOP=1 unless they say otherwise
    std::map<std::string, double> problem;
};

class CooperativeReductionGpuTest : public runtime::test::GpuTest,
                                    public ::testing::WithParamInterface<ReductionCase> {};

TEST_P(CooperativeReductionGpuTest, MatchesTheReference) {
    ReductionCase const& c = GetParam();
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

std::map<std::string, std::int64_t> const kRowMajor{{"ROWS", 1}, {"LANES", 256}, {"VEC", 4}};
std::map<std::string, std::int64_t> const kRowMajorWarps{{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}};
std::map<std::string, std::int64_t> const kColumnMajor{{"ROWS", 64}, {"LANES", 8}, {"VEC", 2}};
std::map<std::string, std::int64_t> const kColumnMajorShuffled{
    {"ROWS", 4}, {"LANES", 64}, {"VEC", 1}};

INSTANTIATE_TEST_SUITE_P(
    Shipped, CooperativeReductionGpuTest,
    ::testing::Values(
        ReductionCase{"rowmajor_odd", "row-sum-rowmajor.json", kRowMajor, {}},
        ReductionCase{
            "rowmajor_one_row", "row-sum-rowmajor.json", kRowMajor, {{"M", 1}, {"N", 1000}}},
        ReductionCase{
            "rowmajor_one_column", "row-sum-rowmajor.json", kRowMajor, {{"M", 1000}, {"N", 1}}},
        ReductionCase{
            "rowmajor_round", "row-sum-rowmajor.json", kRowMajor, {{"M", 1024}, {"N", 4096}}},
        ReductionCase{"rowmajor_1024_lanes",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 1024}, {"VEC", 4}},
                      {{"M", 33}, {"N", 65537}}},
        ReductionCase{"rowmajor_warps_odd", "row-sum-rowmajor.json", kRowMajorWarps, {}},
        ReductionCase{"rowmajor_warps_round",
                      "row-sum-rowmajor.json",
                      kRowMajorWarps,
                      {{"M", 4096}, {"N", 1024}}},
        ReductionCase{"colmajor_odd", "row-reduction.json", kColumnMajor, {}},
        ReductionCase{
            "colmajor_one_row", "row-reduction.json", kColumnMajor, {{"M", 1}, {"N", 1000}}},
        ReductionCase{
            "colmajor_one_column", "row-reduction.json", kColumnMajor, {{"M", 1000}, {"N", 1}}},
        ReductionCase{
            "colmajor_round", "row-reduction.json", kColumnMajor, {{"M", 4096}, {"N", 1024}}},
        ReductionCase{"colmajor_shuffled_odd", "row-reduction.json", kColumnMajorShuffled, {}},
        ReductionCase{"max_f16_colmajor_odd", "row-max-colmajor.json", kColumnMajor, {}},
        ReductionCase{"max_f16_colmajor_one_row",
                      "row-max-colmajor.json",
                      kColumnMajor,
                      {{"M", 1}, {"N", 1000}}},
        ReductionCase{"min_bf16_rowmajor_odd",
                      "row-min-rowmajor-bf16.json",
                      {{"ROWS", 2}, {"LANES", 64}, {"VEC", 8}},
                      {}},
        ReductionCase{"min_bf16_rowmajor_one_column",
                      "row-min-rowmajor-bf16.json",
                      {{"ROWS", 2}, {"LANES", 64}, {"VEC", 8}},
                      {{"M", 1000}, {"N", 1}}},
        ReductionCase{"rowmajor_4_reads_odd",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}, {"UNROLL", 4}},
                      {}},
        ReductionCase{"rowmajor_4_reads_round",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}, {"UNROLL", 4}},
                      {{"M", 1024}, {"N", 4096}}},
        ReductionCase{"colmajor_2_reads_odd",
                      "row-reduction.json",
                      {{"ROWS", 32}, {"LANES", 8}, {"VEC", 2}, {"UNROLL", 2}},
                      {}},
        ReductionCase{"mean_f16_rowmajor_odd",
                      "row-mean-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}},
                      {}},
        ReductionCase{"mean_f16_rowmajor_one_row",
                      "row-mean-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}},
                      {{"M", 1}, {"N", 1000}}},
        ReductionCase{"mean_f16_rowmajor_one_column",
                      "row-mean-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}},
                      {{"M", 1000}, {"N", 1}}},
        ReductionCase{"mean_f16_one_row_per_workitem",
                      "row-mean-rowmajor.json",
                      {{"COOP", 0}, {"ROWS", 64}},
                      {}},
        // Rows split over SPLIT workgroups (docs/codegen.md, "Rows split over workgroups"):
        // parts past the row's end (257 columns in 8 parts of 1024), parts that end mid-step,
        // one row, one column, every combine; each kernel runs twice on one workspace
        // (DeviceRun), so a counter left behind by the first launch fails the second.
        ReductionCase{"split_rowmajor_odd",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 256}, {"VEC", 4}, {"SPLIT", 8}},
                      {}},
        ReductionCase{"split_rowmajor_wide",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 256}, {"VEC", 4}, {"UNROLL", 2}, {"SPLIT", 8}},
                      {{"M", 33}, {"N", 65537}}},
        ReductionCase{"split_rowmajor_warps_odd",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"SPLIT", 3}},
                      {{"M", 301}, {"N", 1000}}},
        ReductionCase{"split_rowmajor_round",
                      "row-sum-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 512}, {"VEC", 4}, {"SPLIT", 8}},
                      {{"M", 1024}, {"N", 65536}}},
        ReductionCase{"split_colmajor_odd",
                      "row-reduction.json",
                      {{"ROWS", 32}, {"LANES", 8}, {"VEC", 2}, {"SPLIT", 16}},
                      {}},
        ReductionCase{"split_colmajor_wide",
                      "row-reduction.json",
                      {{"ROWS", 64}, {"LANES", 4}, {"VEC", 4}, {"SPLIT", 8}},
                      {{"M", 1000}, {"N", 7001}}},
        ReductionCase{"split_colmajor_one_lane",
                      "row-reduction.json",
                      {{"ROWS", 128}, {"LANES", 1}, {"VEC", 4}, {"SPLIT", 4}},
                      {{"M", 129}, {"N", 3001}}},
        ReductionCase{"split_colmajor_one_column",
                      "row-reduction.json",
                      {{"ROWS", 32}, {"LANES", 8}, {"VEC", 2}, {"SPLIT", 4}},
                      {{"M", 1000}, {"N", 1}}},
        ReductionCase{"split_max_f16_colmajor_odd",
                      "row-max-colmajor.json",
                      {{"ROWS", 32}, {"LANES", 8}, {"VEC", 4}, {"SPLIT", 5}},
                      {}},
        ReductionCase{"split_min_bf16_rowmajor_one_row",
                      "row-min-rowmajor-bf16.json",
                      {{"ROWS", 2}, {"LANES", 64}, {"VEC", 8}, {"SPLIT", 6}},
                      {{"M", 1}, {"N", 100003}}},
        // ROW_VEC consecutive rows a workitem: rows that do not fill the workitem's vector,
        // alone and with the split.
        ReductionCase{"colmajor_4_rows_odd",
                      "row-reduction.json",
                      {{"ROWS", 32}, {"LANES", 16}, {"VEC", 8}, {"ROW_VEC", 4}},
                      {{"M", 1001}, {"N", 3001}}},
        ReductionCase{"colmajor_4_rows_round",
                      "row-reduction.json",
                      {{"ROWS", 32}, {"LANES", 16}, {"VEC", 8}, {"ROW_VEC", 4}},
                      {{"M", 4096}, {"N", 1024}}},
        ReductionCase{"colmajor_2_rows_split_odd",
                      "row-reduction.json",
                      {{"ROWS", 64}, {"LANES", 4}, {"VEC", 4}, {"ROW_VEC", 2}, {"SPLIT", 4}},
                      {{"M", 301}, {"N", 7001}}},
        ReductionCase{"max_f16_colmajor_8_rows_odd",
                      "row-max-colmajor.json",
                      {{"ROWS", 64}, {"LANES", 2}, {"VEC", 4}, {"ROW_VEC", 8}},
                      {}},
        ReductionCase{"split_mean_f16_rowmajor_odd",
                      "row-mean-rowmajor.json",
                      {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}, {"SPLIT", 4}},
                      {{"M", 77}, {"N", 5003}}}),
    [](auto const& p) { return p.param.name; });

using Params = std::map<std::string, std::int64_t>;
Params const kWide{{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}};
Params const kWarps{{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"UNROLL", 2}};
Params const kTwoRows{{"ROWS", 2}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}};

std::vector<ReductionCase> normalizations() {
    std::vector<ReductionCase> all;
    for (std::string const name : {"softmax", "layernorm", "rmsnorm"}) {
        std::string const command = name + "-f16.json";
        all.push_back({name + "_odd", command, kWide, {}});
        all.push_back({name + "_one_row", command, kWide, {{"M", 1}, {"N", 5003}}});
        all.push_back({name + "_one_column", command, kWarps, {{"M", 1000}, {"N", 1}}});
        all.push_back({name + "_short_rows", command, kTwoRows, {{"M", 301}, {"N", 129}}});
        all.push_back({name + "_warps_odd", command, kWarps, {{"M", 77}, {"N", 1031}}});
        all.push_back({name + "_round", command, kTwoRows, {{"M", 1024}, {"N", 4096}}});
    }
    // The online softmax (ONLINE=1): the row's max and sum of exp(x - max) in one pass.
    auto const online = [](Params p) {
        p["ONLINE"] = 1;
        return p;
    };
    std::string const softmax = "softmax-f16.json";
    all.push_back({"softmax_online_odd", softmax, online(kWide), {}});
    all.push_back({"softmax_online_one_row", softmax, online(kWide), {{"M", 1}, {"N", 5003}}});
    all.push_back({"softmax_online_one_column", softmax, online(kWarps), {{"M", 1000}, {"N", 1}}});
    all.push_back(
        {"softmax_online_short_rows", softmax, online(kTwoRows), {{"M", 301}, {"N", 129}}});
    all.push_back({"softmax_online_warps_odd", softmax, online(kWarps), {{"M", 77}, {"N", 1031}}});
    all.push_back({"softmax_online_long_rows", softmax, online(kTwoRows), {{"M", 7}, {"N", 4097}}});
    all.push_back({"softmax_online_1024_lanes",
                   softmax,
                   online({{"ROWS", 1}, {"LANES", 1024}, {"VEC", 8}, {"UNROLL", 2}}),
                   {{"M", 33}, {"N", 65537}}});
    all.push_back({"softmax_online_round", softmax, online(kTwoRows), {{"M", 1024}, {"N", 4096}}});
    // The layer norm's mean and variance in one pass (ONLINE=1, Welford), also of rows around
    // 1000 with a spread of about 1 (tests/lowering/commands/layernorm-offset-f16.json).
    for (std::string const name : {"layernorm", "layernorm_offset"}) {
        std::string const command = name == "layernorm"
                                        ? "layernorm-f16.json"
                                        : "../tests/lowering/commands/layernorm-offset-f16.json";
        std::string const prefix = name + "_online_";
        all.push_back({prefix + "odd", command, online(kWide), {}});
        all.push_back({prefix + "7x1000", command, online(kWide), {{"M", 7}, {"N", 1000}}});
        all.push_back({prefix + "one_row", command, online(kWide), {{"M", 1}, {"N", 5003}}});
        all.push_back({prefix + "one_column", command, online(kWarps), {{"M", 1000}, {"N", 1}}});
        all.push_back({prefix + "short_rows", command, online(kTwoRows), {{"M", 301}, {"N", 129}}});
        all.push_back({prefix + "warps_odd", command, online(kWarps), {{"M", 77}, {"N", 1031}}});
        all.push_back({prefix + "long_rows", command, online(kTwoRows), {{"M", 7}, {"N", 4097}}});
        all.push_back({prefix + "1024_lanes",
                       command,
                       online({{"ROWS", 1}, {"LANES", 1024}, {"VEC", 8}, {"UNROLL", 2}}),
                       {{"M", 33}, {"N", 65537}}});
        all.push_back({prefix + "round", command, online(kTwoRows), {{"M", 1024}, {"N", 4096}}});
        all.push_back({prefix + "8192", command, online(kTwoRows), {{"M", 256}, {"N", 8192}}});
    }
    // ONLINE=2: each workitem's pair of statistics merged over the row in one exchange (f32,
    // Chan et al.'s formula for a mean and variance), over one group of lanes, through shared
    // memory from 4 to 32 groups, with rows past the last whole chunk (masked counts), and of
    // rows around 1000 with a spread of about 1.
    auto const oneExchange = [](Params p) {
        p["ONLINE"] = 2;
        return p;
    };
    for (std::string const name : {"softmax", "layernorm", "layernorm_offset"}) {
        std::string const command = name == "layernorm_offset"
                                        ? "../tests/lowering/commands/layernorm-offset-f16.json"
                                        : name + "-f16.json";
        std::string const prefix = name + "_one_exchange_";
        all.push_back({prefix + "odd", command, oneExchange(kWide), {}});
        all.push_back(
            {prefix + "warps_odd", command, oneExchange(kWarps), {{"M", 77}, {"N", 1031}}});
        all.push_back(
            {prefix + "short_rows", command, oneExchange(kTwoRows), {{"M", 301}, {"N", 129}}});
        all.push_back(
            {prefix + "long_rows", command, oneExchange(kTwoRows), {{"M", 7}, {"N", 4097}}});
        all.push_back({prefix + "1024_lanes",
                       command,
                       oneExchange({{"ROWS", 1}, {"LANES", 1024}, {"VEC", 8}, {"UNROLL", 2}}),
                       {{"M", 33}, {"N", 65537}}});
        all.push_back(
            {prefix + "round", command, oneExchange(kTwoRows), {{"M", 1024}, {"N", 4096}}});
        all.push_back({prefix + "8192", command, oneExchange(kWide), {{"M", 256}, {"N", 8192}}});
    }
    // PREFETCH: each workgroup asks L2 for the rows of a later one (in the kernel made for its
    // sizes): near the end of the grid (the last workgroups ask for nothing), with a short last
    // workgroup (301 rows, two a workgroup), and rows of 2000 bytes.
    auto const prefetching = [&](Params p, std::int64_t ahead) {
        p = online(p);
        p["PREFETCH"] = ahead;
        return p;
    };
    all.push_back({"layernorm_prefetch_odd",
                   "layernorm-f16.json",
                   prefetching(kWide, 3),
                   {{"M", 1001}, {"N", 1024}}});
    all.push_back({"layernorm_prefetch_1000",
                   "layernorm-f16.json",
                   prefetching(kWide, 330),
                   {{"M", 2000}, {"N", 1000}}});
    all.push_back({"softmax_prefetch_short_last",
                   softmax,
                   prefetching(kTwoRows, 5),
                   {{"M", 301}, {"N", 4096}}});
    // HOLD=0: the chunks of a row written out (in the kernel made for its sizes) but read again
    // in each pass instead of held: one chunk and four, with the last masked, and in one
    // exchange.
    auto const reread = [&](Params p) {
        p = online(p);
        p["HOLD"] = 0;
        return p;
    };
    all.push_back(
        {"layernorm_reread_odd", "layernorm-f16.json", reread(kWide), {{"M", 1001}, {"N", 1000}}});
    all.push_back({"layernorm_reread_four_chunks",
                   "layernorm-f16.json",
                   reread({{"ROWS", 1}, {"LANES", 512}, {"VEC", 4}, {"UNROLL", 1}}),
                   {{"M", 257}, {"N", 8000}}});
    all.push_back({"softmax_reread_round", softmax, reread(kTwoRows), {{"M", 1024}, {"N", 4096}}});
    Params rereadOnce = reread(kWide);
    rereadOnce["ONLINE"] = 2;
    all.push_back({"layernorm_one_exchange_reread_8192",
                   "layernorm-f16.json",
                   rereadOnce,
                   {{"M", 256}, {"N", 8192}}});
    // PERSISTENT=1: each workgroup loops over rows (a persistent grid), asking L2 for the rows
    // of the workgroup D after each it takes.
    auto const persistent = [&](Params p, std::int64_t ahead) {
        p = prefetching(p, ahead);
        p["PERSISTENT"] = 1;
        return p;
    };
    all.push_back({"layernorm_persistent_odd",
                   "layernorm-f16.json",
                   persistent(kWide, 64),
                   {{"M", 3001}, {"N", 1024}}});
    all.push_back({"softmax_persistent_short_last",
                   softmax,
                   persistent(kTwoRows, 7),
                   {{"M", 1001}, {"N", 4096}}});
    return all;
}

INSTANTIATE_TEST_SUITE_P(Normalization, CooperativeReductionGpuTest,
                         ::testing::ValuesIn(normalizations()),
                         [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
