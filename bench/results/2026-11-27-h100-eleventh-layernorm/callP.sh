# callP (eleventh session): ONLINE=2 GPU cases, sweeps of softmax and layer norm with ONLINE 0..2,
# the exported winners timed in the peers' harness beside torch.compile.
REAL=$OUT; mkdir -p /tmp/o; trap 'tar -czf $REAL/logs.tgz -C /tmp o' EXIT
export KILN_GPU_BUILD=/tmp/kb BUILD=/tmp/kb OUT=/tmp/o/p
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_device
gpu_build
step "normalization + cooperative GPU tests"
(cd $BUILD && KILN_REQUIRE_GPU=1 ctest -L gpu -R "Normalization|Cooperative" -j 4 --timeout 200 --output-on-failure) > $OUT/ctest.log 2>&1
grep -E "tests passed|\(Failed\)|Failure" $OUT/ctest.log | head -30
cp $OUT/ctest.log $REAL/ctest.log
step "gpu-norms"
OPS="softmax layernorm" SKIP=tests KEEP_BUILD=1 bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
for op in softmax layernorm; do cp $OUT/tune-$op-8192x8192/sm_90a/report.txt $REAL/tune-$op-report.txt; done
cp $OUT/table.txt $OUT/export-table.txt $REAL/ 2>/dev/null
for op in softmax layernorm; do head -14 $REAL/tune-$op-report.txt; done
cat $REAL/table.txt $REAL/export-table.txt
