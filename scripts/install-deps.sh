#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Kiln builds with, and only those that are missing.
# Safe to run again: when everything is present it prints one line and changes nothing.
set -euo pipefail

packages=(
    cmake ninja-build make g++ git
    libboost-graph-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
    libcli11-dev libfmt-dev
    clang libclang-rt-dev clang-format
    llvm-16 llvm-16-dev liblld-16-dev libamd-comgr-dev
    # kiln tune over the ranks of mpirun or srun (docs/tuning.md); the same names on Debian 12
    # and Ubuntu 24.04. Optional: without them CMake leaves the MPI layer out.
    libopenmpi-dev openmpi-bin
)

# Debian 12 names the sanitizer/fuzzer runtime after the clang version.
if ! apt-cache show libclang-rt-dev >/dev/null 2>&1; then
    clang_major=$(apt-cache policy clang 2>/dev/null | sed -n 's/ *Candidate: 1:\([0-9]*\).*/\1/p')
    packages=("${packages[@]/libclang-rt-dev/libclang-rt-${clang_major:-14}-dev}")
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
