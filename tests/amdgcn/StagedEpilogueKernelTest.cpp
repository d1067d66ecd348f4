// StagedEpilogueKernelTest.cpp: EPILOGUE=1 on AMD targets (StagedEpilogue.h, the walker's
// StagingLayout.h and KernelWalkerStaged.cpp, amdgcn/emitter/AmdgcnEpilogue.cpp): the GEMM's
// result staged whole in LDS, rows padded so that no phase of lanes meets a bank twice, then
// stored by the workgroup in runs of 16 bytes (global_store_dwordx4), element by element at the
// tensor's edges. What the kernel issues; the LDS it declares (the tile reuses the main loop's);
// the store walk against the direct store's semantics at sizes that are not multiples of the
// tile, evaluated on the CPU for every workgroup, workitem and element; every variant assembled
// and disassembled back on gfx90a, gfx942 and gfx1100; what is refused, by name; a small kernel
// against a golden file. No AMD GPU has run these kernels.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R AmdgcnStagedEpilogue   (then review the diff)
#include "../Occurrences.h"
#include "AmdTestSupport.h"
#include "LoweringTestSupport.h"
#include "StagingLayout.h"
#include "kiln/graph/Bindings.h"
#include "kiln/graph/Error.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/HeldElements.h"
#include "kiln/lowering/IndexFacts.h"
#include "kiln/lowering/LaunchShape.h"
#include "kiln/lowering/TensorMaps.h"

#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>

namespace kiln {
namespace {

using test::occurrences;

using Schedule = std::map<std::string, std::int64_t>;

Schedule with(Schedule schedule, std::string const& name, std::int64_t value) {
    schedule[name] = value;
    return schedule;
}

// Wave tiles of 64 x 64 on the matrix cores, four waves: the 128 x 128 tile a fast gfx942 GEMM
// takes, persistent, in GROUP_M's order.
Schedule mfma128() {
    return {{"MMA", 1},   {"MT_M", 128},     {"MT_N", 128},  {"MT_K", 16},   {"WT_M", 64},
            {"WT_N", 64}, {"PERSISTENT", 1}, {"GROUP_M", 8}, {"EPILOGUE", 1}};
}

Schedule mfmaSmall() {
    return {{"MMA", 1}, {"MT_M", 32}, {"MT_N", 16}, {"MT_K", 16}, {"WT_M", 16}, {"EPILOGUE", 1}};
}

lowering::EmittedKernel emit(std::string const& command, Schedule const& schedule,
                             std::string const& target = "gfx942") {
    return lowering::emitKernel(test::lowered(command, "gemm.pipeline.json", schedule, target),
                                {.target = target, .schedule = schedule});
}

// The kernel's text from the staged tile's first write on.
std::string epilogueOf(std::string const& code) {
    std::size_t const at = code.find("the result's tile staged in LDS");
    return at == std::string::npos ? std::string{} : code.substr(at);
}

TEST(AmdgcnStagedEpilogue, EachWaveStagesItsFragmentsAndTheWorkgroupStoresRuns) {
    auto const kernel = emit("gemm-f16.json", mfma128());
    std::string const epilogue = epilogueOf(kernel.code);
    ASSERT_FALSE(epilogue.empty()) << kernel.code;
    // 128 rows of 256 bytes, padded by 16: the fragments' four row groups of a half-wave fall in
    // different banks, and the rows' runs read 16 bytes a lane without conflicts.
    EXPECT_NE(
        epilogue.find("128 rows of 256 bytes (a pitch of 272), 0 cycles lost to bank conflicts"),
        std::string::npos);
    // Each lane's 64 accumulators (four rows of one column per fragment) one ds_write_b16 each,
    // converted from f32 once.
    EXPECT_EQ(occurrences(epilogue, "ds_write_b16"), 64u);
    EXPECT_EQ(occurrences(epilogue, "v_cvt_f16_f32"), 64u);
    EXPECT_EQ(occurrences(epilogue, "v_cvt_f32_f16"), 0u);
    // 2048 runs of 8 f16, 256 workitems: 8 rounds of one ds_read_b128 and one
    // global_store_dwordx4 each, and the edge path's 8 global_store_short per round.
    EXPECT_EQ(occurrences(epilogue, "ds_read_b128"), 8u);
    EXPECT_EQ(occurrences(epilogue, "global_store_dwordx4"), 8u);
    EXPECT_EQ(occurrences(epilogue, "global_store_short"), 64u);
    EXPECT_EQ(occurrences(epilogue, "s_cbranch_execz"), 8u);
    // A barrier before the writes (the main loop's LDS is reused; before the text above), one
    // after them, and the one between persistent tiles, before the next tile's staging writes
    // LDS again.
    EXPECT_EQ(occurrences(epilogue, "s_barrier"), 2u);
    std::string const body = kernel.code.substr(0, kernel.code.size() - epilogue.size());
    EXPECT_GT(body.rfind("s_barrier"), body.rfind("v_mfma")) << "the barrier before the writes";
    // Nothing stored from registers.
    EXPECT_EQ(body.find("global_store"), std::string::npos);
    // The tile (128 x 272 bytes) is larger than the main loop's slices of A and B, which it
    // reuses: the workgroup's LDS is the tile's, in the descriptor and the manifest alike.
    EXPECT_EQ(kernel.sharedBytes, 128u * 272u);
    EXPECT_NE(kernel.code.find(".amdhsa_group_segment_fixed_size 34816"), std::string::npos);
    EXPECT_NE(kernel.manifestJson().find("\"shared_bytes\": 34816"), std::string::npos);
}

TEST(AmdgcnStagedEpilogue, RegisterTileRowsAreWrittenSixteenBytesAtATime) {
    // The SIMT f32 GEMM (alpha * AB + beta * C: C read before the tile is staged): a workitem's
    // 4 x 4 register tile is four rows of four consecutive f32, one ds_write_b128 each.
    auto const kernel = emit("gemm.json", {{"EPILOGUE", 1}});
    std::string const epilogue = epilogueOf(kernel.code);
    ASSERT_FALSE(epilogue.empty());
    EXPECT_EQ(occurrences(epilogue, "ds_write_b128"), 4u);
    EXPECT_EQ(occurrences(epilogue, "ds_write_b32"), 0u);
    EXPECT_GT(occurrences(epilogue, "global_load_dword"), 0u); // C
    EXPECT_EQ(occurrences(epilogue, "global_store_dwordx4"), 4u);
    EXPECT_NE(
        epilogue.find("64 rows of 256 bytes (a pitch of 256), 0 cycles lost to bank conflicts"),
        std::string::npos);
    // EPILOGUE=0 keeps the direct store, and its LDS is the main loop's alone.
    auto const direct = emit("gemm.json", {{"EPILOGUE", 0}});
    EXPECT_EQ(epilogueOf(direct.code), "");
    EXPECT_LE(direct.sharedBytes, kernel.sharedBytes);
}

// ---- The store walk against the direct store, on the CPU -----------------------------------

// Sizes by name; hardware indices at chosen values; dimension sizes from the graph.
class At : public BindingsEnvironment {
public:
    At(KernelGraph const& graph, Bindings const& bindings)
        : BindingsEnvironment(bindings)
        , graph_(graph) {}
    std::map<Id, std::int64_t> indices;
    Value index(Id d) const override {
        auto const it = indices.find(d);
        return it == indices.end() ? Environment::index(d) : Value::integer(it->second);
    }
    Value dimensionSize(Id d) const override {
        return Value::integer(evaluateInt(*graph_.coordinates.node(d).size, *this));
    }
    Value dimensionStride(Id d) const override {
        return Value::integer(evaluateInt(*graph_.coordinates.node(d).stride, *this));
    }

private:
    KernelGraph const& graph_;
};

bool allHold(std::vector<ExprPtr> const& conditions, Environment const& env) {
    for (auto const& c : conditions)
        if (evaluateInt(*c, env) == 0)
            return false;
    return true;
}

// For every workgroup of the grid at `sizes`: each element's place by the direct store (its
// solved offset, where its conditions hold) and by the staged one (written to its LDS slot, then
// copied by the round and workitem whose run covers the slot, where the run's conditions hold);
// both must store the same value at the same offsets, each once, and cover D.
void expectStagedStoreIsTheDirectOne(std::string const& command, Schedule const& schedule,
                                     std::string const& target,
                                     std::map<std::string, std::int64_t> const& sizes) {
    using namespace lowering;
    using namespace lowering::detail;
    KernelGraph const graph = test::lowered(command, "gemm.pipeline.json", schedule, target);
    IndexFacts const facts(graph);
    LaunchShape const shape = launchShape(graph);
    Id store = 0;
    for (Id op : graph.control.nodes())
        if (graph.control.node(op).kind == OperationKind::StoreTiled)
            store = op;
    ASSERT_NE(store, 0u);
    Id const value = graph.mapping.get(store, role::source),
             memory = graph.mapping.get(store, role::dest);
    std::string const tensor = graph.coordinates.node(memory).name;
    std::map<Id, ExprPtr> known;
    for (auto const& group : {shape.workgroups, shape.workitems})
        for (auto const& d : group)
            if (d)
                known[*d] = kiln::index(*d);
    auto const elements = heldElements(graph, facts, known, value);
    auto const axes = flattenAxes(graph, value);
    StagedTile const tile =
        stagedTile(graph, facts, shape, known, axes, elements, memory, kWholeTile);
    auto const geometry = tensorGeometry(graph, tensor);
    ASSERT_TRUE(geometry);
    std::int64_t const bytes =
        sizeInBytes(graph.coordinates.node(memory).dtype.value_or(DataType::F32));
    StagingLayout const layout = stagingLayout(tile, facts, shape, bytes, 0, BankModel{});
    EXPECT_EQ(layout.pitch % 16, 0);
    auto const rounds = cooperativeRounds(tile, layout, *geometry, shape, facts);

    // The direct store's places, once per element.
    std::vector<std::pair<std::vector<ExprPtr>, ExprPtr>> direct;
    for (auto const& element : elements) {
        auto k = known;
        for (Id a : axes)
            k[a] = element.at(a);
        auto const solution = solveIndices(graph, k, {memory}, facts);
        std::vector<ExprPtr> conditions = element.conditions;
        conditions.insert(conditions.end(), solution.conditions.begin(), solution.conditions.end());
        direct.emplace_back(conditions, solution.at(memory));
    }

    Bindings bindings;
    bindings.sizes = sizes;
    At env(graph, bindings);
    std::array<std::int64_t, 3> grid{1, 1, 1};
    for (std::size_t a = 0; a < 3; ++a)
        if (shape.grid[a])
            grid[a] = evaluateInt(*shape.grid[a], env);
    std::map<std::int64_t, std::int64_t> byDirect, byStaged;
    std::int64_t id = 0;
    for (std::int64_t gz = 0; gz < grid[2]; ++gz)
        for (std::int64_t gy = 0; gy < grid[1]; ++gy)
            for (std::int64_t gx = 0; gx < grid[0]; ++gx) {
                std::array<std::int64_t, 3> const g{gx, gy, gz};
                for (std::size_t a = 0; a < 3; ++a)
                    if (shape.workgroups[a])
                        env.indices[*shape.workgroups[a]] = g[a];
                std::map<std::int64_t, std::int64_t> lds; // byte -> value
                for (std::int64_t w = 0; w < shape.workgroupSize(); ++w) {
                    for (std::size_t a = 0, rest = static_cast<std::size_t>(w); a < 3; ++a) {
                        if (shape.workitems[a])
                            env.indices[*shape.workitems[a]] =
                                static_cast<std::int64_t>(rest) % shape.block[a];
                        rest /= static_cast<std::size_t>(shape.block[a]);
                    }
                    for (std::size_t c = 0; c < elements.size(); ++c, ++id) {
                        if (allHold(direct[c].first, env)) {
                            ASSERT_TRUE(
                                byDirect.emplace(evaluateInt(*direct[c].second, env), id).second);
                        }
                        std::int64_t const slot =
                            evaluateInt(*layout.at(tile.inner[c], tile.outer[c]), env);
                        ASSERT_GE(slot, 0);
                        ASSERT_LE(slot + bytes, layout.bytes());
                        ASSERT_TRUE(lds.emplace(slot, id).second) << "slot " << slot;
                    }
                }
                for (auto const& round : rounds)
                    for (std::int64_t w = 0; w < shape.workgroupSize(); ++w) {
                        for (std::size_t a = 0, rest = static_cast<std::size_t>(w); a < 3; ++a) {
                            if (shape.workitems[a])
                                env.indices[*shape.workitems[a]] =
                                    static_cast<std::int64_t>(rest) % shape.block[a];
                            rest /= static_cast<std::size_t>(shape.block[a]);
                        }
                        if (!allHold(round.tail, env))
                            continue;
                        std::int64_t const from = evaluateInt(*round.from, env),
                                           offset = evaluateInt(*round.offset, env);
                        for (std::size_t k = 0; k < round.conditions.size(); ++k) {
                            if (!allHold(round.conditions[k], env))
                                continue;
                            auto const slot = lds.find(from + static_cast<std::int64_t>(k) * bytes);
                            ASSERT_NE(slot, lds.end());
                            ASSERT_TRUE(
                                byStaged
                                    .emplace(offset + static_cast<std::int64_t>(k), slot->second)
                                    .second);
                        }
                    }
            }
    EXPECT_EQ(byStaged, byDirect);
    EXPECT_EQ(static_cast<std::int64_t>(byDirect.size()), sizes.at("M") * sizes.at("N"));
}

TEST(AmdgcnStagedEpilogue, TheStoreWalkStoresWhatTheDirectStoreDoesAtOddSizes) {
    std::map<std::string, std::int64_t> const odd{{"M", 70}, {"N", 40}, {"K", 40}};
    expectStagedStoreIsTheDirectOne("gemm-f16.json", mfmaSmall(), "gfx942", odd);
    expectStagedStoreIsTheDirectOne(
        "gemm-f16.json",
        with(with(with(with(mfma128(), "MT_M", 64), "MT_N", 64), "WT_M", 32), "WT_N", 32), "gfx942",
        {{"M", 200}, {"N", 72}, {"K", 40}});
    // Both operands transposed, alpha * AB + beta * C; the f32 SIMT GEMM; wave32 on gfx1100.
    expectStagedStoreIsTheDirectOne("gemm-bf16.json",
                                    {{"MMA", 1},
                                     {"MT_M", 64},
                                     {"MT_N", 64},
                                     {"MT_K", 32},
                                     {"WT_M", 32},
                                     {"WT_N", 32},
                                     {"EPILOGUE", 1}},
                                    "gfx90a", odd);
    expectStagedStoreIsTheDirectOne("gemm.json", {{"EPILOGUE", 1}}, "gfx942",
                                    {{"M", 67}, {"N", 130}, {"K", 9}});
    expectStagedStoreIsTheDirectOne("gemm-f16.json", mfmaSmall(), "gfx1100", odd);
}

// ---- Assembled on every target -------------------------------------------------------------

struct Variant {
    std::string name, command;
    Schedule schedule;
};

std::vector<Variant> const kVariants = {
    {"f16_mfma_128x128_persistent", "gemm-f16.json", mfma128()},
    {"f16_mfma_small", "gemm-f16.json", mfmaSmall()},
    {"bf16_transposed_beta_c",
     "gemm-bf16.json",
     {{"MMA", 1},
      {"MT_M", 64},
      {"MT_N", 64},
      {"MT_K", 32},
      {"WT_M", 32},
      {"WT_N", 32},
      {"EPILOGUE", 1}}},
    {"bias_gelu", "gemm-bias-gelu-f16.json", with(with(mfma128(), "PERSISTENT", 0), "GROUP_M", 0)},
    {"f32_simt_alpha_beta", "gemm.json", {{"EPILOGUE", 1}}},
    {"f32_result", "../tests/lowering/commands/gemm-f16-f32-result.json", mfmaSmall()},
};

using Param = std::tuple<Variant, std::string>;
class AmdgcnStagedEpilogueAssembles : public ::testing::TestWithParam<Param> {};

TEST_P(AmdgcnStagedEpilogueAssembles, AndDisassemblesBack) {
    auto const& [variant, target] = GetParam();
    auto const kernel = emit(variant.command, variant.schedule, target);
    EXPECT_FALSE(epilogueOf(kernel.code).empty());
    std::smatch lds;
    ASSERT_TRUE(std::regex_search(kernel.code, lds, std::regex("group_segment_fixed_size (\\d+)")));
    EXPECT_EQ(std::stoul(lds[1].str()), kernel.sharedBytes);
    std::string why;
    std::string const code = amdgcn::test::assemble(kernel.code, target, why);
    if (code.empty())
        GTEST_SKIP() << why;
    std::vector<std::string> back = amdgcn::test::disassemble(code, target, why);
    if (back.empty())
        GTEST_SKIP() << why;
    auto withoutTargets = [](std::vector<std::string> lines) {
        for (std::string& l : lines)
            if (l.starts_with("s_branch ") || l.starts_with("s_cbranch_"))
                l = l.substr(0, l.find(' ')) + " <target>";
        return lines;
    };
    amdgcn::test::expectSameInstructions(withoutTargets(back),
                                         withoutTargets(amdgcn::test::instructionsOf(kernel.code)));
}

INSTANTIATE_TEST_SUITE_P(Variants, AmdgcnStagedEpilogueAssembles,
                         ::testing::Combine(::testing::ValuesIn(kVariants),
                                            ::testing::ValuesIn(amdgcn::test::kTargets)),
                         [](auto const& p) {
                             return std::get<0>(p.param).name + "_" + std::get<1>(p.param);
                         });

// ---- Refused by name -----------------------------------------------------------------------

void expectRefused(std::string const& command, Schedule const& schedule, std::string const& target,
                   std::string const& message) {
    try {
        (void)emit(command, schedule, target);
        ADD_FAILURE() << "accepted " << lowering::scheduleText(schedule) << " on " << target;
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(AmdgcnStagedEpilogue, WhatItCannotServeIsRefusedByName) {
    // NVIDIA targets store a staged tile with the copy engine only.
    expectRefused("gemm-f16.json", mfmaSmall(), "sm_80", "it needs TMA=1");
    // 256 x 128 f32 is 128 KiB: twice gfx942's LDS.
    expectRefused("gemm.json",
                  {{"MT_M", 256}, {"MT_N", 128}, {"TT_M", 8}, {"TT_N", 8}, {"EPILOGUE", 1}},
                  "gfx942", "EPILOGUE=1 stages the result's tile in");
    expectRefused("gemm-f16.json", with(mfmaSmall(), "EPILOGUE", 2), "gfx942",
                  "EPILOGUE=2 must be 0");
}

// A small MFMA kernel's whole text: 32 x 16 tiles, two waves of 16 x 16, its result staged.
TEST(AmdgcnStagedEpilogue, MatchesTheGoldenFile) {
    amdgcn::test::expectGolden("gemm_f16_mfma_staged.gfx942.s",
                               emit("gemm-f16.json", mfmaSmall()).code);
}

} // namespace
} // namespace kiln
