#!/bin/sh
# kiln export for an AMD target: the assembly, the code object, the manifest and a C++ header
# that embeds the code object and compiles against the runtime's headers.
#   export-amd.sh KILN CXX SOURCE_DIR OUT_DIR
set -eu
kiln=$1 cxx=$2 src=$3 out=$4
rm -rf "$out"
"$kiln" export examples/gemm.json --pipeline rules/gemm.pipeline.json --target gfx942 -o "$out"
head -c 4 "$out/kiln_gemm.hsaco" | od -An -c
grep -c 'codeObjectInMemory' "$out/kiln_gemm.h"
cat >"$out/use.cpp" <<'CPP'
#include "kiln_gemm.h"
static_assert(sizeof kiln_export::kiln_gemm::kCodeObject > 64, "the code object is embedded");
int main() { return 0; }
CPP
"$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -I"$src/runtime/include" -I"$src/arch-db/include" \
    -I"$out" "$out/use.cpp"
echo "the exported header compiles"
