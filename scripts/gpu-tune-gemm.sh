#!/usr/bin/env bash
# gpu-tune-gemm.sh: on the GPU machine, sweep the SIMT GEMM space (examples/gemm-f32.space.json)
# and measure what issue 7 asks: an exhaustive measured sweep (the reference for the cost model's
# rank correlation and for how many candidates each strategy needs to come within 2% of the
# best), budgeted random, evolutionary and model-guided sweeps, the winner at other sizes, and
# cuBLAS in the same run. Every step has a time limit so that one slow step cannot lose the rest;
# databases are flushed per candidate, so a step cut short still leaves its records in $OUT.
#
#   OUT=/tmp/out scripts/gpu-tune-gemm.sh        # build folder: $KILN_GPU_BUILD or /tmp/kiln-tune
#   SIZE=2048 BUDGET=40 STEP_SECONDS=200 ...     # the defaults
#   RESUME=path/exhaustive.jsonl ...             # go on with an earlier exhaustive sweep's records
#   F16=1 GUIDED_SIZES="1024 4096 8192" GUIDED_BUDGET=24 GUIDED_SECONDS=140 ...
#       # the f16 GEMM (examples/gemm-f16.json over examples/gemm.space.json, tensor cores
#       # included): only model-guided sweeps at GUIDED_SIZES, and cuBLAS f16 in the same run
#   KEEP_BUILD=0 ...                             # a fresh build folder (default: build on in it)
# Everything worth keeping is packed into $OUT/tune.tgz at the end (one file to fetch).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-tune-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-tune}
KEEP_BUILD=${KEEP_BUILD:-1}
SIZE=${SIZE:-2048}
BUDGET=${BUDGET:-40}
STEP_SECONDS=${STEP_SECONDS:-200}
REPORTS=${REPORTS:-/tmp/kiln-tune-reports}
mkdir -p "$OUT" "$REPORTS"
[ -n "${RESUME:-}" ] && cp "$RESUME" "$OUT/exhaustive.jsonl"

gpu_build
F16=${F16:-0}
GUIDED_SIZES=${GUIDED_SIZES:-1024 4096}
COMMAND=examples/gemm.json SPACE=examples/gemm-f32.space.json CUBLAS=cublas/sgemm
[ "$F16" = 1 ] && COMMAND=examples/gemm-f16.json SPACE=examples/gemm.space.json \
    CUBLAS=cublas/gemm_f16
problem() { echo "$COMMAND" --space "$SPACE" --size M="$1" --size N="$1" --size K="$1"; }
MEASURE=(--evaluator cuda -j "$JOBS" --warmup 2 --repetitions 10 --quiet)

[ "$F16" = 1 ] || {
step "exhaustive sweep at ${SIZE}^3, measured"
timeout "$STEP_SECONDS" "$KILN" tune $(problem "$SIZE") "${MEASURE[@]}" --strategy exhaustive \
    --db "$OUT/exhaustive.jsonl" -o "$REPORTS/exhaustive" >"$OUT/exhaustive.log" 2>&1
echo "exit $?; $(wc -l <"$OUT/exhaustive.jsonl") records"

for strategy in random evolutionary model-guided; do
    step "$strategy, $BUDGET candidates"
    timeout 60 "$KILN" tune $(problem "$SIZE") "${MEASURE[@]}" --strategy "$strategy" \
        --budget "$BUDGET" --db "$OUT/$strategy.jsonl" -o "$REPORTS/$strategy" \
        >"$OUT/$strategy.log" 2>&1
    "$KILN" db reach "$OUT/$strategy.jsonl" --reference "$OUT/exhaustive.jsonl" --within 2 \
        >"$OUT/$strategy.reach.txt" 2>&1
done
}

for size in $GUIDED_SIZES; do
    step "model-guided at ${size}^3, ${GUIDED_BUDGET:-16} candidates"
    timeout "${GUIDED_SECONDS:-60}" "$KILN" tune $(problem "$size") "${MEASURE[@]}" \
        --strategy model-guided --budget "${GUIDED_BUDGET:-16}" --db "$OUT/guided-$size.jsonl" \
        -o "$REPORTS/guided-$size" >"$OUT/guided-$size.log" 2>&1
done

step "cuBLAS in the same run"
timeout 60 "$BUILD/bench/kiln_gemm_bench" --benchmark_filter="$CUBLAS" \
    >"$OUT/cublas.log" 2>&1
step "done"
cp "$REPORTS/exhaustive/"*/report.txt "$OUT/exhaustive.report.txt" 2>/dev/null
cp "$REPORTS/exhaustive/"*/sweep.svg "$OUT/exhaustive.svg" 2>/dev/null
(cd "$OUT" && tar czf tune.tgz --exclude tune.tgz --remove-files ./*.*)
tar xzf "$OUT/tune.tgz" -C "$REPORTS"
echo
echo "================ summary ================"
for db in exhaustive random evolutionary model-guided $(for s in $GUIDED_SIZES; do echo guided-$s; done); do
    [ -f "$REPORTS/$db.jsonl" ] || continue
    echo "-- $db: $(wc -l <"$REPORTS/$db.jsonl" 2>/dev/null) records"
    "$KILN" db best "$REPORTS/$db.jsonl" 2>&1 | tail -3
done
cat "$REPORTS"/*.reach.txt 2>/dev/null
grep -E "cublas" "$REPORTS/cublas.log"
