mkdir -p /tmp/o; trap 'tar -czf $REAL/logs.tgz -C /tmp o' EXIT
REAL=$OUT
export BUILD=/tmp/kb OUT=/tmp/o/n
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_device
gpu_build
step "normalization GPU tests"
(cd $BUILD && KILN_REQUIRE_GPU=1 ctest -L gpu -R Normalization -j 4 --timeout 200 --output-on-failure) > $OUT/ctest.log 2>&1
grep -E "tests passed|\(Failed\)|Failure" $OUT/ctest.log | head
TUNE_ARGS=(--space examples/normalization.space.json --strategy exhaustive --specialize --budget 0)
RUN_ARGS=(--specialize)
tune_and_run layernorm-8192x8192 examples/layernorm-f16.json rules/reduction.pipeline.json --size M=8192 --size N=8192
for p in LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5 LANES=256,UNROLL=2,VEC=8,ONLINE=1; do
  step "kiln run --specialize $p"
  "$KILN" run examples/layernorm-f16.json --pipeline rules/reduction.pipeline.json --params COOP=1,ROWS=1,$p --size M=8192 --size N=8192 --specialize --repetitions 100 --warmup-seconds 0.25 2>&1 | grep -E "time|error|registers"
done
step "peers"
timeout 150 python3 bench/peers/norm_peers.py 8192x8192 2>&1 | grep -E "^(peer|device|error)" | tee $OUT/peers.log
head -12 $OUT/tune-layernorm-8192x8192/sm_90a/report.txt
