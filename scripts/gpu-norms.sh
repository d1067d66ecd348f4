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
#   BUDGET=48 ...                            # at most that many candidates a sweep (0: all)
#
# KEEP_BUILD=1 builds on in an existing build folder; EVALUATOR=model runs the loop on a machine
# without a GPU (the tuner's cost model; the winner is emitted instead of run).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-norms-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-norms}
CASES=${CASES:-"8192x8192"}
OPS=${OPS:-"softmax layernorm rmsnorm"}
EVALUATOR=${EVALUATOR:-cuda}
STRATEGY=${STRATEGY:-exhaustive}
TUNE_ARGS=(--space examples/normalization.space.json --strategy "$STRATEGY" --specialize
    --budget "${BUDGET:-0}")
mkdir -p "$OUT"

gpu_device
gpu_build
want tests && gpu_tests Normalization

# Kiln: tune each operation and shape, then kiln run of its winner; "op M N us point" in kiln.txt.
: >"$OUT/kiln.txt"
for shape in $CASES; do
    m=${shape%x*} n=${shape#*x}
    for op in $OPS; do
        name="$op-${m}x$n"
        tune_and_run "$name" "examples/$op-f16.json" rules/reduction.pipeline.json \
            --size M="$m" --size N="$n" || continue
        ms=$(median_ms <"$OUT/run-$name.log")
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
