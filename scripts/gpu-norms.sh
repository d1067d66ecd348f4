#!/usr/bin/env bash
# gpu-norms.sh: on the GPU machine, issue 19's softmax and layer norm floor (and RMS norm) in one
# run. Builds Kiln in a fresh folder, runs the GPU tests of softmax, layer norm and RMS norm
# (examples/*-f16.json on the cooperative schedule, odd and round sizes, against the CPU
# reference), then for each operation and shape tunes the Command over
# examples/normalization.space.json on the GPU (exhaustive; each candidate made for the problem's
# sizes, so that a row of one chunk is read once and held) and runs `kiln run` of the winner,
# and times the peers in the same run (bench/peers/norm_peers.py: the device copy, torch and
# torch.compile of the same operation). The issue's floor: softmax and layer norm over the rows
# of an f16 8192 x 8192 matrix at least as fast as torch.compile. Logs go to $OUT; a short
# table is printed last.
#
#   OUT=/tmp/out scripts/gpu-norms.sh      # build folder: $KILN_GPU_BUILD or /tmp/kiln-norms
#   SKIP="tests" OPS="softmax" CASES="8192x8192 4096x16384" KEEP_BUILD=1 STRATEGY=model-guided ...
#
# KEEP_BUILD=1 builds on in an existing build folder; EVALUATOR=model runs the loop on a machine
# without a GPU (the tuner's cost model; the winner is emitted instead of run).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-norms-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-norms}
JOBS=${JOBS:-$(nproc)}
CASES=${CASES:-"8192x8192"}
OPS=${OPS:-"softmax layernorm rmsnorm"}
EVALUATOR=${EVALUATOR:-cuda}
STRATEGY=${STRATEGY:-exhaustive}
mkdir -p "$OUT"
status=0
step() { echo "== $* (${SECONDS}s)"; }
want() { [[ " ${SKIP:-} " != *" $1 "* ]]; }

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
    --format=csv >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

step "build"
[ "${KEEP_BUILD:-0}" = 1 ] || rm -rf "$BUILD"
if ! { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1 &&
        cmake --build "$BUILD" -j "$JOBS" --target kiln kiln_lowering_gpu_tests \
            >"$OUT/build.log" 2>&1; }; then
    grep -E "error|FAILED" -A5 "$OUT/build.log" "$OUT/configure.log" | head -60
    echo "build failed"; exit 1
fi
KILN="$BUILD/tools/kiln/kiln"

if want tests; then
    step "ctest -L gpu -R Normalization"
    (cd "$BUILD" && KILN_REQUIRE_GPU=1 ctest -L gpu -R Normalization -V --timeout 300) \
        >"$OUT/ctest-gpu.log" 2>&1 || status=1
    grep -E "\[ gpu  |tests passed|\(Failed\)|\(Skipped\)|Failure" "$OUT/ctest-gpu.log" \
        | sed 's/^[0-9]*: //' | awk '!seen[$0]++' | head -80
fi

# Kiln: tune each operation and shape, then kiln run of its winner; "op M N us point" in kiln.txt.
: >"$OUT/kiln.txt"
for shape in $CASES; do
    m=${shape%x*} n=${shape#*x}
    for op in $OPS; do
        name="$op-${m}x$n"
        command=examples/$op-f16.json
        step "kiln tune: $name"
        "$KILN" tune "$command" --space examples/normalization.space.json --size M="$m" \
            --size N="$n" --evaluator "$EVALUATOR" --strategy "$STRATEGY" -j "$JOBS" --specialize \
            -o "$OUT/tune-$name" --quiet >"$OUT/tune-$name.log" 2>&1 || status=1
        grep -E "candidates in|winner" "$OUT/tune-$name.log"
        winner=$("$KILN" db best "$OUT/tune-$name/tuning.jsonl" |
            sed -n 's/.* at \([A-Z_0-9=,]*[0-9]\)\(, checked.*\)\{0,1\}$/\1/p' | head -1)
        if [ -z "$winner" ]; then
            echo "no winner for $name"; status=1; continue
        fi
        step "kiln run: $name at $winner"
        if [ "$EVALUATOR" != cuda ]; then # no GPU: the winner's kernel is only emitted
            "$KILN" emit "$command" --pipeline rules/reduction.pipeline.json --params "$winner" \
                -o "$OUT/emit-$name" >"$OUT/run-$name.log" 2>&1 || status=1
            cat "$OUT/run-$name.log"
            continue
        fi
        "$KILN" run "$command" --pipeline rules/reduction.pipeline.json --params "$winner" \
            --size M="$m" --size N="$n" --repetitions 100 >"$OUT/run-$name.log" 2>&1 || status=1
        grep -E "time|error|registers" "$OUT/run-$name.log"
        ms=$(sed -n 's/^time \([0-9.]*\) ms median.*/\1/p' "$OUT/run-$name.log")
        us=$(awk -v ms="${ms:-0}" 'BEGIN { printf "%.2f", ms * 1000 }')
        echo "$op $m $n $us $winner" >>"$OUT/kiln.txt"
    done
done

step "peers: the device copy, torch and torch.compile"
# shellcheck disable=SC2086
timeout 900 python3 bench/peers/norm_peers.py $CASES 2>&1 | tee "$OUT/peers.log" \
    | grep -E "^(device|error)" || true
grep -q "^peer " "$OUT/peers.log" || status=1

step "table (us, median; floor: Kiln at least as fast as torch.compile for softmax and layer norm)"
awk 'NR == FNR { kiln[$1 " " $2 " " $3] = $4; point[$1 " " $2 " " $3] = $5; next }
     $1 == "peer" {
         key = $2 " " $3 " " $4
         if (!(key in kiln) || kiln[key] <= 0) next
         k = kiln[key]; copy = $5; eager = $6; compiled = $7
         bytes = $8 * eager   # GB/s x us = kB: the bytes the operation moves, / 1e3
         floor = ($2 == "rmsnorm") ? "-" : (k <= compiled ? "yes" : "NO")
         printf "%-9s %5dx%-5d kiln %8.2f  torch %8.2f  compile %8.2f  compile/kiln %.2fx  kiln %6.1f GB/s (copy %6.1f)  floor %s  (%s)\n",
             $2, $3, $4, k, eager, compiled, compiled / k, bytes / k, copy, floor, point[key]
     }' "$OUT/kiln.txt" "$OUT/peers.log" | tee "$OUT/table.txt"
grep -q " NO " "$OUT/table.txt" && echo "the floor is not met in every case"
echo "status: $status"
exit $status
