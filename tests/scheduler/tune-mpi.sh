#!/bin/sh
# kiln tune as one sweep over the ranks of mpirun (docs/tuning.md, "Many GPUs and hosts: MPI"):
#   1. three ranks and the cost model give the same records (points, times, failures) and the
#      same winner as one process with the same seed and batch, and every rank compiled some;
#   2. three ranks and the reference interpreter record the same points with the same outcome
#      as one process (not the same winner: times are measurements, and on a loaded machine
#      even two single-process sweeps pick different winners among points within 30%);
#   3. with --enable-recovery, rank 1 killed (SIGKILL) while it holds candidates: the sweep
#      deals them again and finishes with every point recorded once;
#   4. without it, mpirun ends the whole job when rank 1 dies, and the same command run again
#      resumes from the database: every point recorded once.
# Usage: tune-mpi.sh KILN MPIRUN WORK_DIR   (run from the source tree)
set -eu
kiln=$1
mpirun=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
export KILN_CACHE_DIR="$work/cache"
# CI runs as root, which mpirun refuses unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The records of a database as sorted text: point, status, time (without it where $2 is
# "untimed"), stage and error.
records() {
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    us = "" if sys.argv[2] == "untimed" else r.get("us", "")
    print(json.dumps(r["point"], sort_keys=True, separators=(",", ":")), r["status"], us,
          r.get("stage", ""), r.get("error", ""))' "$1" "${2:-timed}" | sort
}
points() { records "$1" untimed; }
# The pid of the kiln tune of rank $1 whose command line holds $2.
rank_pid() {
    for p in /proc/[0-9]*; do
        tr '\0' ' ' < "$p/cmdline" 2> /dev/null | grep -q -- " tune .*$2" || continue
        tr '\0' '\n' < "$p/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
            basename "$p"
    done
    return 0
}

# 1. The cost model: every number the same.
model="examples/gemm-f16.json --space examples/gemm.space.json --size M=1024 --size N=1024
    --size K=1024 --evaluator model --target sm_90a --compile lower --strategy random --seed 4
    --budget 30 --batch 10 -j 2 -q"
# shellcheck disable=SC2086
"$kiln" tune $model -o "$work/model-1" > "$work/model-1.out" 2>&1 ||
    { cat "$work/model-1.out"; fail "single-process model sweep"; }
# shellcheck disable=SC2086
"$mpirun" --oversubscribe -np 3 "$kiln" tune $model -o "$work/model-3" > "$work/model-3.out" 2>&1 ||
    { cat "$work/model-3.out"; fail "mpirun model sweep"; }
grep -q "dealing to 3 MPI ranks" "$work/model-3.out" || fail "not dealt to 3 ranks"
[ "$(wc -l < "$work/model-3/tuning.jsonl")" -eq 30 ] || fail "expected 30 model records"
records "$work/model-1/tuning.jsonl" > "$work/model-1.records"
records "$work/model-3/tuning.jsonl" > "$work/model-3.records"
diff "$work/model-1.records" "$work/model-3.records" || fail "the model's records differ"
for r in 1 2; do
    ls "$work/model-3/sm_90a/candidates/rank-$r/" | grep -q "graph.json" ||
        fail "rank $r compiled nothing"
done
w1=$(grep "^winner: " "$work/model-1.out")
w3=$(grep "^winner: " "$work/model-3.out")
[ -n "$w1" ] && [ "$w1" = "$w3" ] || fail "the model's winners differ: '$w1' and '$w3'"

# 2. The interpreter: the same points with the same outcome.
interp="examples/axpy.json --space examples/elementwise.space.json --size N=20000
    --evaluator interpreter --strategy random --seed 3 --batch 6 -j 1 --repetitions 3 --warmup 1 -q"
# shellcheck disable=SC2086
"$kiln" tune $interp -o "$work/interp-1" > "$work/interp-1.out" 2>&1 ||
    { cat "$work/interp-1.out"; fail "single-process interpreter sweep"; }
# shellcheck disable=SC2086
"$mpirun" --oversubscribe -np 3 "$kiln" tune $interp -o "$work/interp-3" \
    > "$work/interp-3.out" 2>&1 || { cat "$work/interp-3.out"; fail "mpirun interpreter sweep"; }
[ "$(wc -l < "$work/interp-3/tuning.jsonl")" -eq 24 ] || fail "expected 24 interpreter records"
points "$work/interp-1/tuning.jsonl" > "$work/interp-1.points"
points "$work/interp-3/tuning.jsonl" > "$work/interp-3.points"
diff "$work/interp-1.points" "$work/interp-3.points" || fail "the interpreter's records differ"
grep -q "^winner: .*, checked: interpreter" "$work/interp-3.out" || fail "no interpreter winner"

# 3. Rank 1 killed mid-sweep under --enable-recovery: its candidates are dealt again.
slow="examples/axpy.json --space examples/elementwise.space.json --size N=100000
    --evaluator interpreter --strategy random --seed 3 --batch 12 -j 1 --repetitions 2 --warmup 0
    --rank-timeout 3 -q"
# shellcheck disable=SC2086
"$mpirun" --oversubscribe --enable-recovery -np 3 "$kiln" tune $slow -o "$work/recover" \
    > "$work/recover.out" 2>&1 &
job=$!
n=0
pid=""
# Rank 1 holds candidates once one of them is compiled into its folder.
while [ -z "$pid" ] || ! ls "$work/recover/sm_90a/candidates/rank-1/" 2> /dev/null | grep -q .; do
    [ "$n" -lt 600 ] || { kill "$job"; fail "rank 1 was never dealt a candidate"; }
    kill -0 "$job" 2> /dev/null || { cat "$work/recover.out"; fail "the sweep ended first"; }
    pid=$(rank_pid 1 "$work/recover")
    sleep 0.05
    n=$((n + 1))
done
kill -9 "$pid"
wait "$job" || { cat "$work/recover.out"; fail "the sweep did not survive its rank 1"; }
grep -q "^note: rank 1 lost (silent for [0-9]* s); its [1-9][0-9]* candidate(s) in flight are dealt again$" \
    "$work/recover.out" || { cat "$work/recover.out"; fail "rank 1's loss was not noted"; }
grep -q "^24 candidates in .* (0 reused from the database, 0 failed)" "$work/recover.out" ||
    { cat "$work/recover.out"; fail "the sweep did not finish every candidate"; }
[ "$(wc -l < "$work/recover/tuning.jsonl")" -eq 24 ] || fail "records lost or duplicated"
[ "$(points "$work/recover/tuning.jsonl" | cut -d' ' -f1 | sort -u | wc -l)" -eq 24 ] ||
    fail "a point recorded twice"

# 4. Without --enable-recovery mpirun ends the job when rank 1 dies; run again, it resumes.
# shellcheck disable=SC2086
"$mpirun" --oversubscribe -np 3 "$kiln" tune $slow -o "$work/resume" > "$work/resume-1.out" 2>&1 &
job=$!
n=0
pid=""
while [ -z "$pid" ] || [ "$(cat "$work/resume/tuning.jsonl" 2> /dev/null | wc -l)" -lt 2 ]; do
    [ "$n" -lt 600 ] || { kill "$job"; fail "no records to resume from"; }
    kill -0 "$job" 2> /dev/null || { cat "$work/resume-1.out"; fail "the sweep ended first"; }
    pid=$(rank_pid 1 "$work/resume")
    sleep 0.05
    n=$((n + 1))
done
kill -9 "$pid"
if wait "$job"; then fail "mpirun went on without --enable-recovery"; fi
grep -q "note: mpirun without --enable-recovery ends the whole job" "$work/resume-1.out" ||
    fail "no note on --enable-recovery"
killed=$(wc -l < "$work/resume/tuning.jsonl")
[ "$killed" -lt 24 ] || fail "the sweep finished before rank 1 was killed"
# shellcheck disable=SC2086
"$mpirun" --oversubscribe -np 3 "$kiln" tune $slow -o "$work/resume" > "$work/resume-2.out" 2>&1 ||
    { cat "$work/resume-2.out"; fail "resume"; }
grep -q "^24 candidates in .* ($killed reused from the database" "$work/resume-2.out" ||
    { cat "$work/resume-2.out"; fail "resume count"; }
[ "$(wc -l < "$work/resume/tuning.jsonl")" -eq 24 ] || fail "records lost or duplicated on resume"
echo "tune-mpi: all checks passed"
