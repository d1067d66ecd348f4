# callAA (twelfth session): softmax and layer norm tuned model-guided, 64 candidates each (the
# refitted cost model ranks the 5280 points, the sweep measures its best), each winner by kiln
# run against the peers, and exported, in 7 rounds alternating with torch.compile.
REAL=$OUT; mkdir -p /tmp/o
export KILN_GPU_BUILD=/tmp/kb OUT=/tmp/o/aa
mkdir -p $OUT
OPS="softmax layernorm" SKIP=tests KEEP_BUILD=1 STRATEGY=model-guided BUDGET=64 bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
for op in softmax layernorm; do cp $OUT/tune-$op-8192x8192/sm_90a/report.txt $REAL/tune-$op-report.txt; done
cp $OUT/table.txt $OUT/export-table.txt $OUT/tuning-*.jsonl.gz $REAL/ 2>/dev/null
for op in softmax layernorm; do sed -n 1,9p $REAL/tune-$op-report.txt; grep ^winner $REAL/tune-$op-report.txt; done
cat $REAL/table.txt $REAL/export-table.txt
