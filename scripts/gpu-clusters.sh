#!/usr/bin/env bash
# gpu-clusters.sh: on the GPU machine, thread-block clusters for the Hopper GEMM (CLUSTER_M,
# CLUSTER_N; issue 18): the shared operand multicast by the copy engine. Builds Kiln in a fresh
# folder, runs the GPU tests of clusters and of the paths they build on (TMA, persistent tiles,
# the staged epilogue, the runtime's cluster launches), then times at each of SIZES the f16 GEMM
# at the tuner's 4096^3 winner (128 x 256, 4 stages, producer warpgroup, GROUP_M=8, persistent)
# without and with clusters along M and N, with `kiln run --repetitions` twice, and
# torch.matmul (cuBLAS, bench/peers/cublas_peers.py) in the same call; SWEEP=1 adds kiln tune
# over the shipped space (clusters among its parameters). Logs go to $OUT; a table is printed last.
#
# What to look at first: whether a persistent cluster point (ws-...-p-cm2) is much slower than
# the non-persistent one (ws-...-cm2): a persistent grid of 132 workgroups is 66 clusters of two,
# which the H100 may not hold at once (kiln does not ask cuOccupancyMaxActiveClusters yet).
#
#   OUT=/tmp/out scripts/gpu-clusters.sh        # build folder: $KILN_GPU_BUILD or /tmp/kiln-clusters
#   SKIP="tests" SIZES="4096 2048" SWEEP=1 BUDGET=64 ...
#   TESTS='Cluster|TmaGemmGpu|TmaTest|PersistentTilesGpu|StagedEpilogueGpu' ...
#   KEEP_BUILD=1 ...                            # build on in an existing $KILN_GPU_BUILD
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-clusters-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-clusters}
SIZES=${SIZES:-4096 2048}
TESTS=${TESTS:-Cluster|TmaGemmGpu|TmaTest|PersistentTilesGpu|StagedEpilogueGpu}
mkdir -p "$OUT"

WS="MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8"
# name:command:params
POINTS=${POINTS:-"
ws-128x256-p:gemm-f16.json:$WS,PERSISTENT=1
ws-128x256-p-cm2:gemm-f16.json:$WS,PERSISTENT=1,CLUSTER_M=2
ws-128x256-p-cn2:gemm-f16.json:$WS,PERSISTENT=1,CLUSTER_N=2
ws-128x256:gemm-f16.json:$WS
ws-128x256-cm2:gemm-f16.json:$WS,CLUSTER_M=2
ws-128x256-cn2:gemm-f16.json:$WS,CLUSTER_N=2
ws-128x256-p-e-cm2:gemm-f16.json:$WS,PERSISTENT=1,EPILOGUE=1,CLUSTER_M=2
tma-128x256-p-cm2:gemm-f16.json:MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,STAGES=4,TMA=1,GROUP_M=8,PERSISTENT=1,CLUSTER_M=2
bf16-ws-128x256-p:gemm-bf16.json:$WS,PERSISTENT=1
bf16-ws-128x256-p-cm2:gemm-bf16.json:$WS,PERSISTENT=1,CLUSTER_M=2
"}

gpu_device
gpu_build
want tests && gpu_tests "$TESTS"

: >"$OUT/table.txt"
for size in $SIZES; do
    step "kiln run at $size^3"
    for point in $POINTS; do
        IFS=: read -r name command params <<<"$point"
        for i in 1 2; do
            log="$OUT/run.log"
            echo "### $name ($command $params) at $size #$i" >>"$log"
            line=$(timeout 120 "$KILN" run "examples/$command" --pipeline rules/gemm.pipeline.json \
                --params "$params" --size M="$size" --size N="$size" --size K="$size" \
                --repetitions 100 2>&1 | tee -a "$log" | median_ms)
            grep -E "error|registers" "$log" | tail -2 | sed "s/^/  $name: /"
            [ -z "$line" ] && status=1
            echo "$size-$name $i ${line:-failed}" >>"$OUT/table.txt"
        done
    done
    if [ "${SWEEP:-0}" = 1 ]; then
        step "kiln tune at $size^3 (budget ${BUDGET:-64})"
        timeout 300 "$KILN" tune examples/gemm-f16.json --space examples/gemm.space.json \
            --size M="$size" --size N="$size" --size K="$size" --budget "${BUDGET:-64}" -j "$JOBS" \
            -o "$OUT/sweep-$size" >"$OUT/sweep-$size.log" 2>&1 || status=1
        "$KILN" db best "$OUT/sweep-$size/tuning.jsonl" 2>&1 | head -3 | tee "$OUT/sweep-$size-best.txt"
    fi
    step "cuBLAS (torch.matmul) at $size^3"
    timeout 120 python3 bench/peers/cublas_peers.py --rounds 2 "$size" 2>&1 | awk -v s="$size" '
        $1 == "cublas" { printf "%s-cublas-%s %d %.4f\n", s, ($3 == "f16" ? "float16" : "bfloat16"),
                         $4, $5 / 1000; next } { print }' >>"$OUT/cublas.log" || status=1
    grep -E "^$size-cublas" "$OUT/cublas.log" >>"$OUT/table.txt" || tail -5 "$OUT/cublas.log"
done

echo
echo "================ summary (median ms; ratio = cuBLAS / it, same size and type) ================"
# Each row's two times, against the first cuBLAS time of its size and type.
awk '{ t[$1] = (t[$1] == "" ? $3 : t[$1] " " $3) }
     $1 ~ /-cublas-/ && !($1 in ref) { ref[$1] = $3 }
     END { for (k in t) {
             split(k, part, "-"); type = (k ~ /bf16|bfloat16/) ? "bfloat16" : "float16";
             r = ref[part[1] "-cublas-" type]; split(t[k], v, " ");
             printf "%-30s %-22s %s\n", k, t[k], (v[1] + 0 > 0 && r > 0) ? sprintf("%.3fx", r / v[1]) : "" } }' \
    "$OUT/table.txt" | sort
grep -E "tests passed" "$OUT/ctest-gpu.log" 2>/dev/null
echo "status: $status (logs in $OUT)"
exit "$status"
