// BroadcastLoadTest.cpp: a tensor broadcast along an axis by a stride of 0 (layer norm's gamma
// and beta, RMS norm's gamma, a GEMM's bias) is read in the same accesses as the same tensor
// stored whole. Its offsets carry constants that keep their type (`row * 0` folds to i64(0));
// when IndexFacts took those for unknown terms, each element was its own 2-byte load (issue 19).
// Each Command is compared with its dense twin (the strides dropped) on both targets (a GEMM
// epilogue's bias, shared by the rows of a column, loaded once for them), and the
// broadcast kernel assembles with ptxas (the AMDGCN ones are assembled and disassembled by
// tests/amdgcn/CooperativeReductionKernelTest.cpp).
#include "LoweringTestSupport.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kiln::test {
namespace {

using Params = std::map<std::string, std::int64_t>;

// examples/NAME as written, or with every tensor stored whole (no "strides").
Command exampleCommand(std::string const& name, bool dense) {
    std::string const path = sourcePath("examples/" + name);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!dense)
        return parseCommand(text.str(), path);
    auto json = nlohmann::json::parse(text.str());
    for (auto& [argument, spec] : json["arguments"].items())
        spec.erase("strides");
    return parseCommand(json.dump(), path);
}

std::string emitted(std::string const& example, bool dense, std::string const& pipeline,
                    Params const& params, std::string const& target) {
    KernelGraph graph = translate(exampleCommand(example, dense));
    rules::lower(rules::loadPipeline(sourcePath("rules/" + pipeline)), graph,
                 {.parameters = params, .arch = rules::archFacts(target)});
    return lowering::emitKernel(graph, {.target = target, .schedule = params}).code;
}

// Global loads of f16 elements by width: one element (ld.global.b16, global_load_ushort) or
// more (b32, v2, v4; global_load_dword, dwordx2, dwordx4).
struct Loads {
    std::size_t single = 0, vector = 0;
};

Loads globalLoads(std::string const& code) {
    Loads n;
    std::istringstream lines(code);
    for (std::string line; std::getline(lines, line);) {
        bool const ptx = line.find("ld.global.") != std::string::npos;
        bool const gcn = line.find("global_load_") != std::string::npos;
        if (!ptx && !gcn)
            continue;
        bool const one = line.find("ld.global.b16") != std::string::npos ||
                         line.find("global_load_ushort") != std::string::npos ||
                         line.find("global_load_short") != std::string::npos;
        ++(one ? n.single : n.vector);
    }
    return n;
}

struct Case {
    std::string name, example, pipeline;
    Params params;
    std::string target;
    std::size_t vectorLoads; ///< of the broadcast Command
    /// The elements of a workitem's value that read one element of the broadcast tensor in an
    /// element-wise run (a GEMM epilogue's rows of one column): loaded once for them all
    /// (KernelWalker::loadChunk), so the dense twin loads this many times more.
    std::size_t sharing = 1;
};

std::vector<Case> const kCases = {
    // X in three passes, gamma and beta: five 16-byte loads on the fast path.
    {"layernorm_sm90",
     "layernorm-f16.json",
     "reduction.pipeline.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 128}, {"VEC", 8}},
     "sm_90",
     5},
    {"layernorm_gfx942",
     "layernorm-f16.json",
     "reduction.pipeline.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 128}, {"VEC", 8}},
     "gfx942",
     5},
    {"layernorm_2_rows_sm80",
     "layernorm-f16.json",
     "reduction.pipeline.json",
     {{"COOP", 1}, {"ROWS", 2}, {"LANES", 64}, {"VEC", 4}},
     "sm_80",
     5},
    // X in two passes of two reads each, gamma in two reads.
    {"rmsnorm_2_reads_sm90",
     "rmsnorm-f16.json",
     "reduction.pipeline.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}},
     "sm_90",
     6},
    {"rmsnorm_2_reads_gfx942",
     "rmsnorm-f16.json",
     "reduction.pipeline.json",
     {{"COOP", 1}, {"ROWS", 1}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}},
     "gfx942",
     6},
    // The bias in pairs of columns, as mma.sync's accumulators hold them, each pair once for
    // the four rows of it a lane holds (two slabs of 16 rows, r and r + 8 in each).
    {"gemm_bias_mma_sync_sm80",
     "gemm-bias-gelu-f16.json",
     "gemm.pipeline.json",
     {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
     "sm_80",
     8,
     4},
};

void PrintTo(Case const& c, std::ostream* os) {
    *os << c.name;
}

class BroadcastLoad : public ::testing::TestWithParam<Case> {};

TEST_P(BroadcastLoad, ReadsAsItsDenseTwinDoes) {
    Case const& c = GetParam();
    std::string const broadcast = emitted(c.example, false, c.pipeline, c.params, c.target);
    std::string const dense = emitted(c.example, true, c.pipeline, c.params, c.target);
    Loads const b = globalLoads(broadcast), d = globalLoads(dense);
    EXPECT_EQ(b.vector, c.vectorLoads) << broadcast;
    EXPECT_EQ(b.vector * c.sharing, d.vector);
    if (c.sharing == 1)
        EXPECT_EQ(b.single, d.single);
    else // the masked path's loads shared as well
        EXPECT_LT(b.single, d.single);
    // No check of constants when the kernel runs: an alignment the facts prove is not tested.
    EXPECT_EQ(broadcast.find(", 0, 0;"), std::string::npos) << broadcast;
    if (!c.target.starts_with("sm_") || !runtime::findPtxas())
        return;
    auto const result = runtime::assemblePtx(broadcast, c.target);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().spillStores, 0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, BroadcastLoad, ::testing::ValuesIn(kCases),
                         [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
