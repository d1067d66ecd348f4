# gpu-common.sh: what every scripts/gpu-*.sh does the same way on the lent GPU machine, in one
# place (sourced, not run): the step printer, the device line, the Release build with Ninja that
# KEEP_BUILD and KILN_GPU_BUILD let several scripts of one call share, the GPU tests and their
# summary, a tuning database's winner, and kiln tune followed by kiln run of its winner.
# shellcheck shell=bash disable=SC2034 # status, KILN and winner are for the sourcing script
#
# A script sets OUT and BUILD (its defaults) before it calls these; the library sets JOBS
# (default: nproc) and status (0; a failed step sets it to 1). Environment:
#   KILN_GPU_BUILD   the build folder (each script has its own default)
#   KEEP_BUILD=1     build on in the existing folder instead of a fresh one: the first script of a
#                    call builds every target of GPU_TARGETS once, the later ones find them built
#   JOBS             parallel build and tuning jobs
#   SKIP             the optional steps to leave out, by name (want)

JOBS=${JOBS:-$(nproc)}
status=0

# Every target any gpu-*.sh runs, built together so that a shared build folder serves them all.
GPU_TARGETS="kiln kiln_lowering_gpu_tests kiln_runtime_gpu_tests kiln_cli_tests kiln_gemm_bench"

step() { echo "== $* (${SECONDS}s)"; }

want() { [[ " ${SKIP:-} " != *" $1 "* ]]; }

# gpu_device: the GPUs' names, driver, memory and clocks into $OUT/device.txt, and printed.
gpu_device() {
    step "device"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
        --format=csv >"$OUT/device.txt" 2>&1
    cat "$OUT/device.txt"
}

# gpu_build [TARGET...]: configure $BUILD (Release, Ninja; removed first unless KEEP_BUILD=1) and
# build GPU_TARGETS and the TARGETs besides; logs in $OUT/configure.log and $OUT/build.log. On a
# failure prints the errors and exits the script. Sets KILN, the kiln binary.
# shellcheck disable=SC2120 # the TARGETs are optional
gpu_build() {
    step "build in $BUILD${KEEP_BUILD:+ (KEEP_BUILD=$KEEP_BUILD)}"
    [ "${KEEP_BUILD:-0}" = 1 ] || rm -rf "$BUILD"
    if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1
    then
        tail -30 "$OUT/configure.log"; echo "configure failed"; exit 1
    fi
    # shellcheck disable=SC2086 # GPU_TARGETS is a list of names
    if ! cmake --build "$BUILD" -j "$JOBS" --target $GPU_TARGETS "$@" >"$OUT/build.log" 2>&1; then
        grep -E "error|FAILED" -A5 "$OUT/build.log" | head -60; echo "build failed"; exit 1
    fi
    KILN="$BUILD/tools/kiln/kiln"
}

# gpu_tests REGEX [LABELS]: ctest -L LABELS (default gpu) -R REGEX (all where empty) with a GPU
# required, -V so that the figures the GPU tests print ("[ gpu ]") stay in $OUT/ctest-gpu.log;
# prints those figures, the failures and the count. A failure sets status.
gpu_tests() {
    local regex=$1 labels=${2:-gpu}
    # shellcheck disable=SC2016 # the quotes are for the reader, around the values
    step "ctest -L '$labels'${regex:+ -R '$regex'}"
    (cd "$BUILD" && KILN_REQUIRE_GPU=1 ctest -L "$labels" ${regex:+-R "$regex"} -V --timeout 300) \
        >"$OUT/ctest-gpu.log" 2>&1 || status=1
    grep -E "\[ gpu  |tests passed|\(Failed\)|\(Skipped\)|Failure" "$OUT/ctest-gpu.log" \
        | sed 's/^[0-9]*: //' | awk '!seen[$0]++' | head -80
}

# best_point DB: the parameters of the fastest record of a tuning database (kiln db best), or
# nothing where it has none.
best_point() {
    "$KILN" db best "$1" |
        sed -n 's/.* at \([A-Z_0-9=,]*[0-9]\)\(, checked.*\)\{0,1\}$/\1/p' | head -1
}

# median_ms: the median time, in ms, of the `kiln run` output on stdin.
median_ms() { sed -n 's/^time \([0-9.]*\) ms median.*/\1/p'; }

# tune_and_run NAME COMMAND PIPELINE [ARG...]: kiln tune of COMMAND with TUNE_ARGS (an array the
# script sets: space, strategy...) and the ARGs (sizes) into $OUT/tune-NAME, then kiln run of its
# winner at the ARGs with RUN_ARGS (an array the script may set: --specialize where the sweep
# tuned with it, so that the kernel run is the one the sweep timed), 100 repetitions, into
# $OUT/run-NAME.log; with EVALUATOR other than cuda (no GPU) the winner's kernel is emitted into
# $OUT/emit-NAME instead. Sets winner. Returns 1 where there is no winner (and sets status) and
# where the winner was only emitted.
tune_and_run() {
    local name=$1 command=$2 pipeline=$3
    shift 3
    step "kiln tune: $name"
    # shellcheck disable=SC2153 # TUNE_ARGS (and RUN_ARGS) are the sourcing script's
    "$KILN" tune "$command" "${TUNE_ARGS[@]}" "$@" --evaluator "${EVALUATOR:-cuda}" -j "$JOBS" \
        -o "$OUT/tune-$name" --quiet >"$OUT/tune-$name.log" 2>&1 || status=1
    grep -E "candidates in|winner" "$OUT/tune-$name.log"
    winner=$(best_point "$OUT/tune-$name/tuning.jsonl")
    if [ -z "$winner" ]; then
        echo "no winner for $name"; status=1; return 1
    fi
    step "kiln run: $name at $winner"
    if [ "${EVALUATOR:-cuda}" != cuda ]; then # no GPU: the winner's kernel is only emitted
        local sizes=()
        [ -n "${RUN_ARGS[*]:-}" ] && sizes=("$@") # kiln emit takes sizes with --specialize
        "$KILN" emit "$command" --pipeline "$pipeline" --params "$winner" -o "$OUT/emit-$name" \
            ${RUN_ARGS[@]+"${RUN_ARGS[@]}"} ${sizes[@]+"${sizes[@]}"} >"$OUT/run-$name.log" 2>&1 ||
            status=1
        cat "$OUT/run-$name.log"
        return 1
    fi
    "$KILN" run "$command" --pipeline "$pipeline" --params "$winner" "$@" --repetitions 100 \
        ${RUN_ARGS[@]+"${RUN_ARGS[@]}"} >"$OUT/run-$name.log" 2>&1 || status=1
    grep -E "time|error|registers" "$OUT/run-$name.log"
}
