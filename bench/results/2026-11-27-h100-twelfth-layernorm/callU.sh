# callU (twelfth session): the 4 HOLD=0 GPU cases with the Normalization and Cooperative tests,
# the layer norm sweep over 5280 points (HOLD 0 and 1), Triton-like HOLD=0 points run twice,
# the exported winner in 7 rounds beside torch.compile; the sweep's database brought back.
REAL=$OUT; mkdir -p /tmp/o
export KILN_GPU_BUILD=/tmp/kb BUILD=/tmp/kb OUT=/tmp/o/u
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_device
gpu_build
step "normalization + cooperative GPU tests"
(cd $BUILD && KILN_REQUIRE_GPU=1 ctest -L gpu -R "Normalization|Cooperative" -j 4 --timeout 200 --output-on-failure) > $OUT/ctest.log 2>&1
grep -E "tests passed|\(Failed\)|Failure|reread" $OUT/ctest.log | head -30
cp $OUT/ctest.log $REAL/ctest.log
step "gpu-norms"
POINTS="LANES=512,UNROLL=1,VEC=4,ONLINE=1,MIN_BLOCKS=4,HOLD=0 LANES=512,UNROLL=1,VEC=4,ONLINE=2,MIN_BLOCKS=4,HOLD=0
 LANES=512,UNROLL=1,VEC=8,ONLINE=2,HOLD=0 LANES=1024,UNROLL=1,VEC=8,ONLINE=2,HOLD=0
 LANES=256,UNROLL=2,VEC=8,ONLINE=2,PREFETCH=256,MIN_BLOCKS=4" \
OPS="layernorm" SKIP=tests KEEP_BUILD=1 bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
cp $OUT/tune-layernorm-8192x8192/sm_90a/report.txt $REAL/tune-layernorm-report.txt
cp $OUT/table.txt $OUT/export-table.txt $OUT/points.txt $OUT/points-table.txt $OUT/tuning-*.jsonl.gz $REAL/ 2>/dev/null
head -16 $REAL/tune-layernorm-report.txt; grep ^winner $REAL/tune-layernorm-report.txt
grep -c HOLD=0 <(zcat $REAL/tuning-*.jsonl.gz) 
tail -30 $REAL/norms.log | grep -v "^ *$" | tail -14
cat $REAL/table.txt $REAL/export-table.txt $REAL/points-table.txt
