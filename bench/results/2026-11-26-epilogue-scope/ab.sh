#!/usr/bin/env bash
# A/B on one GPU: af1c9e8 (old: a scope per epilogue access) against b25dfc1 (new: a wgmma
# kernel's epilogue stores in one scope). Run by the device tool with .ab/{old,new}.tar carried:
#   OUT=$OUT bash bench/results/2026-11-26-epilogue-scope/ab.sh
set -uo pipefail
for v in old new; do
  mkdir -p /tmp/$v && tar -xf .ab/$v.tar -C /tmp/$v
  (cmake -S /tmp/$v -B /tmp/$v-build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1 &&
    cmake --build /tmp/$v-build -j 8 --target kiln >"$OUT/$v-build.log" 2>&1 || echo "$v build failed") &
done
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { # build example params sizes...
  /tmp/$1-build/tools/kiln/kiln run examples/$2.json --pipeline rules/gemm.pipeline.json \
    --params "$3" --target sm_90a --repetitions 200 "${@:4}" 2>&1 |
    grep -E "time|registers|error|mismatch" | sed 's/.*block [0-9x]*, //' | tr '\n' ' '; echo; }
F16=MMA=1,MT_K=64,MT_M=128,MT_N=256,STAGES=4,WT_M=16,WT_N=0
BF16=MMA=1,MT_K=64,MT_M=128,MT_N=256,STAGES=3,WT_M=16,WT_N=0
for i in 1 2 3; do
  for v in old new; do
    echo -n "f16 4096^3 $v: "; run $v gemm-f16 $F16 --size M=4096 --size N=4096 --size K=4096
    echo -n "bf16 4096^3 $v: "; run $v gemm-bf16 $BF16 --size M=4096 --size N=4096 --size K=4096
  done
done | tee "$OUT/ab.log"
for v in old new; do
  echo -n "f16 1000x999x777 $v: "; run $v gemm-f16 $F16 --size M=1000 --size N=999 --size K=777
  echo -n "bf16 1000x999x777 $v: "; run $v gemm-bf16 $BF16 --size M=1000 --size N=999 --size K=777
  echo -n "f16 8192^3 $v: "; run $v gemm-f16 $F16 --size M=8192 --size N=8192 --size K=8192
done | tee -a "$OUT/ab.log"
