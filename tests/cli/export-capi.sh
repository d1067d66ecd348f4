#!/bin/sh
# The C ABI of kiln export (tools/kiln/ExportCapi.h) on a machine with or without a GPU: the
# golden source compiles with -Werror under every C compiler found; a real export builds
# libNAME.so with --shared-library, whose source also compiles with -Werror and whose header
# compiles as C++; a C program linked against it gets the refusal of a negative size, nothing to
# do for an empty grid, and the message of a missing CUDA driver, all without touching a GPU; a
# kernel made for its sizes (--specialize) is launched at them only; a compiler that fails is
# reported with its command.
#   export-capi.sh KILN SOURCE_DIR OUT_DIR
set -eu
kiln=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
strict="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Werror"
mkdir -p "$out/golden"
for cc in cc gcc clang; do
    command -v $cc >/dev/null || continue
    $cc $strict -O2 -fPIC -shared -o "$out/golden/libgemm-$cc.so" \
        "$src/tests/golden/export/gemm_capi.c" -ldl -pthread
    echo "the golden source compiles with $cc"
done
cp "$out/golden/libgemm-cc.so" "$out/golden/libgemm.so"

"$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --target sm_90a \
    --params MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4 --name gemm_f16 \
    --shared-library -o "$out/gemm"
for cc in gcc clang; do
    command -v $cc >/dev/null || continue
    $cc $strict -O2 -fPIC -shared -o "$out/gemm-$cc.so" "$out/gemm/gemm_f16_capi.c" -ldl -pthread
    echo "the exported source compiles with $cc"
done
printf '#include "gemm_f16_capi.h"\nint (*launch)(void*, const void*, const void*, void*, int64_t, int64_t, int64_t) = gemm_f16_launch;\n' \
    >"$out/use.cpp"
c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$out/gemm" "$out/use.cpp"
echo "the exported C header compiles as C++"
nm -D --defined-only "$out/gemm/libgemm_f16.so" | awk '{print $3}' | grep gemm_f16_ | sort

# Calls of NAME_launch (NAME given as -DNAME, its header with -include).
cat >"$out/call.c" <<'C'
#include <stdio.h>
#define GLUE(name, what) name##_##what
#define FUNCTION(name, what) GLUE(name, what)
static void call(const char* what, void* stream, int64_t m, int64_t k, int64_t n) {
    int code;
    printf("%s:\n", what);
    code = FUNCTION(NAME, launch)(stream, (void*)0xa000, (void*)0xb000, (void*)0xd000, m, k, n);
    printf("  -> %d '%s'\n", code, FUNCTION(NAME, error)());
}
int main(void) {
    call("K = -7", NULL, 1000, -7, 999);
    call("M = 0", NULL, 0, 777, 999);
    call("the default stream", NULL, 1000, 777, 999);
    call("a stream", (void*)0x5000, 1000, 777, 999);
    call("the stream again", (void*)0x5000, 1000, 777, 999);
    call("a grid the driver refuses", (void*)0x5000, 128000, 777, 999);
    return 0;
}
C
build_call() { # NAME HEADER_FOLDER LIBRARY_FOLDER
    cc -std=c11 -Wall -Wextra -Werror -DNAME="$1" -include "$2/$1_capi.h" -o "$out/call-$1" \
        "$out/call.c" -L"$3" -l"$1"
}
build_call gemm_f16 "$out/gemm" "$out/gemm"
echo "the exported library without a driver:"
KILN_CUDA_DRIVER=/nonexistent/libcuda.so.1 LD_LIBRARY_PATH="$out/gemm" "$out/call-gemm_f16" \
    | head -6
# The golden source's library over a driver that prints its calls: what it asks is golden too.
build_call gemm "$src/tests/golden/export" "$out/golden"
cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -o "$out/fake-libcuda.so" \
    "$src/tests/cli/fake-libcuda.c"
KILN_CUDA_DRIVER="$out/fake-libcuda.so" LD_LIBRARY_PATH="$out/golden" "$out/call-gemm" \
    >"$out/calls.txt"
diff -u "$src/tests/golden/export/gemm_capi.calls.txt" "$out/calls.txt"
echo "the golden library asks the driver for what gemm_capi.calls.txt holds"

# A persistent kernel (PERSISTENT=1) over the same driver: as many workgroups as its 132
# multiprocessors hold (one each), fewer where there are fewer tiles (8 x 4 for M = 1000), and
# the 4000 tiles of M = 128000 on 132 workgroups, which the driver takes.
"$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --target sm_90a \
    --params MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4,PERSISTENT=1 \
    --name gemm_persistent --shared-library -o "$out/persistent"
build_call gemm_persistent "$out/persistent" "$out/persistent"
KILN_CUDA_DRIVER="$out/fake-libcuda.so" LD_LIBRARY_PATH="$out/persistent" \
    "$out/call-gemm_persistent" >"$out/persistent-calls.txt"
for launch in "grid 32 x 1 x 1, block 4 x 8 x 8" "grid 132 x 1 x 1, block 4 x 8 x 8"; do
    if ! grep -q "cuLaunchKernel(kernel in .*, $launch" "$out/persistent-calls.txt"; then
        echo "FAILED: the persistent kernel was not launched with $launch:"
        cat "$out/persistent-calls.txt"
        exit 1
    fi
done
grep -q "cuDeviceGetAttribute(16, device 0)" "$out/persistent-calls.txt"
refused=$(awk '/^a grid the driver refuses:/ { at = 1 } at && /-> / { print; exit }' \
    "$out/persistent-calls.txt")
case "$refused" in
*"-> 0 "*) ;;
*)
    echo "FAILED: the persistent grid of 4000 tiles was not launched: $refused"
    exit 1
    ;;
esac
echo "the persistent kernel's launcher launches min(tiles, 132 multiprocessors x 1) workgroups"

# A kernel made for its sizes (--specialize: M = 1000, K = 777, N = 999, as `kiln tune
# --specialize` times it): the launcher launches it at those sizes and refuses any other before
# the driver is asked for anything (the kernel would trap), a negative size as before.
"$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --target sm_90a \
    --params MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4 --specialize \
    --size M=1000 --size K=777 --size N=999 --name gemm_sized --shared-library -o "$out/sized" \
    >/dev/null
grep -q '"M == 1000"' "$out/sized/gemm_sized.manifest.json"
build_call gemm_sized "$out/sized" "$out/sized"
KILN_CUDA_DRIVER="$out/fake-libcuda.so" LD_LIBRARY_PATH="$out/sized" "$out/call-gemm_sized" \
    >"$out/sized-calls.txt"
for expected in \
    "  -> 1 'gemm_sized_launch: size K is -7; a size is 0 or more'" \
    "  -> 1 'gemm_sized_launch: the kernel was made for sizes where M == 1000 (kiln export --specialize); export it for these sizes'" \
    "  -> 0 ''"; do
    if ! grep -qF "$expected" "$out/sized-calls.txt"; then
        echo "FAILED: the specialized kernel's launcher did not answer $expected:"
        cat "$out/sized-calls.txt"
        exit 1
    fi
done
if [ "$(grep -c "cuLaunchKernel" "$out/sized-calls.txt")" != 3 ]; then
    echo "FAILED: the specialized kernel was not launched exactly at its sizes (three calls):"
    cat "$out/sized-calls.txt"
    exit 1
fi
echo "the launcher of a kernel made for its sizes refuses others"

if CC="cc -include no-such-header.h" "$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json \
    --target sm_90a --params MMA=1,MT_M=64,MT_N=32,MT_K=16,WT_M=32 --shared-library \
    -o "$out/refused" 2>"$out/refused.log"; then
    echo "FAILED: a failing compiler built a library"
    exit 1
fi
cat "$out/refused.log"
if CC=no-such-cc "$kiln" export examples/gemm-f16.json --pipeline rules/gemm.pipeline.json \
    --target sm_90a --params MMA=1,MT_M=64,MT_N=32,MT_K=16,WT_M=32 --shared-library \
    -o "$out/refused" 2>"$out/missing.log"; then
    echo "FAILED: a missing compiler built a library"
    exit 1
fi
cat "$out/missing.log"
echo "the C ABI builds and answers without a GPU"
