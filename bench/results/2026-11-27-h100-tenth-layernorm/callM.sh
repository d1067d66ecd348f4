# callM: DeviceRun with its quiet wait before each flush (as the peers' spin): the sweeps of softmax and
# layer norm, the PREFETCH=330 point, and the DeviceProblem GPU tests.
REAL=$OUT; mkdir -p /tmp/o
export OUT=/tmp/o/m KILN_GPU_BUILD=/tmp/kb
OPS="softmax layernorm" SKIP=tests ROUNDS=2 POINTS="LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330 LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5" bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
for op in softmax layernorm; do cp $OUT/tune-$op-8192x8192/sm_90a/report.txt $REAL/tune-$op-report.txt; done
cp $OUT/table.txt $OUT/points-table.txt $REAL/ 2>/dev/null
(cd /tmp/kb && KILN_REQUIRE_GPU=1 ctest -L gpu -R "DeviceProblem" --timeout 300) > $REAL/ctest.log 2>&1
grep -E "tests passed|Failed" $REAL/ctest.log
grep -E "^winner" $REAL/tune-*-report.txt
cat $REAL/table.txt $REAL/points-table.txt
