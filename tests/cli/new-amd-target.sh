#!/bin/sh
# A CDNA 3 target added as arch-db data only: a KILN_ARCH_FILE whose one target, gfx940, is
# gfx942's entry under another name. The AMDGCN backend knows CDNA 3 by its family, so the MFMA
# GEMM for gfx940 is gfx942's, wait states and hazards included, but for the target's name; and
# it assembles (the LLVM MC assembler knows gfx940).
#   new-amd-target.sh KILN OUT_DIR
set -eu
kiln=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
db="$out/arch-db.json"
{
    printf '{"schema_version": 1, "default_targets": ["gfx940"], "targets": [\n'
    KILN_ARCH_FILE= "$kiln" arch show gfx942 --json | sed -e 's/"name": "gfx942"/"name": "gfx940"/'
    printf ']}\n'
} >"$db"
params=MMA=1,WT_M=32,WT_N=0
KILN_ARCH_FILE= "$kiln" emit examples/gemm-f16.json --pipeline rules/gemm.pipeline.json \
    --params "$params" --target gfx942 -o "$out/gfx942" >/dev/null
KILN_ARCH_FILE="$db" "$kiln" emit examples/gemm-f16.json --pipeline rules/gemm.pipeline.json \
    --params "$params" --target gfx940 -o "$out/gfx940" >/dev/null
KILN_ARCH_FILE="$db" "$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json \
    --params "$params" --target gfx940 -o "$out/export" | sed "s|$out|OUT|g"
sed 's/gfx942/gfx940/g' "$out/gfx942/kiln_gemm_f16.s" >"$out/gfx942-renamed.s"
if cmp -s "$out/gfx942-renamed.s" "$out/gfx940/kiln_gemm_f16.s"; then
    echo "gfx940's MFMA GEMM is gfx942's"
else
    diff "$out/gfx942-renamed.s" "$out/gfx940/kiln_gemm_f16.s" | head -20
    echo "gfx940's MFMA GEMM differs from gfx942's" >&2
    exit 1
fi
