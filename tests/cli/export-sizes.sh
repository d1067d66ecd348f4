#!/bin/sh
# The exported header takes the problem sizes by name only: tests/golden/export/gemm.h (written
# by ExportHeaderTest) compiles with designated initializers, and every other way of passing
# sizes is refused at compile time, so two sizes cannot be swapped silently; the header of a
# kernel made for its sizes (gemm_sized.h, whose launch() refuses others) compiles too.
#   export-sizes.sh CXX SOURCE_DIR OUT_DIR
set -eu
cxx=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
compile() {
    "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Werror \
        -I"$src/runtime/include" -I"$src/arch-db/include" -I"$src/tests/golden/export" "$1"
}
cat >"$out/by-name.cpp" <<'CPP'
#include "gemm.h"
#include <type_traits>
using namespace kiln_export::gemm;
static_assert(!std::is_invocable_v<decltype(grid), std::int64_t, std::int64_t, std::int64_t>,
              "no grid() of bare sizes");
static_assert(!std::is_constructible_v<Sizes, std::int64_t, std::int64_t, std::int64_t>,
              "no Sizes of sizes by position");
kiln::runtime::Dim3 f(std::int64_t m, std::size_t k) { return grid({.M = m, .K = k, .N = 1024}); }
int main() { return f(4096, 512).x == 64u ? 0 : 1; }
CPP
compile "$out/by-name.cpp"
echo "by name: compiles"
n=0
refuse() {
    n=$((n + 1))
    printf '#include "gemm.h"\nusing namespace kiln_export::gemm;\nkiln::runtime::Dim3 f() { return %s; }\n' "$2" >"$out/refused-$n.cpp"
    if compile "$out/refused-$n.cpp" 2>"$out/refused-$n.log"; then
        echo "FAILED: $1 compiles: $2"
        exit 1
    fi
    echo "$1: refused"
}
refuse "bare sizes" "grid(4096, 512, 1024)"
refuse "by position" "grid({4096, 512, 1024})"
refuse "by position in parentheses" "grid(Sizes(4096, 512, 1024))"
refuse "a size left out" "grid({.M = 4096, .N = 1024})"
refuse "out of order" "grid({.M = 4096, .N = 1024, .K = 512})"
refuse "not an integer" "grid({.M = 4096.0, .K = 512, .N = 1024})"
echo "sizes are taken by name only"
# A kernel made for its sizes (tests/golden/export/gemm_sized.h): launch() refuses others.
cat >"$out/sized.cpp" <<'CPP'
#include "gemm_sized.h"
using namespace kiln_export::gemm_sized;
kiln::runtime::Stream& f(kiln::runtime::Stream& stream, Kernel const& kernel) {
    return launch(stream, kernel, {.M = 4096, .K = 512, .N = 1024},
                  kiln::runtime::DevicePointer<kiln::runtime::Half>(),
                  kiln::runtime::DevicePointer<kiln::runtime::Half>(),
                  kiln::runtime::DevicePointer<kiln::runtime::Half>());
}
CPP
compile "$out/sized.cpp"
echo "made for its sizes: compiles"
