// GeneratedKernelGpuTest.cpp: kernels emitted from the shipped pipelines run on the GPU on
// random inputs, at sizes that are and are not multiples of their tiles, and match the CPU
// reference (f32 within 1e-5 relative).
#include "LoweringTestSupport.h"
#include "gpu/GpuFixture.h"
#include "kiln/scheduler/DeviceRun.h"

namespace kiln::test {
namespace {

struct GpuCase {
    std::string name, command, pipeline;
    std::map<std::string, std::int64_t> params;
    std::map<std::string, double> problem;
};

class GeneratedKernelGpuTest : public runtime::test::GpuTest,
                               public ::testing::WithParamInterface<GpuCase> {};

TEST_P(GeneratedKernelGpuTest, MatchesTheReference) {
    GpuCase const& c = GetParam();
    std::string const target = device()->description().target;
    KernelGraph const graph = lowered(c.command, c.pipeline, c.params, target);
    auto const kernel = lowering::emitKernel(graph, {.target = target, .schedule = c.params});
    // A warpgroup schedule on Hopper must really run on wgmma, not on its mma.sync fallback.
    if (c.name.find("wgmma") != std::string::npos && target == "sm_90a") {
        EXPECT_NE(kernel.code.find("wgmma.mma_async"), std::string::npos);
    }
    Command const command = loadCommand(sourcePath("examples/" + c.command));
    auto problem = command.defaults;
    for (auto const& [name, value] : c.problem)
        problem[name] = value;
    auto const result = scheduler::runOnDevice(device(), command, problem, graph, kernel);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_LE(result.value().maxRelativeError, result.value().tolerance)
        << "in " << result.value().worstTensor;
    std::printf("[ gpu      ] %s: max relative error %.3g, %d registers\n", c.name.c_str(),
                result.value().maxRelativeError, result.value().registers);
    // The kernel for these sizes only, as a sweep's candidate and `kiln run` make it.
    lowering::CodegenOptions forProblem{.target = target, .schedule = c.params};
    for (auto const& name : command.sizes())
        forProblem.sizes[name] = static_cast<std::int64_t>(problem.at(name));
    auto const specialized = lowering::emitKernel(graph, forProblem);
    if (specialized.code == kernel.code)
        return;
    auto const again = scheduler::runOnDevice(device(), command, problem, graph, specialized);
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_LE(again.value().maxRelativeError, again.value().tolerance)
        << "for these sizes only, in " << again.value().worstTensor;
    std::printf("[ gpu      ] %s for these sizes only: max relative error %.3g, %d registers\n",
                c.name.c_str(), again.value().maxRelativeError, again.value().registers);
}

INSTANTIATE_TEST_SUITE_P(
    Shipped, GeneratedKernelGpuTest,
    ::testing::Values(
        GpuCase{"axpy_ragged", "axpy.json", "elementwise.pipeline.json", {}, {{"N", 1000003}}},
        GpuCase{"axpy_exact", "axpy.json", "elementwise.pipeline.json", {}, {{"N", 1 << 20}}},
        GpuCase{"axpy_one_element", "axpy.json", "elementwise.pipeline.json", {}, {{"N", 1}}},
        GpuCase{"axpy_vec1",
                "axpy.json",
                "elementwise.pipeline.json",
                {{"VEC", 1}, {"WG_SIZE", 128}},
                {{"N", 4099}}},
        GpuCase{
            "axpy_vec8", "axpy.json", "elementwise.pipeline.json", {{"VEC", 8}}, {{"N", 77777}}},
        GpuCase{"fused_f16",
                "fused-elementwise.json",
                "elementwise.pipeline.json",
                {{"VEC", 8}},
                {{"M", 1031}, {"N", 517}}},
        GpuCase{"fused_f16_vec4",
                "fused-elementwise.json",
                "elementwise.pipeline.json",
                {{"VEC", 4}, {"WG_SIZE", 64}},
                {}},
        GpuCase{"gemm_f32_ragged", "gemm.json", "gemm.pipeline.json", {}, {}},
        GpuCase{"gemm_f32_prefetch",
                "gemm.json",
                "gemm.pipeline.json",
                {{"STAGES", 2}},
                {{"M", 200}, {"N", 130}, {"K", 40}}},
        // Tensor cores (MMA=1): tiles that fit and tiles that overhang, rows whose length
        // (K = 77) leaves 16-byte runs unaligned, both operand orders (bf16: A and B stored
        // transposed, alpha/beta with C), prefetch deeper than the K loop is long.
        GpuCase{"gemm_f16_mma_64x64",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}},
                {{"M", 200}, {"N", 136}, {"K", 88}}},
        GpuCase{"gemm_f16_mma_64x64_4_stages",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 4}},
                {{"M", 200}, {"N", 136}, {"K", 88}}},
        GpuCase{
            "gemm_f16_mma_128x128_k77",
            "gemm-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
            {{"M", 300}, {"N", 260}, {"K", 77}}},
        GpuCase{
            "gemm_f16_mma_128x128_3_stages",
            "gemm-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
            {{"M", 384}, {"N", 256}, {"K", 512}}},
        GpuCase{"gemm_f16_mma_warp64",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 64}, {"MT_K", 16}, {"WT_M", 64}},
                {{"M", 256}, {"N", 192}, {"K", 256}}},
        // A grid of warps (WT_N > 0): 2 x 2 warps of 64 x 64, 4 x 2 of 32 x 64 with transposed
        // bf16 operands, ragged sizes and prefetch.
        GpuCase{"gemm_f16_mma_warp_grid_2x2",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1},
                 {"MT_M", 128},
                 {"MT_N", 128},
                 {"MT_K", 32},
                 {"WT_M", 64},
                 {"WT_N", 64},
                 {"STAGES", 3}},
                {{"M", 300}, {"N", 260}, {"K", 200}}},
        GpuCase{"gemm_bf16_mma_warp_grid_4x2",
                "gemm-bf16.json",
                "gemm.pipeline.json",
                {{"MMA", 1},
                 {"MT_M", 128},
                 {"MT_N", 128},
                 {"MT_K", 32},
                 {"WT_M", 32},
                 {"WT_N", 64},
                 {"STAGES", 2}},
                {{"M", 136}, {"N", 200}, {"K", 72}}},
        // 128 accumulators a lane: the epilogue reads C element by element (streamed).
        GpuCase{
            "gemm_bf16_mma_128x128_streamed_c",
            "gemm-bf16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
            {{"M", 200}, {"N", 136}, {"K", 72}}},
        // Warpgroups (sm_90a): wgmma on swizzled tiles, every operand layout (f16: A K-major,
        // B N-major; bf16: A M-major, B K-major), pipelined or not.
        GpuCase{
            "gemm_f16_wgmma_128x256",
            "gemm-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 256}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 4}},
            {{"M", 300}, {"N", 520}, {"K", 200}}},
        GpuCase{
            "gemm_bf16_wgmma_transposed",
            "gemm-bf16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}},
            {{"M", 200}, {"N", 136}, {"K", 200}}},
        // Shapes where cuBLAS picks split-K (small M, larger K): large enough for the cuBLAS
        // reference, which must not add the partial sums in f16 and so blame a correct kernel.
        GpuCase{
            "gemm_f16_wgmma_split_k_shape",
            "gemm-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 256}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 4}},
            {{"M", 129}, {"N", 4097}, {"K", 520}}},
        GpuCase{
            "gemm_f16_mma_split_k_shape",
            "gemm-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 128}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
            {{"M", 33}, {"N", 2051}, {"K", 4104}}},
        // K % 8 != 0: A's rows are not 16-byte aligned, so the pipelined loop's plain version
        // (branches, element-by-element edges) feeds wgmma.
        GpuCase{"gemm_f16_wgmma_unaligned_k",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}},
                {{"M", 96}, {"N", 80}, {"K", 133}}},
        GpuCase{"gemm_f16_wgmma_unpipelined",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 1}},
                {{"M", 130}, {"N", 72}, {"K", 136}}},
        // The K loop unrolled (gemm-k-unroll): K tiles not a multiple of UNROLL, the last
        // copies guarded; SIMT f32 and mma.sync with staging.
        GpuCase{"gemm_f32_unroll3",
                "gemm.json",
                "gemm.pipeline.json",
                {{"UNROLL", 3}},
                {{"M", 70}, {"N", 40}, {"K", 72}}},
        GpuCase{"gemm_f16_mma_unroll2",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1},
                 {"MT_M", 64},
                 {"MT_N", 64},
                 {"MT_K", 32},
                 {"WT_M", 32},
                 {"STAGES", 2},
                 {"UNROLL", 2}},
                {{"M", 130}, {"N", 90}, {"K", 200}}},
        GpuCase{"gemm_bf16_mma_transposed",
                "gemm-bf16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 2}},
                {{"M", 130}, {"N", 90}, {"K", 72}}},
        GpuCase{"gemm_bf16_mma_transposed_aligned",
                "gemm-bf16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
                {{"M", 136}, {"N", 96}, {"K", 72}}},
        // Prefetch where the last round of a staged tile leaves workitems without a run: they
        // must not copy (even zeros) at all.
        GpuCase{"gemm_f16_simt_prefetch",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"STAGES", 2}},
                {{"M", 256}, {"N", 192}, {"K", 256}}},
        GpuCase{"gemm_f16_mma_prefetch_partial_rounds",
                "gemm-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 32}, {"MT_K", 16}, {"WT_M", 16}, {"STAGES", 3}},
                {{"M", 200}, {"N", 136}, {"K", 88}}},
        // Fused epilogues (issue 19): bias + tanh-GELU (the bias broadcast over the rows) and
        // scaled product + residual + ReLU, on every GEMM path, at sizes no tile divides and
        // at round ones; f16 results within 1e-2 of the CPU reference.
        GpuCase{"gemm_bias_gelu_simt_ragged",
                "gemm-bias-gelu-f16.json",
                "gemm.pipeline.json",
                {{"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}},
                {{"M", 201}, {"N", 139}, {"K", 77}}},
        GpuCase{"gemm_residual_relu_simt_round",
                "gemm-residual-relu-epilogue-f16.json",
                "gemm.pipeline.json",
                {{"MT_M", 64}, {"MT_N", 64}, {"MT_K", 16}, {"STAGES", 2}},
                {{"M", 256}, {"N", 192}, {"K", 128}}},
        GpuCase{"gemm_bias_gelu_mma_ragged",
                "gemm-bias-gelu-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1}, {"MT_M", 64}, {"MT_N", 64}, {"MT_K", 32}, {"WT_M", 32}, {"STAGES", 3}},
                {{"M", 200}, {"N", 138}, {"K", 88}}},
        GpuCase{"gemm_residual_relu_mma_warp_grid_ragged",
                "gemm-residual-relu-epilogue-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1},
                 {"MT_M", 128},
                 {"MT_N", 128},
                 {"MT_K", 32},
                 {"WT_M", 64},
                 {"WT_N", 64},
                 {"STAGES", 3}},
                {{"M", 300}, {"N", 262}, {"K", 77}}},
        GpuCase{"gemm_bias_gelu_mma_warp_grid_round",
                "gemm-bias-gelu-f16.json",
                "gemm.pipeline.json",
                {{"MMA", 1},
                 {"MT_M", 128},
                 {"MT_N", 128},
                 {"MT_K", 32},
                 {"WT_M", 64},
                 {"WT_N", 64},
                 {"STAGES", 3}},
                {{"M", 512}, {"N", 256}, {"K", 256}}},
        GpuCase{
            "gemm_bias_gelu_wgmma_128x256_ragged",
            "gemm-bias-gelu-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 256}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 4}},
            {{"M", 300}, {"N", 521}, {"K", 200}}},
        GpuCase{
            "gemm_bias_gelu_wgmma_128x256_round",
            "gemm-bias-gelu-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 256}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 4}},
            {{"M", 512}, {"N", 512}, {"K", 256}}},
        GpuCase{
            "gemm_residual_relu_wgmma_128x128_ragged",
            "gemm-residual-relu-epilogue-f16.json",
            "gemm.pipeline.json",
            {{"MMA", 1}, {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 64}, {"WT_M", 16}, {"STAGES", 3}},
            {{"M", 133}, {"N", 250}, {"K", 133}}},
        GpuCase{"row_sum", "row-reduction.json", "reduction.pipeline.json", {}, {}},
        GpuCase{"row_sum_tall",
                "row-reduction.json",
                "reduction.pipeline.json",
                {},
                {{"M", 4097}, {"N", 3}}}),
    [](auto const& p) { return p.param.name; });

} // namespace
} // namespace kiln::test
