REAL=$OUT
export OUT=/tmp/o/j KILN_GPU_BUILD=/tmp/kb OPS="softmax layernorm" ROUNDS=2
export POINTS="LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5 LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330"
mkdir -p $OUT
bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
for op in softmax layernorm; do cp $OUT/tune-$op-8192x8192/sm_90a/report.txt $REAL/tune-$op-report.txt; done
cp $OUT/table.txt $OUT/points-table.txt $OUT/peers.log $REAL/ 2>/dev/null
grep -E "tests passed|\(Failed\)|Failure" $REAL/norms.log | head
grep -E "^winner" $REAL/tune-*-report.txt
cat $REAL/table.txt $REAL/points-table.txt
