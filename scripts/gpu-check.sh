#!/usr/bin/env bash
# gpu-check.sh: on the GPU machine, build the GPU parts of Kiln in a fresh folder, run the `gpu`
# tests (and the rest of the runtime's), run the GPU benchmarks (copy, generated kernels, GEMM
# against cuBLAS), a short measured tuning sweep, and leave logs and JSON in $OUT.
# Prints a short table last. Exit status: non-zero when the build, a test or the benchmark fails.
#
#   OUT=/tmp/out scripts/gpu-check.sh            # build folder: $KILN_GPU_BUILD or /tmp/kiln-gpu
#   SKIP="gpu-bench codegen" scripts/gpu-check.sh  # leave steps out: gpu-bench codegen gemm tune
#   GEMM_FILTER=f16 scripts/gpu-check.sh           # only the GEMM benchmarks matching a regex
#   KEEP_BUILD=1 ...                                # build on in an existing $KILN_GPU_BUILD
# A whole run takes about 11 minutes on the lent H100 host (docs/runtime.md): SKIP=tune fits a
# 10-minute call.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-check-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-gpu}
mkdir -p "$OUT"

gpu_device
nvidia-smi >>"$OUT/device.txt" 2>&1 || echo "nvidia-smi failed (see device.txt)"
gpu_build kiln_runtime_tests kiln_gpu_bench kiln_lowering_tests kiln_codegen_bench
grep -E "runtime:" "$OUT/configure.log"
gpu_tests ""

step "ctest: the rest of the runtime (CPU tests, ptxas)"
(cd "$BUILD" && ctest -L 'runtime|lowering|cli' -LE gpu --output-on-failure) >"$OUT/ctest-runtime.log" 2>&1 \
    || status=1
grep -E "tests passed|\(Failed\)" "$OUT/ctest-runtime.log"

# Twice: the spread between the two passes says how far apart two versions must be to differ.
step "kiln_gpu_bench, two passes"
: >"$OUT/gpu-bench.log"
want gpu-bench && for pass in 1 2; do
    echo "---- pass $pass" >>"$OUT/gpu-bench.log"
    if ! "$BUILD/bench/kiln_gpu_bench" --json "$OUT/gpu-bench-$pass.json" \
            >>"$OUT/gpu-bench.log" 2>&1; then
        status=1
    fi
done

step "kiln_codegen_bench: generated kernels against the copy bandwidth"
: >"$OUT/codegen-bench.log"
if want codegen; then
    "$BUILD/bench/kiln_codegen_bench" --benchmark_out="$OUT/codegen-bench.json" \
        --benchmark_out_format=json >"$OUT/codegen-bench.log" 2>&1 || status=1
fi

step "kiln_gemm_bench: generated GEMM against cuBLAS"
: >"$OUT/gemm-bench.log"
if want gemm; then
    "$BUILD/bench/kiln_gemm_bench" --benchmark_filter="${GEMM_FILTER:-.}" \
        --benchmark_out="$OUT/gemm-bench.json" \
        --benchmark_out_format=json >"$OUT/gemm-bench.log" 2>&1 || status=1
fi

# A short measured sweep on the GPU: axpy over the element-wise space, every point (4Mi
# elements: 48 MiB of traffic; each candidate's CPU reference takes about 2 s).
step "kiln tune: axpy over examples/elementwise.space.json on the GPU"
: >"$OUT/tune.log"
if want tune; then
    "$KILN" tune examples/axpy.json --space examples/elementwise.space.json \
        --size N=4194304 --evaluator cuda --strategy exhaustive --repetitions 20 --quiet \
        -o "$OUT/tune" >"$OUT/tune.log" 2>&1 || status=1
fi
tail -3 "$OUT/tune.log"

echo
echo "================ summary ================"
grep -E "tests passed" "$OUT/ctest-gpu.log" | sed 's/^/ctest -L gpu: /'
grep -E "tests passed" "$OUT/ctest-runtime.log" | sed 's/^/ctest -L runtime -LE gpu: /'
sed -n '/^---- pass 2/,$p' "$OUT/gpu-bench.log"
grep -E "^(copy|axpy|fused|row_sum)" "$OUT/codegen-bench.log"
grep -E "^(cuBLAS|cublas/|kiln/|mma_sync_peak)" "$OUT/gemm-bench.log"
head -12 "$OUT"/tune/*/report.txt 2>/dev/null
echo "status: $status (logs and JSON in $OUT)"
exit $status
