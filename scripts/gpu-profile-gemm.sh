#!/usr/bin/env bash
# gpu-profile-gemm.sh: on the GPU machine, profile one generated GEMM with Nsight Compute and run
# one GEMM under compute-sanitizer, for the questions a benchmark figure leaves open (what the
# warps wait on, whether an access is out of bounds or misaligned). Logs under $OUT.
#
#   OUT=/tmp/out PARAMS=MMA=1,MT_M=128,MT_N=128,MT_K=32,WT_M=32,STAGES=3 SIZE=4096 \
#       scripts/gpu-profile-gemm.sh
#   CHECK_PARAMS=... CHECK_SIZES="--size M=200 --size N=136 --size K=88"  (the sanitizer's run)
# It builds on in $KILN_GPU_BUILD (default /tmp/kiln-gpu, the folder scripts/gpu-check.sh leaves);
# KEEP_BUILD=0 builds in a fresh one.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-profile-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-gpu}
KEEP_BUILD=${KEEP_BUILD:-1}
COMMAND=${COMMAND:-examples/gemm-f16.json}
PARAMS=${PARAMS:-MMA=1,MT_M=128,MT_N=128,MT_K=32,WT_M=32,STAGES=3}
SIZE=${SIZE:-4096}
mkdir -p "$OUT"
PATH=/usr/local/cuda/bin:$PATH

gpu_build

if [ -n "${CHECK_PARAMS:-}" ]; then
    echo "== compute-sanitizer: $COMMAND $CHECK_PARAMS ${CHECK_SIZES:-}"
    # shellcheck disable=SC2086
    compute-sanitizer --tool memcheck --show-backtrace no "$KILN" run "$COMMAND" \
        --pipeline rules/gemm.pipeline.json --params "$CHECK_PARAMS" ${CHECK_SIZES:-} \
        >"$OUT/sanitizer.log" 2>&1
    grep -E "Invalid|misaligned|Address|at 0x|ERROR SUMMARY|max relative" "$OUT/sanitizer.log" |
        awk '!seen[$0]++' | head -20
fi

echo "== ncu metrics: stall reasons per issued instruction, pipes"
stalls=""
for r in barrier long_scoreboard short_scoreboard math_pipe_throttle wait mio_throttle \
         not_selected selected dispatch_stall lg_throttle no_instructions branch_resolving; do
    stalls+="smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio,"
done
ncu --kernel-name regex:kiln_ --launch-skip 1 --launch-count 1 \
    --metrics "${stalls}sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum" \
    "$KILN" run "$COMMAND" --pipeline rules/gemm.pipeline.json --params "$PARAMS" \
    --size M="$SIZE" --size N="$SIZE" --size K="$SIZE" --repetitions 2 >"$OUT/ncu-metrics.log" 2>&1
grep -E "stalled|pipe|inst_executed|issue_active|bank" "$OUT/ncu-metrics.log" |
    sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//'

echo "== ncu: $COMMAND $PARAMS at $SIZE cubed"
ncu --kernel-name regex:kiln_ --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats \
    "$KILN" run "$COMMAND" --pipeline rules/gemm.pipeline.json --params "$PARAMS" \
    --size M="$SIZE" --size N="$SIZE" --size K="$SIZE" --repetitions 2 >"$OUT/ncu.log" 2>&1
grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Registers|Achieved Occupancy|Theoretical Occupancy|Bank|Block Limit|max relative" \
    "$OUT/ncu.log" | head -60
