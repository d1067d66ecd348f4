#!/usr/bin/env bash
# gpu-steps.sh: on the GPU machine, what each step of the Hopper GEMM brought (issue 18): the f16
# GEMM at SIZE^3 at one schedule per step (the mma.sync warp grid, wgmma with cp.async, the copy
# engine's loads, a producer warpgroup, the grouped tile order, persistent tiles, the result
# staged and stored by the copy engine, clusters of two along M), each
# timed with `kiln run --repetitions 100` and profiled once with Nsight Compute (duration, SM
# and memory throughput, DRAM and L2 traffic, L2 hit rate, registers, occupancy), and cuBLAS
# (torch.matmul) in the same call. Logs under $OUT; the table, ratios to cuBLAS, last.
#
#   OUT=/tmp/out scripts/gpu-steps.sh            # build folder: $KILN_GPU_BUILD or /tmp/kiln-steps
#   SIZE=4096 STEPS="name:params ..." NCU=0 ...  # the defaults are below; NCU=0: timings only
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-steps-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-steps}
SIZE=${SIZE:-4096}
NCU=${NCU:-1}
mkdir -p "$OUT"
PATH=/usr/local/cuda/bin:$PATH

W="MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4"
STEPS=${STEPS:-"
mma.sync-warp-grid:MMA=1,MT_M=128,MT_N=256,MT_K=32,WT_M=64,WT_N=64,STAGES=3
wgmma-cp.async:$W
+tma:$W,TMA=1
+warp-specialize:$W,TMA=1,WARP_SPECIALIZE=1
+group-m:$W,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8
+persistent:$W,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8,PERSISTENT=1
+staged-epilogue:$W,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8,PERSISTENT=1,EPILOGUE=1
+cluster-m:$W,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8,PERSISTENT=1,EPILOGUE=1,CLUSTER_M=2
"}

gpu_device
gpu_build
sizes=(--size M="$SIZE" --size N="$SIZE" --size K="$SIZE")
: >"$OUT/steps.txt"
for s in $STEPS; do
    name=${s%%:*} params=${s#*:}
    step "$name: $params"
    ms=$("$KILN" run examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --params "$params" \
        "${sizes[@]}" --repetitions 100 2>&1 | tee "$OUT/run-$name.log" | median_ms)
    grep -E "error|registers" "$OUT/run-$name.log" | head -2
    metrics="- - - - - -"
    if [ "$NCU" = 1 ]; then
        ncu --kernel-name regex:kiln_ --launch-skip 1 --launch-count 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
            --section LaunchStats "$KILN" run examples/gemm-f16.json \
            --pipeline rules/gemm.pipeline.json --params "$params" "${sizes[@]}" \
            --repetitions 2 >"$OUT/ncu-$name.log" 2>&1 || status=1
        # The value of the first "Name  Unit  Value" row of that name (Speed Of Light's
        # Memory Throughput in %, not Memory Workload Analysis's in GB/s).
        value() { awk -v k="$1" 'index($0, k) == 1 && v == "" { v = $NF }
                                 END { print (v == "" ? "-" : v) }' \
            <(sed 's/^ *//' "$OUT/ncu-$name.log"); }
        metrics="$(value 'Compute (SM) Throughput') $(value 'Memory Throughput') \
$(value 'DRAM Throughput') $(value 'L2 Hit Rate') $(value 'Registers Per Thread') \
$(value 'Achieved Occupancy')"
    fi
    echo "$name ${ms:-failed} $metrics" >>"$OUT/steps.txt"
done

step "cuBLAS (torch.matmul)"
timeout 120 python3 bench/peers/cublas_peers.py "$SIZE" 2>"$OUT/cublas.err" |
    awk '$1 == "cublas" && $3 == "f16" { print $5 }' >"$OUT/cublas.txt" || status=1
cublas=$(head -1 "$OUT/cublas.txt")

echo
echo "================ issue 18, step by step: f16 at $SIZE^3 (ms; ratio = cuBLAS / Kiln) ================"
printf "%-20s %9s %8s %8s %8s %8s %8s %6s %8s\n" step ms ratio "SM %" "mem %" "DRAM %" \
    "L2 hit%" regs "occup %"
while read -r name ms sm mem dram l2 regs occ; do
    ratio=$(awk -v c="${cublas:-0}" -v k="$ms" 'BEGIN {
        if (c > 0 && k + 0 > 0) printf "%.3fx", c / 1000 / k; else printf "-" }')
    printf "%-20s %9s %8s %8s %8s %8s %8s %6s %8s\n" "$name" "$ms" "$ratio" "$sm" "$mem" "$dram" \
        "$l2" "$regs" "$occ"
done <"$OUT/steps.txt"
echo "cuBLAS: ${cublas:-?} us"
echo "status: $status (logs in $OUT)"
exit $status
