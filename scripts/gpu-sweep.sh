#!/usr/bin/env bash
# gpu-sweep.sh: on the GPU machine, how fast a measured sweep runs (issue 15). Builds Kiln in a
# fresh folder, runs the GPU tests, then times on the local GPUs:
#   1. the README's main job (make demo's tune: the f16 GEMM at 4096^3 over
#      examples/gemm.space.json, budget 96, -j nproc) with an empty compile cache;
#   2. the same sweep again into a new database: compiles come from the cache;
#   3. Triton compiling and timing 16 configs of its tutorial GEMM, and cuBLAS, at the same size;
#   4. `kiln run` of the winner, to set its time beside the one the sweep recorded.
# Logs, databases and a summary go to $OUT; a short table is printed last.
#
#   OUT=/tmp/out scripts/gpu-sweep.sh          # build folder: $KILN_GPU_BUILD or /tmp/kiln-sweep
#   SKIP="tests" BUDGET=96 SIZE=4096 ...       # leave the GPU tests out; the defaults
#   SPECIALIZE=1 ...                           # kiln tune/run --specialize
#   GPUS="1 2" ...                             # also: the sweep on the first 1, then 2 GPUs
#                                              # (CUDA_VISIBLE_DEVICES), each from a cold cache
#   KEEP_BUILD=1 ...                           # build on in an existing $KILN_GPU_BUILD
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-sweep-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-sweep}
BUDGET=${BUDGET:-96}
SIZE=${SIZE:-4096}
mkdir -p "$OUT"

gpu_device
gpu_build
want tests && gpu_tests "" 'gpu|cli'

sweep() { # NAME CACHE [DEVICES]: one sweep as `make demo` runs it, timed
    local name=$1 cache=$2
    step "sweep $name (cache $cache)"
    local start=$SECONDS
    # An empty CUDA_VISIBLE_DEVICES hides every GPU: set it only to name some.
    env ${3:+CUDA_VISIBLE_DEVICES=$3} KILN_CACHE_DIR="$cache" timeout 400 "$KILN" tune examples/gemm-f16.json \
        --space examples/gemm.space.json --size M=$SIZE --size N=$SIZE --size K=$SIZE \
        --budget "$BUDGET" -j "$JOBS" ${SPECIALIZE:+--specialize} -o "$OUT/$name" \
        >"$OUT/$name.log" 2>&1 || status=1
    echo "$name: $((SECONDS - start)) s wall" | tee -a "$OUT/summary.txt"
    grep -E "cand/s|candidates|compil|measur|winner|exported" "$OUT/$name.log" | tail -6 \
        | tee -a "$OUT/summary.txt"
}
sweep first /tmp/kiln-cache
sweep again /tmp/kiln-cache
for n in ${GPUS:-}; do
    sweep "gpus-$n" "/tmp/kiln-cache-gpus-$n" "$(seq -s, 0 $((n - 1)))"
done

step "peers: Triton compiling and timing configs, cuBLAS"
timeout 300 python3 bench/peers/triton_sweep.py "$SIZE" >"$OUT/triton.log" 2>&1 || status=1
grep -E "^(triton|torch)" "$OUT/triton.log" | tee -a "$OUT/summary.txt"

step "kiln run of the winner"
db="$OUT/first/tuning.jsonl"
[ -n "${GPUS:-}" ] && db="$OUT/gpus-${GPUS%% *}/tuning.jsonl"
winner=$(best_point "$db")
recorded=$("$KILN" db best "$db" | sed -n 's/.*: \([0-9.]*\) us.*/\1/p' | head -1)
echo "winner $winner, recorded ${recorded} us" | tee -a "$OUT/summary.txt"
if [ -n "$winner" ]; then
    for i in 1 2; do
        "$KILN" run examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --params "$winner" \
            --target "$(sed -n 's/.*for \(sm_[0-9a-z]*\) .*/\1/p' "${db%/tuning.jsonl}.log" | head -1)" \
            --size M=$SIZE --size N=$SIZE --size K=$SIZE --repetitions 100 \
            ${SPECIALIZE:+--specialize} 2>&1 \
            | tee -a "$OUT/run.log" | grep -E "time|error" | tee -a "$OUT/summary.txt"
    done
fi

echo
echo "================ summary ================"
cat "$OUT/summary.txt"
grep -E "tests passed" "$OUT/ctest-gpu.log" 2>/dev/null
echo "status: $status (logs in $OUT)"
exit $status
