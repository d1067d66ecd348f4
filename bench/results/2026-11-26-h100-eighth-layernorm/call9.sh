mkdir -p /tmp/o; trap 'tar -czf $OUT/logs.tgz -C /tmp o' EXIT
bash .ab/mk.sh now k > /tmp/o/mk.log 2>&1 || { cat /tmp/o/mk.log; exit 1; }
REAL_OUT=$OUT
export BUILD=/tmp/kb OUT=/tmp/o/b
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_build kiln >/dev/null 2>&1 || { tail -20 $OUT/build.log; }
K=/tmp/kb/tools/kiln/kiln
for r in 1 2; do
  $K run examples/layernorm-f16.json --pipeline rules/reduction.pipeline.json --params COOP=1,ROWS=1,LANES=256,UNROLL=2,VEC=8,ONLINE=1 --size M=8192 --size N=8192 --specialize --repetitions 100 --warmup-seconds 0.25 2>&1 | grep -E "time|error"
  timeout 120 python3 .ab/ln.py now k 2>&1 | grep -v Warning | tail -3
done
OUT=$REAL_OUT
