# callS: as callR after 7f66ded (finalists timed to a tenth of the precision)
REAL=$OUT; mkdir -p /tmp/o
export KILN_GPU_BUILD=/tmp/kb OUT=/tmp/o/s
mkdir -p $OUT
OPS="layernorm" SKIP=tests bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
cp $OUT/tune-layernorm-8192x8192/sm_90a/report.txt $REAL/tune-layernorm-report.txt
cp $OUT/table.txt $OUT/export-table.txt $REAL/ 2>/dev/null
head -16 $REAL/tune-layernorm-report.txt
cat $REAL/table.txt $REAL/export-table.txt
