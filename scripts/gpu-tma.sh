#!/usr/bin/env bash
# gpu-tma.sh: on the GPU machine, the wgmma GEMM whose K slices the copy engine loads (TMA=1,
# issue 18; WARP_SPECIALIZE=1: issued by a producer warpgroup; GROUP_M: the tiles in groups of
# rows) against the same schedule staged
# with cp.async, and cuBLAS. Builds Kiln in a fresh
# folder, runs the GPU tests of TMA and wgmma kernels, then times at SIZE^3 (f16, and bf16 with
# A and B stored transposed) each schedule of POINTS with `kiln run --repetitions` twice, and
# torch.matmul (cuBLAS, bench/peers/cublas_peers.py) in the same call. Logs go to $OUT; a short
# table is printed last.
#
#   OUT=/tmp/out scripts/gpu-tma.sh            # build folder: $KILN_GPU_BUILD or /tmp/kiln-tma
#   SKIP="tests sweep" SIZE=4096 BUDGET=64 ... # leave the GPU tests or the sweep out; defaults
#   TESTS='Tma|wgmma|capi-torch|TileOrder' ... # the ctest regex of the GPU tests
#   KEEP_BUILD=1 ...                           # build on in an existing $KILN_GPU_BUILD
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-tma-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-tma}
SIZE=${SIZE:-4096}
TESTS=${TESTS:-Tma|wgmma|capi-torch|TileOrder}
mkdir -p "$OUT"

WGMMA="MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0"
# name:command:params
POINTS=${POINTS:-"
cp.async-128x256-s4:gemm-f16.json:$WGMMA,STAGES=4
tma-128x256-s4:gemm-f16.json:$WGMMA,STAGES=4,TMA=1
tma-128x256-s3:gemm-f16.json:$WGMMA,STAGES=3,TMA=1
tma-128x128-s4:gemm-f16.json:MMA=1,MT_M=128,MT_N=128,MT_K=64,WT_M=16,STAGES=4,TMA=1
ws-128x256-s4:gemm-f16.json:$WGMMA,STAGES=4,TMA=1,WARP_SPECIALIZE=1
ws-128x256-s3:gemm-f16.json:$WGMMA,STAGES=3,TMA=1,WARP_SPECIALIZE=1
ws-128x128-s4:gemm-f16.json:MMA=1,MT_M=128,MT_N=128,MT_K=64,WT_M=16,STAGES=4,TMA=1,WARP_SPECIALIZE=1
bf16-cp.async-128x256-s4:gemm-bf16.json:$WGMMA,STAGES=4
bf16-tma-128x256-s4:gemm-bf16.json:$WGMMA,STAGES=4,TMA=1
bf16-ws-128x256-s4:gemm-bf16.json:$WGMMA,STAGES=4,TMA=1,WARP_SPECIALIZE=1
ws-128x256-s4-g8:gemm-f16.json:$WGMMA,STAGES=4,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8
ws-128x256-s4-g16:gemm-f16.json:$WGMMA,STAGES=4,TMA=1,WARP_SPECIALIZE=1,GROUP_M=16
tma-128x256-s4-g8:gemm-f16.json:$WGMMA,STAGES=4,TMA=1,GROUP_M=8
ws-128x128-s4-g8:gemm-f16.json:MMA=1,MT_M=128,MT_N=128,MT_K=64,WT_M=16,STAGES=4,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8
bf16-ws-128x256-s4-g8:gemm-bf16.json:$WGMMA,STAGES=4,TMA=1,WARP_SPECIALIZE=1,GROUP_M=8
"}

gpu_device
gpu_build
want tests && gpu_tests "$TESTS"

step "kiln run at $SIZE^3"
: >"$OUT/table.txt"
for point in $POINTS; do
    IFS=: read -r name command params <<<"$point"
    for i in 1 2; do
        log="$OUT/run.log"
        echo "### $name ($command $params) #$i" >>"$log"
        line=$(timeout 120 "$KILN" run "examples/$command" --pipeline rules/gemm.pipeline.json \
            --params "$params" --size M=$SIZE --size N=$SIZE --size K=$SIZE \
            --repetitions 100 2>&1 | tee -a "$log" | median_ms)
        grep -E "error|registers" "$log" | tail -2 | sed "s/^/  $name: /"
        [ -z "$line" ] && status=1
        echo "$name $i ${line:-failed}" >>"$OUT/table.txt"
    done
done

if want sweep; then
    # What kiln tune finds over the shipped space, TMA and WARP_SPECIALIZE among its parameters.
    step "kiln tune at $SIZE^3 (budget ${BUDGET:-64})"
    timeout 300 "$KILN" tune examples/gemm-f16.json --space examples/gemm.space.json \
        --size M=$SIZE --size N=$SIZE --size K=$SIZE --budget "${BUDGET:-64}" -j "$JOBS" \
        -o "$OUT/sweep" >"$OUT/sweep.log" 2>&1 || status=1
    grep -E "cand/s|candidates|winner|exported" "$OUT/sweep.log" | tail -4
    "$KILN" db best "$OUT/sweep/tuning.jsonl" 2>&1 | head -3 | tee "$OUT/sweep-best.txt"
fi

step "cuBLAS (torch.matmul) at $SIZE^3"
# "cublas-float16 ROUND MS" and "cublas-bfloat16 ROUND MS" in cublas.log and the table.
timeout 120 python3 bench/peers/cublas_peers.py --rounds 2 "$SIZE" 2>&1 | awk '$1 == "cublas" {
    printf "cublas-%s %d %.4f\n", ($3 == "f16" ? "float16" : "bfloat16"), $4, $5 / 1000; next }
    { print }' >"$OUT/cublas.log" || status=1
grep -E "^cublas" "$OUT/cublas.log" >>"$OUT/table.txt" || tail -5 "$OUT/cublas.log"

echo
echo "================ summary (median ms at $SIZE^3; ratio = cuBLAS / it) ================"
awk '{t[$1]=(t[$1]==""?$3:t[$1]" "$3)} END {for (k in t) print k, t[k]}' "$OUT/table.txt" | sort \
    | awk -v f16="$(awk '$1=="cublas-float16"{print $3; exit}' "$OUT/table.txt")" \
          -v bf16="$(awk '$1=="cublas-bfloat16"{print $3; exit}' "$OUT/table.txt")" \
        '{ ref = ($1 ~ /bf16|bfloat16/) ? bf16 : f16;
           printf "%-26s %-22s %s\n", $1, $2" "$3, ($2+0 > 0 && ref > 0) ? sprintf("%.3fx", ref/$2) : "" }'
grep -E "tests passed" "$OUT/ctest-gpu.log" 2>/dev/null
echo "status: $status (logs in $OUT)"
exit $status
