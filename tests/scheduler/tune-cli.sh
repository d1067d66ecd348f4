#!/bin/sh
# The tuning commands end to end: kiln tune with the cost model (two targets), a repeated
# sweep that reuses every record, kiln db list/best/merge, a damaged database line reported
# with its number, a measured sweep (reference interpreter) killed with SIGKILL and resumed, and
# a sweep whose every compile comes from the compile cache.
# Usage: tune-cli.sh KILN WORK_DIR   (run from the source tree)
set -eu
kiln=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
# The compile cache of this run only (the default is the user's ~/.cache/kiln/compiled).
export KILN_CACHE_DIR="$work/cache"

# 1. The cost model over the GEMM space, for two targets; candidates are lowered in children.
"$kiln" tune examples/gemm-f16.json --space examples/gemm.space.json --size M=1024 --size N=1024 \
    --size K=1024 --evaluator model --target sm_90a --target gfx942 --compile lower --budget 12 -j 2 -q \
    -o "$work/model" > "$work/model.out"
grep -q "^winner: " "$work/model.out" || fail "no winner"
[ -s "$work/model/sm_90a/sweep.svg" ] || fail "no plot"
[ -s "$work/model/gfx942/report.txt" ] || fail "no report"
[ "$(wc -l < "$work/model/tuning.jsonl")" -eq 24 ] || fail "expected 24 records"

# 2. The same sweep again: everything comes from the database.
"$kiln" tune examples/gemm-f16.json --space examples/gemm.space.json --size M=1024 --size N=1024 \
    --size K=1024 --evaluator model --target sm_90a --compile lower --budget 12 -q -o "$work/model" \
    > "$work/again.out"
grep -q "12 candidates in .* (12 reused from the database" "$work/again.out" || fail "not reused"
[ "$(wc -l < "$work/model/tuning.jsonl")" -eq 24 ] || fail "records were added on reuse"
# Another size is another key: nothing reused.
"$kiln" tune examples/gemm-f16.json --space examples/gemm.space.json --size M=2048 --size N=1024 \
    --size K=1024 --evaluator model --target sm_90a --compile none --budget 5 -q -o "$work/model" \
    > "$work/other.out"
grep -q "(0 reused" "$work/other.out" || fail "another shape reused a record"

# A point whose parameters every guard refuses lowers nothing: a failed candidate, never the
# winner (an unlowered Command would be a one-workitem kernel, or the Command itself).
"$kiln" tune examples/axpy.json --space tests/scheduler/data/guarded.space.json --evaluator model \
    --compile lower --target sm_90a -q -o "$work/guarded" > "$work/guarded.out"
grep -q "^winner: .* at P=1," "$work/guarded.out" || fail "the guarded point won"
grep -q "compile  P=2: error: the pipeline 'guarded' applied no rule at this point" \
    "$work/guarded/sm_90a/report.txt" || fail "a point that lowers nothing did not fail"

# A pipeline for another kind of Command is refused before the sweep.
if "$kiln" tune examples/axpy.json --space examples/gemm.space.json -o "$work/wrong" \
    2> "$work/wrong.err"; then fail "a GEMM space over axpy"; fi
grep -q "changes nothing in the Command 'axpy'" "$work/wrong.err" || fail "wrong pipeline message"

# 3. kiln db.
"$kiln" db list "$work/model/tuning.jsonl" > "$work/list.out"
[ "$(grep -c "gemm 1024x1024x1024 f16->f16" "$work/list.out")" -eq 2 ] || fail "db list"
"$kiln" db best "$work/model/tuning.jsonl" > "$work/best.out"
# gfx942's best multiplies on the matrix cores (MMA=1: MFMA), without clusters (an NVIDIA construct).
grep -q "on gfx942 (model:lowered): .* us (spread 0.0%) at CLUSTER_M=1,CLUSTER_N=1,EPILOGUE=0,GROUP_M=[0-9]*,MMA=1,MT_K=.*, checked: unchecked (cost model)$" \
    "$work/best.out" || fail "db best"
keys=$(grep "gemm 1024x1024x1024" "$work/list.out" | cut -d' ' -f1 | tr '\n' ' ')
# shellcheck disable=SC2086
"$kiln" db compare "$work/model/tuning.jsonl" $keys > "$work/compare.out"
grep -q "^Kendall's tau-b: " "$work/compare.out" || fail "db compare"
# The cost model as its own reference: model-guided search reaches its best at once.
"$kiln" tune examples/gemm-f16.json --space examples/gemm.space.json --size M=1024 --size N=1024 \
    --size K=1024 --evaluator model --target sm_90a --compile none --strategy exhaustive -q \
    -o "$work/exhaustive" > /dev/null
"$kiln" tune examples/gemm-f16.json --space examples/gemm.space.json --size M=1024 --size N=1024 \
    --size K=1024 --evaluator model --target sm_90a --compile none --strategy model-guided -q \
    -o "$work/guided" > /dev/null
"$kiln" db reach "$work/guided/tuning.jsonl" --reference "$work/exhaustive/tuning.jsonl" \
    > "$work/reach.out"
grep -q "^candidate 1 came within 2% of the reference best" "$work/reach.out" || fail "db reach"
# The cost model's winner exported: its manifest and header say that no check ran on it.
"$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --target sm_90a \
    --db "$work/exhaustive/tuning.jsonl" --size M=1024 --size N=1024 --size K=1024 \
    -o "$work/model-export" --name gemm > /dev/null
grep -q '"checked": "unchecked (cost model)"' "$work/model-export/gemm.manifest.json" ||
    fail "the manifest of the model's winner does not say that it is unchecked"
grep -q "^// No run compared this kernel's results with a reference" "$work/model-export/gemm.h" ||
    fail "the header of the model's winner does not say that it is unchecked"
echo 'this line is damaged' >> "$work/model/tuning.jsonl"
"$kiln" db list "$work/model/tuning.jsonl" 2> "$work/list.err" > /dev/null
grep -q "tuning.jsonl:30: warning: skipped: not a JSON value" "$work/list.err" || fail "damaged line"
"$kiln" db merge "$work/merged.jsonl" "$work/model/tuning.jsonl" "$work/model/tuning.jsonl" \
    > "$work/merge.out" 2> /dev/null
grep -q "added 29 records, 29 already there" "$work/merge.out" || fail "merge"

# 4. Measured by the interpreter (each candidate emitted and assembled where ptxas exists),
#    killed mid-way and resumed: every point recorded exactly once.
"$kiln" tune examples/axpy.json --space examples/elementwise.space.json --size N=20000 \
    --evaluator interpreter --strategy random --seed 3 --batch 2 -j 2 --repetitions 3 --warmup 1 -q \
    -o "$work/measured" > "$work/measured1.out" 2>&1 &
pid=$!
n=0
while [ "$n" -lt 6 ]; do
    sleep 0.1
    n=$(cat "$work/measured/tuning.jsonl" 2> /dev/null | wc -l)
    kill -0 $pid 2> /dev/null || fail "the sweep ended before it was killed"
done
kill -9 $pid
wait $pid 2> /dev/null || true
killed=$(wc -l < "$work/measured/tuning.jsonl")
"$kiln" tune examples/axpy.json --space examples/elementwise.space.json --size N=20000 \
    --evaluator interpreter --strategy random --seed 3 --batch 2 -j 2 --repetitions 3 --warmup 1 -q \
    -o "$work/measured" > "$work/measured2.out" 2>&1 || { cat "$work/measured2.out"; fail "resume"; }
grep -q "24 candidates in .* ($killed reused from the database" "$work/measured2.out" || fail "resume count"
grep -q "^$((24 - killed)) evaluated at .* candidates/s; compiling .* s busy .*; measuring .* s (.*% of the wall time)" \
    "$work/measured2.out" || fail "no throughput line"
[ "$(wc -l < "$work/measured/tuning.jsonl")" -eq 24 ] || fail "records lost or duplicated"
[ "$(grep -o '"point":{[^}]*}' "$work/measured/tuning.jsonl" | sort -u | wc -l)" -eq 24 ] || fail "dup"
# 5. The real worker checks before it times: a lowered axpy whose expression was changed
#    (x - y for x + y) is a failure of stage check, the unchanged one is timed.
echo '{"command": "examples/axpy.json", "pipeline": "rules/elementwise.pipeline.json",
       "target": "sm_90a", "params": {"WG_SIZE": 64, "VEC": 2}, "artifact": "'"$work"'/good"}' \
    | tr -d '\n' | "$kiln" worker compile > "$work/compile.out"
grep -q '"ok":true' "$work/compile.out" || fail "worker compile"
sed 's/"alpha \* value#4 + value#12"/"alpha * value#4 - value#12"/' "$work/good.graph.json" \
    > "$work/wrong.graph.json"
cmp -s "$work/good.graph.json" "$work/wrong.graph.json" && fail "the expression was not changed"
for name in good wrong; do
    echo '{"id": 1, "command": "examples/axpy.json", "sizes": {"N": 1000}, "params": {},
           "artifact": "'"$work/$name"'", "warmup": 0, "repetitions": 2}' | tr -d '\n'
    echo
done | "$kiln" worker measure --backend interpreter > "$work/measure.out"
grep -q '"ok":true,"samples_us":\[' "$work/measure.out" || fail "worker measure"
grep -q '"error":"wrong result: max relative error .*","id":1,"ok":false,"stage":"check"' \
    "$work/measure.out" || fail "worker check"

# The winner of a sweep whose candidates were emitted is exported.
[ -s "$work/measured/sm_90a/export/axpy_sm_90a.h" ] || fail "the winner was not exported"
grep -q "^exported the winner: " "$work/measured2.out" || fail "no export line"
# Each says how it was checked: the report per candidate, the export in its manifest and header.
grep -q '"checked": "interpreter"' "$work/measured/sm_90a/export/axpy_sm_90a.manifest.json" ||
    fail "the manifest does not say that the interpreter checked the winner"
grep -q "^// Checked: interpreter.$" "$work/measured/sm_90a/export/axpy_sm_90a.h" ||
    fail "the header does not say that the interpreter checked the winner"
grep -q "^winner: .*, checked: unchecked (cost model)$" "$work/model.out" ||
    fail "the model's winner is not said to be unchecked"
# 6. Two sweeps of the same space into two databases: the second compiles nothing (every
#    candidate restored from the compile cache), and each record says how large its code was.
for run in first second; do
    KILN_CACHE_DIR="$work/cache-6" "$kiln" tune examples/axpy.json \
        --space examples/elementwise.space.json --size N=20000 \
        --evaluator interpreter --strategy random --seed 5 --budget 6 -j 2 --repetitions 2 \
        --warmup 0 -q -o "$work/cache-$run" > "$work/cache-$run.out" 2>&1 ||
        { cat "$work/cache-$run.out"; fail "sweep $run"; }
done
[ "$(grep -c '"cached":1' "$work/cache-first/tuning.jsonl")" -eq 0 ] || fail "a cold cache hit"
[ "$(grep -c '"cached":1' "$work/cache-second/tuning.jsonl")" -eq 6 ] || fail "compiled again"
[ "$(grep -c '"code_bytes":[1-9]' "$work/cache-second/tuning.jsonl")" -eq 6 ] || fail "no code size"
# 7. A measuring worker busy or waiting ends when the sweep that started it is killed.
mkfifo "$work/hold"
sleep 60 > "$work/hold" & # keeps the worker's input open: no end of input tells it to stop
holder=$!
sh -c '"$0" worker measure --backend interpreter < "$1" > /dev/null & echo $! > "$2"; wait' \
    "$kiln" "$work/hold" "$work/worker.pid" &
parent=$!
n=0
while [ ! -s "$work/worker.pid" ] && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
worker=$(cat "$work/worker.pid")
sleep 0.5
kill -0 "$worker" || fail "the worker did not start"
kill -9 "$parent"
n=0
while kill -0 "$worker" 2> /dev/null && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
kill "$holder" 2> /dev/null || true
kill -0 "$worker" 2> /dev/null && { kill -9 "$worker"; fail "the worker outlived its sweep"; }
echo "tune-cli: all checks passed"
