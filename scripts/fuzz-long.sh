#!/usr/bin/env bash
# fuzz-long.sh: the long fuzzing runs (issue 16) on a machine with many cores, such as the GPU
# machine: independent libFuzzer processes per target, each over its own copy of the seed
# corpus, for -runs executions (or until CAP seconds); a finding fails that process and leaves
# its input under $OUT/artifacts-TARGET-K/. Prints executions per target last.
#
# Prepare a folder BIN beside the repository (it travels with it) on the machine that built
# build-fuzz, then run on the big one (which needs no clang):
#   mkdir -p BIN && for t in FuzzRuleEngine FuzzCodegen FuzzTuningDatabase; do
#       strip -o BIN/$t build-fuzz/tests/fuzz/$t; cp -r build-fuzz/tests/fuzz/$t.run/corpus BIN/$t.corpus
#   done; cp /usr/lib/x86_64-linux-gnu/libfmt.so.9* BIN/
#   FUZZ_BIN=BIN OUT=/tmp/out CAP=470 scripts/fuzz-long.sh
# EXTRA adds libFuzzer flags to every process: for FuzzCodegen, whose coverage map is large,
# `-entropic=0` doubles executions a second (libFuzzer's feature-frequency bookkeeping took half
# of each execution), and a build-fuzz-long (`cmake --preset fuzz-long`: UBSan without ASan)
# another 1.6x.
# The targets read examples/ from the source folder they were built in (KILN_SOURCE_DIR): where
# that is missing it is linked to this checkout.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/${FUZZ_BIN:?set FUZZ_BIN to the folder of stripped fuzz targets}
OUT=${OUT:?set OUT}
CAP=${CAP:-470}
SOURCE=/work/main # where build-fuzz was configured
[ -e "$SOURCE" ] || { mkdir -p "$(dirname "$SOURCE")" && ln -s "$ROOT" "$SOURCE"; }
export LD_LIBRARY_PATH=$BIN
mkdir -p "$OUT"

launch() { # TARGET PROCESSES RUNS MAX_LEN
    for k in $(seq 1 "$2"); do
        local work=/tmp/kiln-fuzz/$1-$k
        rm -rf "$work"; mkdir -p "$work" "$OUT/artifacts-$1-$k"
        cp -r "$BIN/$1.corpus" "$work/corpus"
        (cd "$work" && "$BIN/$1" corpus -runs="$3" -max_total_time="$CAP" -seed=$((1000 + k)) \
            -rss_limit_mb=4096 -timeout=30 -max_len="$4" -print_final_stats=1 ${EXTRA:-} \
            -artifact_prefix="$OUT/artifacts-$1-$k/" >"$OUT/$1-$k.log" 2>&1
         echo "exit $?" >>"$OUT/$1-$k.log") &
    done
}
# PLAN: TARGET:PROCESSES:RUNS:MAX_LEN, space-separated.
PLAN=${PLAN:-FuzzRuleEngine:5:200000:65536 FuzzTuningDatabase:5:200000:16384 FuzzCodegen:6:100000000:16384}
nproc
for p in $PLAN; do
    IFS=: read -r target processes runs maxLen <<<"$p"
    launch "$target" "$processes" "$runs" "$maxLen"
done
wait
for p in $PLAN; do
    t=${p%%:*}
    runs=0 longest=0 failed=0
    for f in "$OUT/$t"-*.log; do
        n=$(grep -o "stat::number_of_executed_units: [0-9]*" "$f" | awk '{print $2}')
        s=$(grep -o "Done [0-9]* runs in [0-9]* second" "$f" | awk '{print $5}')
        runs=$((runs + ${n:-0})); [ "${s:-0}" -gt "$longest" ] && longest=$s
        grep -q "^exit 0" "$f" || failed=$((failed + 1))
    done
    echo "$t: $runs executions in $(ls "$OUT/$t"-*.log | wc -l) processes, longest $longest s, $failed with findings"
done
