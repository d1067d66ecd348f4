#!/usr/bin/env bash
# gpu-elementwise.sh: on the GPU machine, issue 19's element-wise figures in one run. Builds Kiln
# in a fresh folder, runs the generated kernels' GPU tests (every shipped example at odd sizes),
# tunes the fused f16 bias + tanh-GELU chain (examples/fused-elementwise.json) over
# examples/elementwise.space.json at SIZE x SIZE on the GPU, runs `kiln run` of the winner, and
# times the peers in the same run: the device copy, torch eager, torch.compile.
#
#   OUT=/tmp/out scripts/gpu-elementwise.sh     # build folder: $KILN_GPU_BUILD or /tmp/kiln-ew
#   SIZE=8192 SKIP=tests ...
#   KEEP_BUILD=1 ...                            # build on in an existing $KILN_GPU_BUILD
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-elementwise-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-ew}
SIZE=${SIZE:-8192}
mkdir -p "$OUT"

gpu_device
gpu_build
want tests && gpu_tests 'Generated|Elementwise|Shipped'

step "kiln tune: fused bias + GELU at ${SIZE}x${SIZE}"
"$KILN" tune examples/fused-elementwise.json --space examples/elementwise.space.json \
    --size M="$SIZE" --size N="$SIZE" --evaluator cuda --strategy exhaustive -o "$OUT/tune" \
    --quiet >"$OUT/tune.log" 2>&1 || status=1
tail -4 "$OUT/tune.log"
winner=$(best_point "$OUT/tune/tuning.jsonl")
echo "winner: $winner"

step "kiln run of the winner"
[ -n "$winner" ] && "$KILN" run examples/fused-elementwise.json \
    --pipeline rules/elementwise.pipeline.json --params "$winner" \
    --size M="$SIZE" --size N="$SIZE" --repetitions 100 2>&1 | tee "$OUT/run.log" \
    | grep -E "time|error|registers"

step "peers: the device copy, torch eager, torch.compile"
timeout 300 python3 bench/peers/elementwise_peers.py "$SIZE" "$SIZE" 2>&1 | tee "$OUT/peers.log" \
    | grep -E "^(device|copy|torch)" || status=1
echo "status: $status"
exit $status
