#!/bin/sh
# A target of an existing vendor added as arch-db data only: a KILN_ARCH_FILE whose one target,
# sm_87, is sm_80's figures under a name Kiln does not ship, and whose "default_targets" names
# it. kiln emit and kiln tune (ranking with the cost model, as without a GPU) take it as their
# default target and write code that ptxas assembles for it.
#   new-target.sh KILN OUT_DIR        (exit 77, skipped: no ptxas)
set -eu
kiln=$1 out=$2
if [ -z "${KILN_PTXAS:-}" ] && [ ! -x /usr/local/cuda/bin/ptxas ] && ! command -v ptxas >/dev/null
then
    echo "no ptxas"
    exit 77
fi
rm -rf "$out"
mkdir -p "$out"
db="$out/arch-db.json"
{
    printf '{"schema_version": 1, "default_targets": ["sm_87"], "targets": [\n'
    KILN_ARCH_FILE= "$kiln" arch show sm_80 --json |
        sed -e 's/"name": "sm_80"/"name": "sm_87"/' \
            -e 's/"reference_part": .*/"reference_part": "a target only this test knows",/'
    printf ']}\n'
} >"$db"
export KILN_ARCH_FILE="$db"
"$kiln" arch list
"$kiln" emit examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --params MMA=1 \
    -o "$out/emit"
grep '^\.target' "$out/emit/kiln_gemm_f16.ptx"
"$kiln" tune examples/gemm-f16.json --space examples/gemm.space.json --evaluator model \
    --budget 3 --jobs 2 --quiet -o "$out/tune"
grep '^\.target' "$out/tune/sm_87/export/gemm_f16_sm_87.ptx"
ls "$out/tune/sm_87/candidates" | grep -c '\.cubin$'
