mkdir -p /tmp/k && tar -xf .ab/head.tar -C /tmp/k && cd /tmp/k
export KILN_GPU_BUILD=/tmp/kb
cmake -S . -B /tmp/kb -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
cmake --build /tmp/kb -j 16 --target kiln kiln_lowering_gpu_tests kiln_runtime_gpu_tests kiln_cli_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built at ${SECONDS}s"
mkdir -p $OUT/ep $OUT/norms
OUT=$OUT/ep KEEP_BUILD=1 timeout 200 scripts/gpu-epilogue.sh 2>&1 | tail -22
OUT=$OUT/norms KEEP_BUILD=1 timeout 220 scripts/gpu-norms.sh 2>&1 | tail -16
echo "== all GPU tests (${SECONDS}s)"
(cd /tmp/kb && KILN_REQUIRE_GPU=1 timeout $((585 - SECONDS)) ctest -L gpu -j 4 --timeout 200) > $OUT/ctest-gpu-all.log 2>&1
grep -E "tests passed|\(Failed\)|\(Timeout\)|Not Run" $OUT/ctest-gpu-all.log | head -20; tail -3 $OUT/ctest-gpu-all.log
