#!/usr/bin/env bash
# gpu-floors.sh: issue 18's floors on the GPU machine. For each SIZE in SIZES and each element
# type in DTYPES (f16: examples/gemm-f16.json; bf16: examples/gemm-bf16-nn.json, both with A and
# B row-major, the work of cuBLAS's A @ B), the winner of `kiln tune` over the shipped space
# (examples/gemm.space.json), `kiln run` at that winner (it must reproduce the sweep's time), and
# cuBLAS (torch.matmul, bench/peers/cublas_peers.py) timed in the same call. Logs and tuning
# databases go to $OUT; the table of ratios (cuBLAS time / Kiln's: above 1 is faster than cuBLAS)
# is printed last.
#
#   OUT=/tmp/out scripts/gpu-floors.sh      # build folder: $KILN_GPU_BUILD or /tmp/kiln-floors
#   SIZES="1024 2048 4096 8192" DTYPES="f16 bf16" BUDGET=64 ...   # the defaults
#   KEEP_BUILD=1 ...                        # build on in the folder an earlier script left
#   SPACE=path ...                          # another search space (the shipped one by default)
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/gpu-common.sh
. scripts/lib/gpu-common.sh
OUT=${OUT:-$PWD/gpu-floors-out}
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-floors}
SIZES=${SIZES:-1024 2048 4096 8192}
DTYPES=${DTYPES:-f16 bf16}
BUDGET=${BUDGET:-64}
SPACE=${SPACE:-examples/gemm.space.json}
mkdir -p "$OUT"

gpu_build

command_of() { [ "$1" = bf16 ] && echo examples/gemm-bf16-nn.json || echo examples/gemm-f16.json; }
: >"$OUT/floors.txt"
for size in $SIZES; do
    for dtype in $DTYPES; do
        name="$dtype-$size"
        sizes=(--size M="$size" --size N="$size" --size K="$size")
        step "kiln tune $name (budget $BUDGET)"
        timeout 300 "$KILN" tune "$(command_of "$dtype")" --space "$SPACE" \
            "${sizes[@]}" --budget "$BUDGET" -j "$JOBS" -q -o "/tmp/floors-$name" \
            --db "$OUT/tune-$name.jsonl" >"$OUT/tune-$name.log" 2>&1 || status=1
        winner=$(sed -n 's/^winner: \([0-9.]*\) us at \([^ ,]*\(,[^ ,]*\)*\),.*/\1 \2/p' \
            "$OUT/tune-$name.log" | tail -1)
        grep -E "candidates/s|^winner" "$OUT/tune-$name.log" | sed "s/^/  /"
        read -r tuned params <<<"${winner:-failed none}"
        ran=failed
        if [ "$params" != none ]; then
            ran=$(timeout 120 "$KILN" run "$(command_of "$dtype")" \
                --pipeline rules/gemm.pipeline.json --params "$params" "${sizes[@]}" \
                --repetitions 100 2>&1 | tee -a "$OUT/run-$name.log" | median_ms |
                awk '{printf "%.1f", $1 * 1000}')
            [ -z "$ran" ] && ran=failed
        fi
        [ "$ran" = failed ] && status=1
        echo "$size $dtype $tuned ${ran:-failed} $params" >>"$OUT/floors.txt"
    done
done

step "cuBLAS (torch.matmul)"
# shellcheck disable=SC2086 # SIZES is a list
timeout 180 python3 bench/peers/cublas_peers.py $SIZES 2>"$OUT/cublas.err" |
    awk '$1 == "cublas" { print $2, $3, $5 }' >"$OUT/cublas.txt" || status=1

echo
echo "================ issue 18 floors (us; ratio = cuBLAS / Kiln) ================"
printf "%-6s %-5s %10s %10s %10s %8s %8s  %s\n" size dtype tuned "kiln run" cuBLAS tuned run winner
while read -r size dtype tuned ran params; do
    cublas=$(awk -v s="$size" -v d="$dtype" '$1 == s && $2 == d {print $3}' "$OUT/cublas.txt")
    ratio() { awk -v c="${cublas:-0}" -v k="$1" 'BEGIN {
        if (c > 0 && k + 0 > 0) printf "%.3fx", c / k; else printf "-" }'; }
    printf "%-6s %-5s %10s %10s %10s %8s %8s  %s\n" "$size" "$dtype" "$tuned" "$ran" \
        "${cublas:-?}" "$(ratio "$tuned")" "$(ratio "$ran")" "$params"
done <"$OUT/floors.txt"
echo "status: $status (logs in $OUT)"
exit $status
