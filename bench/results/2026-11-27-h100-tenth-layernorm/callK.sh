# callK: persistent PREFETCH points (kiln run), the persistent GPU tests, and the timing protocols.
REAL=$OUT; mkdir -p /tmp/o
export OUT=/tmp/o/k KILN_GPU_BUILD=/tmp/kb
PERSIST=1 TUNE=0 OPS=layernorm SKIP=tests ROUNDS=2 bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
cp $OUT/points-table.txt $OUT/table.txt $REAL/ 2>/dev/null
(cd /tmp/kb && KILN_REQUIRE_GPU=1 timeout 400 ctest -L gpu -R "Normalization|Cooperative" -j 4 --timeout 300) > /tmp/o/ctest.log 2>&1
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.log | head -20 > $REAL/ctest-summary.txt
bash .ab/mk.sh p5pf330 nobar1 > /tmp/o/mk.log 2>&1 && KILN_SHARED=4096 bash .ab/mk.sh nobar2 >> /tmp/o/mk.log 2>&1 || cat /tmp/o/mk.log
timeout 240 python3 .ab/ln5.py p5pf330 nobar1 nobar2 2>&1 | grep -v Warn > $REAL/ln5.txt
cat $REAL/ctest-summary.txt $REAL/points-table.txt $REAL/ln5.txt
