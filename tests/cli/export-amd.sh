#!/bin/sh
# kiln export for an AMD target: the assembly, the code object, the manifest and a C++ header
# that embeds the code object and compiles against the runtime's headers; and the C ABI over HIP
# (tools/kiln/ExportCapiHip.cpp): its source compiles with -Werror under every C compiler found,
# --shared-library builds its library, and a C program linked against it gets the refusal of a
# negative size, nothing to do for an empty grid and the message of a missing HIP runtime, and,
# over the runtime tests' fake libamdhip64, a launch of the real code object, persistent or not.
#   export-amd.sh KILN CXX SOURCE_DIR OUT_DIR FAKE_LIBAMDHIP64
set -eu
kiln=$1 cxx=$2 src=$3 out=$4 fake=$5
rm -rf "$out"
"$kiln" export examples/gemm.json --pipeline rules/gemm.pipeline.json --target gfx942 \
    --shared-library -o "$out"
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

strict="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Werror"
for cc in gcc clang; do
    command -v $cc >/dev/null || continue
    $cc $strict -O2 -fPIC -shared -o "$out/capi-$cc.so" "$out/kiln_gemm_capi.c" -ldl -pthread
    echo "the exported C source compiles with $cc"
done

"$kiln" export examples/gemm.json --pipeline rules/gemm.pipeline.json --target gfx942 \
    --params PERSISTENT=1 --name gemm_persistent --shared-library -o "$out/persistent" >/dev/null
grep -o '"workgroups_per_multiprocessor": [0-9]*' "$out/persistent/gemm_persistent.manifest.json"

# Calls of NAME_launch (NAME given as -DNAME, its header with -include) for the GEMM's
# D = alpha A B + beta C.
cat >"$out/call.c" <<'C'
#include <stdio.h>
#define GLUE(name, what) name##_##what
#define FUNCTION(name, what) GLUE(name, what)
static void call(const char* what, int64_t m, int64_t k, int64_t n) {
    int code;
    printf("%s:\n", what);
    code = FUNCTION(NAME, launch)(NULL, (void*)0xa000, (void*)0xb000, (void*)0xc000,
                                  (void*)0xd000, 1.0f, 0.5f, m, k, n);
    printf("  -> %d '%s'\n", code, FUNCTION(NAME, error)());
}
int main(void) {
    call("K = -7", 1000, -7, 999);
    call("M = 0", 0, 777, 999);
    call("the default stream", 1000, 777, 999);
    call("a second launch", 128000, 777, 999);
    return 0;
}
C
build_call() { # NAME FOLDER
    cc -std=c11 -Wall -Wextra -Werror -DNAME="$1" -include "$2/$1_capi.h" -o "$out/call-$1" \
        "$out/call.c" -L"$2" -l"$1"
}
build_call kiln_gemm "$out"
build_call gemm_persistent "$out/persistent"
echo "without a HIP runtime:"
KILN_HIP_RUNTIME=/nonexistent/libamdhip64.so LD_LIBRARY_PATH="$out" "$out/call-kiln_gemm" | head -6
echo "over the fake HIP runtime:"
KILN_HIP_RUNTIME="$fake" LD_LIBRARY_PATH="$out" "$out/call-kiln_gemm" | tail -4
echo "the persistent kernel over the fake HIP runtime:"
KILN_HIP_RUNTIME="$fake" LD_LIBRARY_PATH="$out/persistent" "$out/call-gemm_persistent" | tail -4
