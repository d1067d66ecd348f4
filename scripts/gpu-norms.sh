#!/usr/bin/env bash
# gpu-norms.sh: on the GPU machine, issue 19's softmax and layer norm floor (and RMS norm) in one
# run. Builds Kiln in a fresh folder, runs the GPU tests of softmax, layer norm and RMS norm
# (examples/*-f16.json on the cooperative schedule, odd and round sizes, against the CPU
# reference), then for each operation and shape tunes the Command over
# examples/normalization.space.json on the GPU (exhaustive; each candidate made for the problem's
# sizes, so that a row of one chunk is read once and held) and runs `kiln run` of the winner,
# and times the peers in the same run (bench/peers/norm_peers.py: the device copy, torch and
# torch.compile of the same operation). Each winner is also exported (`kiln export
# --specialize --shared-library`) and its C ABI timed by norm_peers.py beside torch.compile, in
# the peers' own harness, in rounds that alternate with torch.compile's: a second table. The
# issue's floor: softmax and layer norm over the rows of an f16 8192 x 8192 matrix at least as
# fast as torch.compile. Logs go to $OUT (each sweep's database also as tuning-OP-MxN.jsonl.gz);
# a short table is printed last.
#
#   OUT=/tmp/out scripts/gpu-norms.sh      # build folder: $KILN_GPU_BUILD or /tmp/kiln-norms
#   SKIP="tests" OPS="softmax" CASES="8192x8192 4096x16384" KEEP_BUILD=1 STRATEGY=model-guided ...
#   BUDGET=48 ...                            # at most that many candidates a sweep (0: all)
#   HELD=1 TUNE=0 OPS=layernorm SKIP=tests ...  # the held-row points against the three-pass one
#   WELFORD=1 TUNE=0 OPS=layernorm SKIP=tests ...  # one-pass mean and variance against three passes
#   PERSIST=1 TUNE=0 OPS=layernorm SKIP=tests ...  # a persistent grid (PERSISTENT=1) with PREFETCH
#
# POINTS (schedule parameters, space-separated) are each run by `kiln run --specialize` (the
# kernel a --specialize sweep times) for every operation and shape, ROUNDS times (default 2), 100
# launches after a 0.25 s warm-up, into points.txt ("op M N us point registers") and a second
# table beside torch.compile; HELD=1 sets them to layer norm's held-row points at 8192 (512 and
# 1024 lanes a row, each row one chunk, read once) and the three-pass winner of the last sweep
# (LANES=128, UNROLL=2, VEC=8). WELFORD=1 sets them to that three-pass point and the layer norm's
# ONLINE=1 points beside it (its mean and variance in one pass, X read twice: LANES 128 and 256,
# VEC 8, UNROLL 1 and 2); the sweeps take ONLINE=1 from the space anyway. TUNE=0 leaves the sweeps
# out. PERSIST=1 sets them to the layer norm's PREFETCH=330 point alone and in a persistent grid
# (each workgroup looping over rows, PREFETCH 330 and 660 and none), not yet measured.
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
RUN_ARGS=(--specialize) # the winner's kernel as the sweep timed it (rows of one chunk held)
POINTS=${POINTS:-}
if [ "${HELD:-0}" = 1 ]; then
    POINTS="LANES=128,UNROLL=2,VEC=8 LANES=512,UNROLL=2,VEC=8 LANES=512,UNROLL=4,VEC=4
        LANES=1024,UNROLL=1,VEC=8 LANES=1024,UNROLL=2,VEC=4 LANES=1024,UNROLL=4,VEC=2"
fi
if [ "${PERSIST:-0}" = 1 ]; then
    POINTS="LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330
        LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330,PERSISTENT=1
        LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=660,PERSISTENT=1
        LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PERSISTENT=1"
fi
if [ "${WELFORD:-0}" = 1 ]; then
    POINTS="LANES=128,UNROLL=2,VEC=8 LANES=128,UNROLL=2,VEC=8,ONLINE=1
        LANES=128,UNROLL=1,VEC=8,ONLINE=1 LANES=256,UNROLL=1,VEC=8,ONLINE=1
        LANES=256,UNROLL=2,VEC=8,ONLINE=1"
fi
mkdir -p "$OUT"

gpu_device
gpu_build
want tests && gpu_tests Normalization

# Kiln: tune each operation and shape, then kiln run of its winner; "op M N us point" in kiln.txt.
: >"$OUT/kiln.txt"
tuned=$CASES
[ "${TUNE:-1}" = 1 ] || tuned=""
for shape in $tuned; do
    m=${shape%x*} n=${shape#*x}
    for op in $OPS; do
        name="$op-${m}x$n"
        tune_and_run "$name" "examples/$op-f16.json" rules/reduction.pipeline.json \
            --size M="$m" --size N="$n" || continue
        ms=$(median_ms <"$OUT/run-$name.log")
        us=$(awk -v ms="${ms:-0}" 'BEGIN { printf "%.2f", ms * 1000 }')
        echo "$op $m $n $us $winner" >>"$OUT/kiln.txt"
        # Every candidate's record, small enough to bring back (the cost model's calibration).
        gzip -c "$OUT/tune-$name/tuning.jsonl" >"$OUT/tuning-$name.jsonl.gz"
        # The winner as an application gets it (made for the shape, its C ABI), which
        # norm_peers.py times beside the peers in their own harness.
        if "$KILN" export "examples/$op-f16.json" --pipeline rules/reduction.pipeline.json \
            --db "$OUT/tune-$name/tuning.jsonl" --size M="$m" --size N="$n" --specialize \
            --name "kiln_$op" --shared-library -o "$OUT/export-$name" >"$OUT/export-$name.log" 2>&1
        then
            KILN_EXPORTS="${KILN_EXPORTS:-} $op:${m}x$n=$OUT/export-$name/libkiln_$op.so"
        else
            cat "$OUT/export-$name.log"
            status=1
        fi
    done
done
export KILN_EXPORTS

# The POINTS, each made for the shape (--specialize) and run ROUNDS times in turn, so that a
# drift of the clocks shows as a spread of each point's rounds rather than between points.
: >"$OUT/points.txt"
for shape in ${POINTS:+$CASES}; do
    m=${shape%x*} n=${shape#*x}
    for op in $OPS; do
        for round in $(seq "${ROUNDS:-2}"); do
            for point in $POINTS; do
                name="$op-${m}x$n-$(echo "$point" | tr -d '=,')-$round"
                step "kiln run --specialize: $op ${m}x$n at $point (round $round)"
                "$KILN" run "examples/$op-f16.json" --pipeline rules/reduction.pipeline.json \
                    --params "COOP=1,ROWS=1,$point" --size M="$m" --size N="$n" --specialize \
                    --repetitions 100 --warmup-seconds 0.25 >"$OUT/point-$name.log" 2>&1 ||
                    status=1
                grep -E "time|error|registers" "$OUT/point-$name.log"
                ms=$(median_ms <"$OUT/point-$name.log")
                regs=$(sed -n 's/.* \([0-9]*\) registers$/\1/p' "$OUT/point-$name.log")
                us=$(awk -v ms="${ms:-0}" 'BEGIN { printf "%.2f", ms * 1000 }')
                echo "$op $m $n $us $point ${regs:-?}" >>"$OUT/points.txt"
            done
        done
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
if grep -q "^export " "$OUT/peers.log"; then
    step "the exported winners timed as the peers are (norm_peers.py, one process, 7 rounds
        alternating with torch.compile; us, median of the rounds' medians)"
    awk '$1 == "export" {
             printf "%-9s %5dx%-5d exported kiln %8.2f  compile %8.2f  compile/kiln %.3fx  floor %s  (rounds: kiln %s; compile %s)\n",
                 $2, $3, $4, $5, $6, $6 / $5, ($2 == "rmsnorm") ? "-" : ($5 <= $6 ? "yes" : "NO"), $7, $8
         }' "$OUT/peers.log" | tee "$OUT/export-table.txt"
fi
if [ -s "$OUT/points.txt" ]; then
    step "points (us, median of 100 launches, each round; kiln run --specialize)"
    awk 'NR == FNR { if ($1 == "peer") compiled[$2 " " $3 " " $4] = $7; next }
         { key = $1 " " $2 " " $3
           c = (key in compiled) ? sprintf("compile/kiln %.2fx", compiled[key] / $4) : ""
           printf "%-9s %5dx%-5d %-28s %8.2f us  %3s registers  %s\n", $1, $2, $3, $5, $4, $6, c
         }' "$OUT/peers.log" "$OUT/points.txt" | tee "$OUT/points-table.txt"
fi
echo "status: $status"
exit $status
