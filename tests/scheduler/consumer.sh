#!/bin/sh
# Export a kernel, install Kiln to a fresh prefix, build examples/consumer/ against the installed
# package (find_package(kiln)) and run it: on a machine with a GPU it runs the exported kernel and
# checks the result; without one it says so.
# Usage: consumer.sh KILN BUILD_DIR WORK_DIR   (run from the source tree)
set -eu
kiln=$1
build=$2
work=$3
target=${KILN_CONSUMER_TARGET:-sm_80} # PTX for sm_80 JIT-compiles on every newer NVIDIA GPU
rm -rf "$work"
mkdir -p "$work"
"$kiln" export examples/axpy.json --pipeline rules/elementwise.pipeline.json --target "$target" \
    --params WG_SIZE=128,VEC=4 -o "$work/export" --name axpy
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# KILN_CONSUMER_FLAGS: compile and link flags the installed libraries need (the sanitizers of
# an instrumented build).
flags=${KILN_CONSUMER_FLAGS:-}
cmake -S examples/consumer -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DKILN_EXPORT_DIR="$work/export" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/build/consumer"
