mkdir -p /tmp/k && tar -xf .ab/head.tar -C /tmp/k && cd /tmp/k
cmake -S . -B /tmp/kb -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
cmake --build /tmp/kb -j 16 --target kiln kiln_lowering_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built at ${SECONDS}s"
(cd /tmp/kb && KILN_REQUIRE_GPU=1 ctest -L gpu -R 'TileOrder' --timeout 120) > $OUT/ctest-tileorder.log 2>&1
grep -E "tests passed|\(Failed\)" $OUT/ctest-tileorder.log
W=MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4,TMA=1,WARP_SPECIALIZE=1
for s in 4096 8192; do for g in 0 8 16; do
  echo -n "f16 $s^3 GROUP_M=$g: "
  /tmp/kb/tools/kiln/kiln run examples/gemm-f16.json --pipeline rules/gemm.pipeline.json --params $W,GROUP_M=$g \
    --size M=$s --size N=$s --size K=$s --repetitions 50 2>&1 | grep -E "^time|error" | tr '\n' ' '; echo
done; done | tee $OUT/runs.log
python3 - <<'PY' 2>&1 | tee $OUT/cublas.log
import torch, triton
for n in (4096, 8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.float16); b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    print("cublas", n, round(triton.testing.do_bench(lambda: a @ b, warmup=50, rep=300, return_mode="median"), 4))
PY
