#!/usr/bin/env bash
# A/B on GPU 0: HEAD (old) against the smaller PTX (new: element loops in the unaligned version,
# the epilogue's accesses in one scope; NOSCOPE=1 selects the latter in this build).
set -uo pipefail
for v in old new; do
  [ -x /tmp/$v-build/tools/kiln/kiln ] && continue
  mkdir -p /tmp/$v && tar -xf .ab/$v.tar -C /tmp/$v
  (cmake -S /tmp/$v -B /tmp/$v-build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1 &&
    cmake --build /tmp/$v-build -j 8 --target kiln >"$OUT/$v-build.log" 2>&1 || echo "$v build failed") &
done
wait
export P=MMA=1,MT_K=64,MT_M=128,MT_N=256,STAGES=4,WT_M=16,WT_N=0
run() { CUDA_VISIBLE_DEVICES=0 /tmp/$1-build/tools/kiln/kiln run examples/gemm-f16.json --pipeline rules/gemm.pipeline.json \
      --params $P --target sm_90a --repetitions 200 "${@:2}" 2>&1 | grep -E "time|registers|error" | sed 's/.*block 4x8x8, //' | tr '\n' ' '; echo; }
for i in 1 2 3; do
  for v in old new newscope; do
    b=$v; env=""; [ $v = new ] && env="NOSCOPE=1"; [ $v = newscope ] && b=new
    echo -n "4096 $v: "; env $env bash -c "$(declare -f run); run $b --size M=4096 --size N=4096 --size K=4096"
  done
done | tee "$OUT/ab4.log"
for i in 1 2; do
  for v in old new; do
    env=""; [ $v = new ] && env="NOSCOPE=1"
    echo -n "K=4095 $v: "; env $env bash -c "$(declare -f run); run $v --size M=4096 --size N=4096 --size K=4095"
    echo -n "odd 1000x999x777 $v: "; env $env bash -c "$(declare -f run); run $v --size M=1000 --size N=999 --size K=777"
  done
done | tee -a "$OUT/ab4.log"
wait
