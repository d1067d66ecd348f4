# callL: the timing protocols once more (spin first), then the softmax, layer norm and RMS norm
# sweeps with the peers timed by the new peer_timing.median_ms (spin, then the flush, then the launch).
REAL=$OUT; mkdir -p /tmp/o
export OUT=/tmp/o/l KILN_GPU_BUILD=/tmp/kb
bash .ab/mk.sh p5pf330 > /tmp/o/mk.log 2>&1 || cat /tmp/o/mk.log
timeout 200 python3 .ab/ln6.py p5pf330 2>&1 | grep -v Warn > $REAL/ln6.txt
OPS="softmax layernorm rmsnorm" SKIP=tests ROUNDS=2 POINTS="LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330" bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
for op in softmax layernorm rmsnorm; do cp $OUT/tune-$op-8192x8192/sm_90a/report.txt $REAL/tune-$op-report.txt; done
cp $OUT/table.txt $OUT/points-table.txt $REAL/ 2>/dev/null
grep -E "^winner" $REAL/tune-*-report.txt
cat $REAL/ln6.txt $REAL/table.txt $REAL/points-table.txt
