// NormalizationTest.cpp: softmax, layer norm and RMS norm (examples/*-f16.json: a row's reduced
// value broadcast back along the row) on the cooperative schedule (COOP=1 of
// rules/reduction.pipeline.json; docs/codegen.md, "Rows read again"). Every schedule keeps the
// Command's meaning in the reference interpreter at odd sizes; each kernel reads its rows once
// per pass (a loop per Reduce, one for the store), combines every Reduce across the lanes on
// both targets and assembles with ptxas; a small softmax's lowered graph and PTX are golden.
//     KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R Normalization   (then review the diff)
#include "../GoldenFile.h"
#include "../Occurrences.h"
#include "LoweringTestSupport.h"
#include "kiln/graph/GraphText.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Ptxas.h"

#include <bit>
#include <gtest/gtest.h>
#include <regex>

namespace kiln::test {
namespace {

using Params = std::map<std::string, std::int64_t>;

struct Schedule {
    std::string name, command;
    std::size_t reduces; ///< the Command's Reduces: a pass each, then the store's
    /// 32-bit words each step of the Reduces' butterflies moves: 2 for an f64 accumulator, 1 for
    /// f32 (a softmax's max of f16 rows, into an f16 value).
    std::size_t words;
    Params params;
};

std::vector<Schedule> const kSchedules = {
    {"softmax_256_lanes", "softmax-f16.json", 2, 3, {{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}}},
    {"softmax_warp_per_row",
     "softmax-f16.json",
     2,
     3,
     {{"ROWS", 4}, {"LANES", 32}, {"VEC", 4}, {"UNROLL", 2}}},
    {"layernorm_2_rows", "layernorm-f16.json", 2, 4, {{"ROWS", 2}, {"LANES", 64}, {"VEC", 4}}},
    {"layernorm_1024_lanes",
     "layernorm-f16.json",
     2,
     4,
     {{"ROWS", 1}, {"LANES", 1024}, {"VEC", 1}}},
    {"rmsnorm_2_reads",
     "rmsnorm-f16.json",
     1,
     2,
     {{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}, {"UNROLL", 2}}},
    {"rmsnorm_16_lanes", "rmsnorm-f16.json", 1, 2, {{"ROWS", 8}, {"LANES", 16}, {"VEC", 2}}},
};

Params cooperative(Params p) {
    p["COOP"] = 1;
    return p;
}

// The butterfly steps of one exchange: over the lanes of a warp, then, where a row spans warps
// (its lanes consecutive), over the warps' values, one a lane.
std::size_t butterflySteps(std::int64_t lanes) {
    std::int64_t const inWarp = std::min<std::int64_t>(lanes, 32);
    return static_cast<std::size_t>(std::countr_zero(std::uint64_t(inWarp)) +
                                    std::countr_zero(std::uint64_t(lanes / inWarp)));
}

class Normalization : public ::testing::TestWithParam<Schedule> {};

// The reference interpreter runs the lowered graph at the Command's sizes, a ragged problem of
// primes, one long row and a column of one-element rows, and matches the Command's meaning.
TEST_P(Normalization, KeepsTheCommandsMeaning) {
    Schedule const& s = GetParam();
    Command const command = loadCommand(sourcePath("examples/" + s.command));
    KernelGraph const graph = lowered(s.command, "reduction.pipeline.json", cooperative(s.params));
    for (auto problem : std::vector<std::map<std::string, double>>{command.defaults,
                                                                   {{"M", 23}, {"N", 19}},
                                                                   {{"M", 1}, {"N", 1000}},
                                                                   {{"M", 67}, {"N", 1}}}) {
        problem.emplace("eps", 1e-5);
        SemanticCheck const check(command, problem, 7);
        EXPECT_LE(check.measure(graph), check.tolerance())
            << s.name << " at M=" << problem.at("M") << ", N=" << problem.at("N");
    }
}

// PTX: a loop over the workitem's chunks for each Reduce and one for the store, the rows read
// again in each; each Reduce combines across the lanes of a warp with shfl.sync.bfly (an f32
// accumulator whole, an f64 one as two halves), and, where a row spans warps, through shared
// memory: each workitem reads one warp's value and the warps' values meet in a second butterfly.
TEST_P(Normalization, ReadsTheRowsOncePerPassOnPtx) {
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    auto const kernel = lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params),
                                             {.target = "sm_90a", .schedule = params});
    std::int64_t const lanes = params.at("LANES");
    std::int64_t const inWarp = std::min<std::int64_t>(lanes, 32);
    EXPECT_EQ(occurrences(kernel.code, "\n$loop_"), s.reduces + 1) << kernel.code;
    EXPECT_EQ(occurrences(kernel.code, "shfl.sync.bfly.b32"), butterflySteps(lanes) * s.words);
    EXPECT_EQ(occurrences(kernel.code, "bar.sync 0"), lanes > inWarp ? 2 * s.reduces : 0u);
    EXPECT_EQ(occurrences(kernel.code, "ld.shared"), lanes > inWarp ? s.reduces : 0u);
    EXPECT_GE(occurrences(kernel.code, "st.global"), 1u);
    EXPECT_EQ(kernel.block[0] * kernel.block[1], lanes * params.at("ROWS"));
}

// ptxas assembles every schedule for both NVIDIA targets, without spilling.
TEST_P(Normalization, AssemblesWithPtxas) {
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    for (std::string const target : {"sm_80", "sm_90a"}) {
        auto const kernel =
            lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params, target),
                                 {.target = target, .schedule = params});
        auto const result = runtime::assemblePtx(kernel.code, target);
        ASSERT_TRUE(result.ok()) << result.error().message() << "\n" << kernel.code;
        EXPECT_EQ(result.value().spillStores, 0) << target;
    }
}

// AMDGCN: each Reduce's butterfly with ds_swizzle_b32, its warps through LDS between barriers.
TEST_P(Normalization, CombinesAcrossLanesOnAmdgcn) {
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    auto const kernel =
        lowering::emitKernel(lowered(s.command, "reduction.pipeline.json", params, "gfx942"),
                             {.target = "gfx942", .schedule = params});
    std::int64_t const lanes = params.at("LANES");
    std::int64_t const inWarp = std::min<std::int64_t>(lanes, 32);
    EXPECT_EQ(occurrences(kernel.code, "ds_swizzle_b32"), s.words * butterflySteps(lanes));
    EXPECT_EQ(occurrences(kernel.code, "s_barrier"), lanes > inWarp ? 2 * s.reduces : 0u);
}

// A kernel for one problem's sizes only (what kiln tune compiles with --specialize, and the GPU
// tests run): the chunk count is then a constant, and the rows are still computed where read.
// Up to four chunks a row are written out, each pass's body once a chunk; more are a loop a pass.
TEST_P(Normalization, WritesAKernelForItsSizesOnly) {
    Schedule const& s = GetParam();
    Params const params = cooperative(s.params);
    KernelGraph const graph = lowered(s.command, "reduction.pipeline.json", params);
    std::int64_t const chunk = params.at("LANES") * params.at("VEC") *
                               (params.contains("UNROLL") ? params.at("UNROLL") : 1);
    for (auto const& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {1000, 1}, {1, 5003}, {1024, 4096}, {3, 65536}}) {
        lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
        options.sizes = {{"M", m}, {"N", n}};
        auto const kernel = lowering::emitKernel(graph, options);
        std::size_t const loops = (n + chunk - 1) / chunk > 4 ? s.reduces + 1 : 0;
        EXPECT_EQ(occurrences(kernel.code, "\n$loop_"), loops) << m << " x " << n;
        if (!runtime::findPtxas())
            continue;
        auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
        EXPECT_TRUE(result.ok()) << m << " x " << n;
    }
}

// Made for a problem whose rows are one chunk each (N <= UNROLL x LANES x VEC), a kernel loads
// its rows in the first pass and holds them for the others: a softmax reads X once, not three
// times, and at two chunks a row (written out) it holds both; made for any size, or for rows of
// more than four chunks (a loop a pass), it reads X in each pass.
TEST(NormalizationHeldRows, ARowOfFewChunksIsReadOnce) {
    Params const params = cooperative({{"ROWS", 1}, {"LANES", 128}, {"VEC", 8}});
    KernelGraph const graph = lowered("softmax-f16.json", "reduction.pipeline.json", params);
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
    EXPECT_EQ(globalVectorLoads(lowering::emitKernel(graph, options).code), 3u);
    for (auto const& [n, reads] : std::vector<std::pair<std::int64_t, std::size_t>>{
             {1024, 1}, {1000, 1}, {1025, 2}, {5000, 3}}) {
        options.sizes = {{"M", 64}, {"N", n}};
        auto const kernel = lowering::emitKernel(graph, options);
        EXPECT_EQ(globalVectorLoads(kernel.code), reads) << "N = " << n;
        lowering::CodegenOptions amd{.target = "gfx942", .schedule = params};
        amd.sizes = options.sizes;
        auto const gcn = lowering::emitKernel(
            lowered("softmax-f16.json", "reduction.pipeline.json", params, "gfx942"), amd);
        EXPECT_EQ(occurrences(gcn.code, "global_load_dwordx4"), reads) << "N = " << n;
        if (!runtime::findPtxas())
            continue;
        auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_EQ(result.value().spillStores, 0);
    }
}

// A held f16 element is kept as a 32-bit word and widened again where the store's pass reads it
// (PtxCodegen::again()). Where the row's loads always run (N = 1024) the word is the load's; at a
// ragged row end (N = 1000, N = 1) an element may come from an element-by-element load instead,
// so the words are packed from the loaded elements after the loads (holdAsWords()): re-reading
// the vector load's word there read garbage (every masked case failed on the H100 at 34ea0ce),
// and holding the f32 elements instead spilled.
TEST(NormalizationHeldRows, AnElementIsWidenedAgainFromAWordEveryPathWrote) {
    Params const params = cooperative({{"ROWS", 1}, {"LANES", 256}, {"VEC", 4}});
    KernelGraph const graph = lowered("softmax-f16.json", "reduction.pipeline.json", params);
    // The words the store's pass unpacks, and how many of them were packed after the loads.
    auto const words = [&](std::int64_t n) {
        lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
        options.sizes = {{"M", 33}, {"N", n}};
        std::string const code = lowering::emitKernel(graph, options).code;
        std::regex const unpack(R"(mov\.b32 \{%h\d+, %h\d+\}, (%b\d+);)");
        std::string const store = code.substr(code.rfind("bar.sync"));
        std::size_t read = 0, packed = 0;
        for (std::sregex_iterator it(store.begin(), store.end(), unpack), end; it != end; ++it) {
            ++read;
            packed += occurrences(code, "mov.b32 " + (*it)[1].str() + ", {");
        }
        return std::pair{read, packed};
    };
    EXPECT_EQ(words(1024), (std::pair<std::size_t, std::size_t>{4, 0})); // the loads' words
    EXPECT_EQ(words(1000), (std::pair<std::size_t, std::size_t>{4, 4}));
    EXPECT_EQ(words(1), (std::pair<std::size_t, std::size_t>{4, 4}));
}

// The held-row layer norm of issue 19's 8192 x 8192 f16 matrix (a row of 8192 in one chunk of
// 512 lanes x 2 steps of 8, X read once) fits two workgroups a multiprocessor: at most 64
// registers, no spills. Its store's pass loaded gamma and beta for both steps before computing
// either, 86 registers, one workgroup a multiprocessor, and each row's load, two exchanges and
// store then ran one after another (260-314 us on the H100 against 148 us for three passes).
// Each workitem reads one warp's value from shared memory in each exchange (it read all 16).
TEST(NormalizationHeldRows, TwoHeldLayerNormWorkgroupsFitAMultiprocessor) {
    Params const params = cooperative({{"ROWS", 1}, {"LANES", 512}, {"VEC", 8}, {"UNROLL", 2}});
    KernelGraph const graph = lowered("layernorm-f16.json", "reduction.pipeline.json", params);
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
    options.sizes = {{"M", 8192}, {"N", 8192}};
    auto const kernel = lowering::emitKernel(graph, options);
    EXPECT_EQ(globalVectorLoads(kernel.code), 6u); // X, gamma, beta: 2 steps each
    EXPECT_EQ(occurrences(kernel.code, "ld.shared"), 2u);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const result = runtime::assemblePtx(kernel.code, "sm_90a");
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_LE(result.value().registers * 512 * 2, 65536) << result.value().log;
    EXPECT_EQ(result.value().spillStores, 0) << result.value().log;
    EXPECT_EQ(result.value().spillLoads, 0);
}

// The layer norm of issue 19's 8192 x 8192 matrix, made for its sizes (as `kiln tune
// --specialize` makes its candidates): the rows are whole steps, so no element is missing and no
// read, count or square is masked; the kernel traps at other sizes instead. Its rsqrt(var + eps)
// is computed once per row and step, not once per element (16 sqrt.rn a step, 2.1x the
// instructions of torch.compile's kernel on the H100), Y is rounded to f16 by its store alone,
// and a softmax divides by its row's sum with one reciprocal. At N = 8190 the last step's elements
// are masked again.
TEST(NormalizationForItsSizes, TheLayerNormOfWholeRowsHasNoMasks) {
    Params const params =
        cooperative({{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}, {"UNROLL", 2}, {"ONLINE", 1}});
    KernelGraph const graph = lowered("layernorm-f16.json", "reduction.pipeline.json", params);
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
    options.sizes = {{"M", 8192}, {"N", 8192}};
    auto const whole = lowering::emitKernel(graph, options);
    EXPECT_EQ(occurrences(whole.code, "selp"), 0u);
    EXPECT_EQ(occurrences(whole.code, "ld.global.b16"), 0u); // no element-by-element edge
    EXPECT_EQ(occurrences(whole.code, "trap;"), 1u);
    EXPECT_EQ(whole.assumptions, (std::vector<std::string>{"M == 8192", "N == 8192"}));
    EXPECT_EQ(occurrences(whole.code, "sqrt.rn.f32"), 1u);
    // Welford's counts and weights are constants of the written-out chunks, and the row's length
    // a power of two: no division, the means are products (of 1/16 a chunk, 1/8192 a row).
    EXPECT_EQ(occurrences(whole.code, "div."), 0u);
    EXPECT_EQ(occurrences(whole.code, ", 0f3D800000;"), 2u);         // 1/16
    EXPECT_EQ(occurrences(whole.code, ", 0d3F20000000000000;"), 2u); // 1/8192
    // Y's 16 elements a chunk (two, written out), each rounded to f16 once, by its store (not
    // also when computed, and back to f32 for the store to round again).
    EXPECT_EQ(occurrences(whole.code, "cvt.rn.f16.f32"), 32u);
    // Its two chunks a row are held for the store's pass: X is read once (four loads a row, no
    // cache hint), and gamma and beta, which every row reads, stay in L1 (evict_last: a load each
    // a step). Made for any size, the statistics' pass keeps X in L1 (its two loads a chunk
    // evict_last) for the store's pass, whose reads of it are its last (no_allocate). A row sum,
    // which reads its rows once, says nothing.
    EXPECT_EQ(occurrences(whole.code, "ld.global.v4.b32"), 4u);
    EXPECT_EQ(occurrences(whole.code, "ld.global.L1::evict_last.v4.b32"), 8u);
    EXPECT_EQ(occurrences(whole.code, "ld.global.L1::no_allocate"), 0u);
    auto const anySize = lowering::emitKernel(
        graph, lowering::CodegenOptions{.target = "sm_90a", .schedule = params});
    EXPECT_EQ(occurrences(anySize.code, "ld.global.L1::evict_last.v4.b32"), 2u + 4u);
    EXPECT_EQ(occurrences(anySize.code, "ld.global.L1::no_allocate.v4.b32"), 2u);
    Params const rowSum = cooperative({{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}, {"UNROLL", 2}});
    lowering::CodegenOptions sumOptions{.target = "sm_90a", .schedule = rowSum};
    sumOptions.sizes = options.sizes;
    auto const sum = lowering::emitKernel(
        lowered("row-sum-rowmajor.json", "reduction.pipeline.json", rowSum), sumOptions);
    EXPECT_EQ(occurrences(sum.code, "L1::"), 0u);
    options.sizes = {{"M", 8192}, {"N", 8190}};
    auto const ragged = lowering::emitKernel(graph, options);
    EXPECT_GT(occurrences(ragged.code, "selp"), 0u);
    EXPECT_EQ(occurrences(ragged.code, "sqrt.rn.f32"), 1u);
    auto const softmax = lowering::emitKernel(
        lowered("softmax-f16.json", "reduction.pipeline.json", params), options);
    EXPECT_EQ(occurrences(softmax.code, "div."), 0u);
    EXPECT_EQ(occurrences(softmax.code, "rcp.approx"), 1u);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    for (auto const* kernel : {&whole, &ragged, &softmax}) {
        auto const result = runtime::assemblePtx(kernel->code, "sm_90a");
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_EQ(result.value().spillStores, 0);
    }
    // Its held rows kept as 32-bit words (16 registers for 32 f16 elements, each widened again
    // where the store's pass reads it): four workgroups of 256 a multiprocessor, and five at
    // MIN_BLOCKS=5 without a spill.
    EXPECT_LE(runtime::assemblePtx(whole.code, "sm_90a").value().registers, 64);
    Params capped = params;
    capped["MIN_BLOCKS"] = 5;
    lowering::CodegenOptions cappedOptions{.target = "sm_90a", .schedule = capped};
    cappedOptions.sizes = {{"M", 8192}, {"N", 8192}};
    auto const five =
        runtime::assemblePtx(lowering::emitKernel(graph, cappedOptions).code, "sm_90a");
    ASSERT_TRUE(five.ok()) << five.error().message();
    EXPECT_LE(five.value().registers, 48);
    EXPECT_EQ(five.value().spillStores, 0) << five.value().log;
}

// HOLD=0, as torch.compile's Triton layer norm runs: 512 lanes a row, four chunks of 2048
// written out for 8192, X read again by the store's pass (from L1 or L2) instead of held, so
// that four workgroups of 512 fit a multiprocessor (32 registers, no spill). The statistics'
// pass keeps X in L1 (evict_last) for the store's pass, whose reads are its last (no_allocate);
// held, X is read once, without a hint, and nothing is read again.
TEST(NormalizationForItsSizes, HoldZeroReadsTheRowsAgainInEachPass) {
    Params params = cooperative({{"ROWS", 1},
                                 {"LANES", 512},
                                 {"VEC", 4},
                                 {"UNROLL", 1},
                                 {"ONLINE", 1},
                                 {"MIN_BLOCKS", 4},
                                 {"HOLD", 0}});
    KernelGraph const graph = lowered("layernorm-f16.json", "reduction.pipeline.json", params);
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
    options.sizes = {{"M", 8192}, {"N", 8192}};
    auto const again = lowering::emitKernel(graph, options);
    EXPECT_EQ(occurrences(again.code, "ld.global.L1::evict_last.v2.b32"), 4u + 8u);
    EXPECT_EQ(occurrences(again.code, "ld.global.L1::no_allocate.v2.b32"), 4u);
    EXPECT_EQ(occurrences(again.code, "ld.global.v2.b32"), 0u);
    EXPECT_EQ(occurrences(again.code, "selp"), 0u); // written out: no masks
    Params held = params;
    held["HOLD"] = 1;
    lowering::CodegenOptions heldOptions = options;
    heldOptions.schedule = held;
    auto const once = lowering::emitKernel(graph, heldOptions);
    EXPECT_EQ(occurrences(once.code, "ld.global.v2.b32"), 4u);
    EXPECT_EQ(occurrences(once.code, "no_allocate"), 0u);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    auto const assembled = runtime::assemblePtx(again.code, "sm_90a");
    ASSERT_TRUE(assembled.ok()) << assembled.error().message();
    EXPECT_LE(assembled.value().registers, 32);
    EXPECT_EQ(assembled.value().spillStores, 0) << assembled.value().log;
}

// PREFETCH=330: before its first load, workitem 0 of each workgroup asks L2 for the row of
// the workgroup 330 after it (16 KiB of X, one cp.async.bulk.prefetch), unless that is the last
// workgroup or past it; two rows a workgroup ask for 32 KiB; a persistent workgroup asks for each
// row it takes. Not in a kernel made for any size (no span to check), nor before sm_90, nor at
// PREFETCH=0.
TEST(NormalizationForItsSizes, TheRowsOfALaterWorkgroupAreAskedOfL2) {
    Params params = cooperative(
        {{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}, {"UNROLL", 2}, {"ONLINE", 1}, {"PREFETCH", 330}});
    KernelGraph const graph = lowered("layernorm-f16.json", "reduction.pipeline.json", params);
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
    options.sizes = {{"M", 8192}, {"N", 8192}};
    auto const prefetching = lowering::emitKernel(graph, options);
    EXPECT_EQ(occurrences(prefetching.code, "cp.async.bulk.prefetch.L2.global"), 1u);
    EXPECT_EQ(occurrences(prefetching.code, "], 16384;"), 1u);
    EXPECT_EQ(occurrences(prefetching.code, ", 330;"), 1u);
    auto const first = prefetching.code.find("cp.async.bulk.prefetch");
    EXPECT_LT(first, prefetching.code.find("ld.global.v4.b32")); // before the row's loads
    EXPECT_EQ(
        occurrences(lowering::emitKernel(graph, {.target = "sm_90a", .schedule = params}).code,
                    "prefetch"),
        0u);
    lowering::CodegenOptions ampere = options;
    ampere.target = "sm_80";
    EXPECT_EQ(occurrences(lowering::emitKernel(graph, ampere).code, "prefetch"), 0u);
    Params none = params;
    none["PREFETCH"] = 0;
    lowering::CodegenOptions noneOptions = options;
    noneOptions.schedule = none;
    EXPECT_EQ(occurrences(lowering::emitKernel(graph, noneOptions).code, "prefetch"), 0u);
    Params two = params;
    two["ROWS"] = 2;
    two["LANES"] = 128;
    lowering::CodegenOptions twoOptions = options;
    twoOptions.schedule = two;
    auto const pairs = lowering::emitKernel(
        lowered("softmax-f16.json", "reduction.pipeline.json", two), twoOptions);
    EXPECT_EQ(occurrences(pairs.code, "cp.async.bulk.prefetch.L2.global"), 1u);
    EXPECT_EQ(occurrences(pairs.code, "], 32768;"), 1u);
    // In a persistent grid (PERSISTENT=1), inside the loop over the rows a workgroup takes: the
    // rows of the workgroup 330 after each.
    Params looping = params;
    looping["PERSISTENT"] = 1;
    lowering::CodegenOptions loopingOptions = options;
    loopingOptions.schedule = looping;
    auto const persistent = lowering::emitKernel(graph, loopingOptions);
    EXPECT_EQ(occurrences(persistent.code, "cp.async.bulk.prefetch.L2.global"), 1u);
    std::size_t const loopTop = persistent.code.find("$tile_");
    ASSERT_NE(loopTop, std::string::npos);
    EXPECT_GT(persistent.code.find("cp.async.bulk.prefetch"), loopTop);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    for (auto const* kernel : {&prefetching, &pairs, &persistent}) {
        auto const result = runtime::assemblePtx(kernel->code, "sm_90a");
        ASSERT_TRUE(result.ok()) << result.error().message();
    }
}

// ONLINE=2: a row's pair of statistics merged in one exchange of f32 values. The layer norm of
// 8192^2 over 256 lanes made for its sizes: 2 barriers instead of 4, two shuffles a butterfly
// step (mean and M2; every workitem's count the same constant) over 5 + 3 steps instead of two
// exchanges of f64 halves, no f64 arithmetic left, lanes 0 and 1 of each warp writing its mean
// and M2; within the registers of five workgroups a multiprocessor. At any size the counts are
// exchanged too; a softmax merges its max and sum the same way. All assemble with ptxas.
TEST(NormalizationOneExchange, MergesThePairOfStatisticsOnce) {
    Params params = cooperative(
        {{"ROWS", 1}, {"LANES", 256}, {"VEC", 8}, {"UNROLL", 2}, {"ONLINE", 1}, {"MIN_BLOCKS", 5}});
    lowering::CodegenOptions options{.target = "sm_90a", .schedule = params};
    options.sizes = {{"M", 8192}, {"N", 8192}};
    auto const emit = [&](std::string const& command, std::int64_t online, bool sized) {
        Params p = params;
        p["ONLINE"] = online;
        lowering::CodegenOptions o = options;
        o.schedule = p;
        if (!sized)
            o.sizes.clear();
        return lowering::emitKernel(lowered(command, "reduction.pipeline.json", p), o).code;
    };
    std::string const two = emit("layernorm-f16.json", 1, true);
    std::string const one = emit("layernorm-f16.json", 2, true);
    EXPECT_EQ(occurrences(two, "bar.sync 0"), 4u);
    EXPECT_EQ(occurrences(one, "bar.sync 0"), 2u);
    EXPECT_EQ(occurrences(two, "shfl.sync.bfly.b32"), 2u * 2 * 8);
    EXPECT_EQ(occurrences(one, "shfl.sync.bfly.b32"), 2u * 8);
    EXPECT_GT(occurrences(two, ".f64 "), 0u);
    EXPECT_EQ(occurrences(one, ".f64 "), 0u);
    EXPECT_EQ(occurrences(one, "st.shared.b32"), 1u);
    EXPECT_EQ(occurrences(one, "ld.shared.b32"), 2u);
    std::string const anySize = emit("layernorm-f16.json", 2, false);
    EXPECT_EQ(occurrences(anySize, "shfl.sync.bfly.b32"), 3u * 8);
    EXPECT_EQ(occurrences(anySize, "ld.shared.b32"), 3u);
    std::string const softmax = emit("softmax-f16.json", 2, false);
    EXPECT_EQ(occurrences(softmax, "bar.sync 0"), 2u);
    EXPECT_EQ(occurrences(softmax, "shfl.sync.bfly.b32"), 2u * 8);
    if (!runtime::findPtxas())
        GTEST_SKIP() << "no ptxas on this machine";
    for (std::string const* code : {&one, &anySize, &softmax}) {
        auto const result = runtime::assemblePtx(*code, "sm_90a");
        ASSERT_TRUE(result.ok()) << result.error().message();
        EXPECT_EQ(result.value().spillStores, 0) << result.value().log;
        if (code == &one) {
            EXPECT_LE(result.value().registers, 48);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Schedules, Normalization, ::testing::ValuesIn(kSchedules),
                         [](auto const& p) { return p.param.name; });

// The one-row-per-workitem schedule does not lower a Reduce whose result is used back along its
// rows: code generation says which schedule does.
TEST(NormalizationRefuses, OneWorkitemPerRow) {
    try {
        lowering::emitKernel(lowered("softmax-f16.json", "reduction.pipeline.json", {{"COOP", 0}}),
                             {.target = "sm_90a", .schedule = {{"COOP", 0}}});
        ADD_FAILURE() << "COOP=0 lowered a softmax";
    } catch (UserError const& e) {
        EXPECT_NE(std::string(e.what()).find("with COOP=1, one whose result is used back along "
                                             "the rows"),
                  std::string::npos)
            << e.what();
    }
}

// A small softmax whole: 2 rows of 64 lanes a workgroup, 4 elements a read (shuffles over 32
// lanes, then two warps through shared memory), three passes over each row.
Params const kSmall{{"COOP", 1}, {"ROWS", 2}, {"LANES", 64}, {"VEC", 4}};

TEST(NormalizationGolden, LoweredGraph) {
    expectGoldenFile("tests/golden/softmax_f16_coop.lowered.txt",
                     toText(lowered("softmax-f16.json", "reduction.pipeline.json", kSmall)));
}

TEST(NormalizationGolden, PtxOnSm90) {
    auto const graph = lowered("softmax-f16.json", "reduction.pipeline.json", kSmall, "sm_90");
    expectGoldenFile("tests/golden/ptx/softmax_f16_coop.sm_90.ptx",
                     lowering::emitKernel(graph, {.target = "sm_90", .schedule = kSmall}).code);
}

} // namespace
} // namespace kiln::test
