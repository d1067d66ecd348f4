mkdir -p /tmp/o; REAL=$OUT; trap 'tar -czf $REAL/logs.tgz -C /tmp o' EXIT
export BUILD=/tmp/kb OUT=/tmp/o/n
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_build kiln >/dev/null 2>&1 || tail -30 $OUT/build.log
bash .ab/mk.sh p5 > /tmp/o/mk.log 2>&1 || { cat /tmp/o/mk.log; exit 1; }
K=/tmp/kb/tools/kiln/kiln
for cc in all none; do
NCU="ncu --clock-control none --cache-control $cc --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
timeout 150 $NCU -k regex:kiln_layernorm -c 8 $K run examples/layernorm-f16.json --pipeline rules/reduction.pipeline.json --params COOP=1,ROWS=1,LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5 --size M=8192 --size N=8192 --specialize --repetitions 6 > /tmp/o/ncu-kiln-$cc.txt 2>&1
echo "kiln run, cache-control $cc"; grep -E "duration|bytes" /tmp/o/ncu-kiln-$cc.txt | tail -9
timeout 200 $NCU -k regex:"kiln_layernorm" -c 8 python3 .ab/ln.py p5 > /tmp/o/ncu-py-$cc.txt 2>&1
echo "ln.py, cache-control $cc"; grep -E "duration|bytes" /tmp/o/ncu-py-$cc.txt | tail -9
done
