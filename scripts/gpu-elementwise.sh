#!/usr/bin/env bash
# gpu-elementwise.sh: on the GPU machine, issue 19's element-wise figures in one run. Builds Kiln
# in a fresh folder, runs the generated kernels' GPU tests (every shipped example at odd sizes),
# tunes the fused f16 bias + tanh-GELU chain (examples/fused-elementwise.json) over
# examples/elementwise.space.json at SIZE x SIZE on the GPU, runs `kiln run` of the winner, and
# times the peers in the same run: the device copy, torch eager, torch.compile.
#
#   OUT=/tmp/out scripts/gpu-elementwise.sh     # build folder: $KILN_GPU_BUILD or /tmp/kiln-ew
#   SIZE=8192 SKIP=tests ...
set -uo pipefail

cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-elementwise-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-ew}
SIZE=${SIZE:-8192}
mkdir -p "$OUT"
status=0
step() { echo "== $* (${SECONDS}s)"; }
want() { [[ " ${SKIP:-} " != *" $1 "* ]]; }

step "build"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
if ! { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1 &&
        cmake --build "$BUILD" -j "$(nproc)" --target kiln kiln_lowering_gpu_tests \
            >"$OUT/build.log" 2>&1; }; then
    grep -E "error|FAILED" -A5 "$OUT/build.log" | head -40; echo "build failed"; exit 1
fi
KILN="$BUILD/tools/kiln/kiln"

if want tests; then
    step "generated kernels on the GPU (ctest -L gpu, lowering)"
    (cd "$BUILD" && KILN_REQUIRE_GPU=1 ctest -L gpu -R 'Generated|Elementwise|Shipped' \
        --output-on-failure) >"$OUT/ctest-gpu.log" 2>&1 || status=1
    grep -E "tests passed|\(Failed\)" "$OUT/ctest-gpu.log"
fi

step "kiln tune: fused bias + GELU at ${SIZE}x${SIZE}"
"$KILN" tune examples/fused-elementwise.json --space examples/elementwise.space.json \
    --size M="$SIZE" --size N="$SIZE" --evaluator cuda --strategy exhaustive -o "$OUT/tune" \
    --quiet >"$OUT/tune.log" 2>&1 || status=1
tail -4 "$OUT/tune.log"
winner=$("$KILN" db best "$OUT/tune/tuning.jsonl" | sed -n 's/.* at \([A-Z_0-9=,]*[0-9]\)\(, checked.*\)\{0,1\}$/\1/p' | head -1)
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
