#!/usr/bin/env bash
# gpu-reduction.sh: on the GPU machine, issue 19's row-sum figures in one run. Builds Kiln in a
# fresh folder, runs the GPU tests of reductions (the cooperative schedules at odd and round
# sizes in both layouts, and the one-row-per-workitem ones, against the CPU reference), then for
# each of six cases (8192x8192, 65536x1024, 1024x65536; row-major examples/row-sum-rowmajor.json
# and column-major examples/row-reduction.json) tunes the f32 row sum over
# examples/reduction.space.json on the GPU (exhaustive: both schedules) and runs `kiln run` of
# the winner, and times the peers in the same run (bench/peers/reduction_peers.py: the device
# copy of the same bytes and torch's sum). The issue's floor: at least 0.9x the copy bandwidth
# and at least torch's, in every case. Logs go to $OUT; a short table is printed last.
#
#   OUT=/tmp/out scripts/gpu-reduction.sh      # build folder: $KILN_GPU_BUILD or /tmp/kiln-reduction
#   SKIP="tests" CASES="8192x8192" LAYOUTS="row-major" KEEP_BUILD=1 ...
#   STRATEGY=model-guided BUDGET=64 ...     # a budgeted sweep instead of the exhaustive one
#   SPECIALIZE=0 ...                         # kernels for every size (default: for the case's)
#
# KEEP_BUILD=1 builds on in an existing build folder instead of a fresh one (to split the run
# into parts on a machine that stays warm); EVALUATOR=model runs the loop on a machine without a
# GPU (the tuner's cost model; the winner is emitted instead of run).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-reduction-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-reduction}
CASES=${CASES:-"8192x8192 65536x1024 1024x65536"}
LAYOUTS=${LAYOUTS:-"row-major column-major"}
EVALUATOR=${EVALUATOR:-cuda} # model: the loop without a GPU (the winner emitted, not run)
STRATEGY=${STRATEGY:-exhaustive}
TUNE_ARGS=(--space examples/reduction.space.json --strategy "$STRATEGY" --budget "${BUDGET:-0}")
# SPECIALIZE=1 (the default): each candidate made for its problem's sizes, as a user tunes for
# the shapes they run (no masks those sizes rule out), and the winner run as the sweep timed it.
RUN_ARGS=()
if [ "${SPECIALIZE:-1}" = 1 ]; then
    TUNE_ARGS+=(--specialize)
    RUN_ARGS=(--specialize)
fi
mkdir -p "$OUT"
command_of() { [ "$1" = row-major ] && echo examples/row-sum-rowmajor.json ||
    echo examples/row-reduction.json; }

gpu_device
gpu_build
want tests && gpu_tests 'CooperativeReduction|row_sum'

# Kiln: tune each case, then kiln run of its winner; "layout M N GB/s point" in kiln.txt.
: >"$OUT/kiln.txt"
for shape in $CASES; do
    m=${shape%x*} n=${shape#*x}
    for layout in $LAYOUTS; do
        name="$layout-${m}x$n"
        tune_and_run "$name" "$(command_of "$layout")" rules/reduction.pipeline.json \
            --size M="$m" --size N="$n" || continue
        gbps=$(sed -n 's/.* \([0-9.]*\) GB\/s of tensor traffic.*/\1/p' "$OUT/run-$name.log")
        echo "$layout $m $n ${gbps:-0} $winner" >>"$OUT/kiln.txt"
    done
done

step "peers: the device copy of the same bytes, torch's sum"
# shellcheck disable=SC2086
timeout 600 python3 bench/peers/reduction_peers.py $CASES 2>&1 | tee "$OUT/peers.log" \
    | grep -E "^(device|error)" || true
grep -q "^peer " "$OUT/peers.log" || status=1

step "table (GB/s; copy counts read + write; floor: Kiln >= 0.9x copy and >= torch)"
awk 'NR == FNR { kiln[$1 " " $2 " " $3] = $4; point[$1 " " $2 " " $3] = $5; next }
     $1 == "peer" {
         key = $2 " " $3 " " $4
         if (!(key in kiln)) next
         k = kiln[key]; copy = $5; torch = $6
         meets = (k >= 0.9 * copy && k >= torch) ? "yes" : "NO"
         printf "%-13s %6dx%-6d kiln %7.1f  copy %7.1f  torch %7.1f  kiln/copy %.2f  torch/copy %.2f  kiln/torch %.2f  floor %s  (%s)\n",
             $2, $3, $4, k, copy, torch, k / copy, torch / copy, (torch > 0 ? k / torch : 0),
             meets, point[key]
     }' "$OUT/kiln.txt" "$OUT/peers.log" | tee "$OUT/table.txt"
grep -q " NO " "$OUT/table.txt" && echo "the floor is not met in every case"
echo "status: $status"
exit $status
