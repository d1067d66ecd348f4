# callN: the layer norm sweep (tie fix) with the peers timed as DeviceRun times (peer_timing.median_ms),
# then Kiln's emitted PREFETCH=330 kernel spliced into Python under the old and new protocols, clocks sampled.
REAL=$OUT; mkdir -p /tmp/o
export OUT=/tmp/o/n KILN_GPU_BUILD=/tmp/kb
OPS="layernorm" SKIP=tests ROUNDS=2 POINTS="LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330" bash scripts/gpu-norms.sh > $REAL/norms.log 2>&1
cp $OUT/tune-layernorm-8192x8192/sm_90a/report.txt $REAL/tune-layernorm-report.txt
cp $OUT/table.txt $OUT/points-table.txt $REAL/ 2>/dev/null
/tmp/kb/tools/kiln/kiln emit examples/layernorm-f16.json --pipeline rules/reduction.pipeline.json --params COOP=1,ROWS=1,LANES=256,UNROLL=2,VEC=8,ONLINE=1,MIN_BLOCKS=5,PREFETCH=330 --size M=8192 --size N=8192 --specialize --target sm_90a -o /tmp/o/em > /dev/null
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas); $PTXAS --version | tail -1 > $REAL/ptxas.txt
$PTXAS -arch=sm_90a /tmp/o/em/kiln_layernorm.ptx -o .ab/cubin/kem.cubin
bash .ab/mk.sh kem p5pf330 > /tmp/o/mk.log 2>&1 || cat /tmp/o/mk.log
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 100 > /tmp/o/smi.csv 2>&1 &
SMI=$!
timeout 200 python3 .ab/ln7.py kem p5pf330 2>&1 | grep -v Warn > $REAL/ln7.txt
kill $SMI
python3 - /tmp/o/smi.csv $REAL/ln7.txt > $REAL/clocks.txt <<'PY'
import sys, datetime
rows = []
for line in open(sys.argv[1]):
    p = [v.strip() for v in line.split(",")]
    try:
        t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(p[1].split()[0]), float(p[3].split()[0])))
    except Exception:
        pass
prev = None
for line in open(sys.argv[2]):
    f = line.split()
    try:
        t = float(f[0])
    except Exception:
        continue
    lo = prev if prev else t - 10
    sel = [r for r in rows if lo < r[0] <= t]
    if sel:
        print(f"{f[1]:>6} until {t:.1f}: {len(sel)} samples, SM {sum(r[1] for r in sel)/len(sel):.0f} MHz (min {min(r[1] for r in sel):.0f}), power {sum(r[2] for r in sel)/len(sel):.0f} W")
    prev = t
PY
cat $REAL/ptxas.txt; grep -E "^winner" $REAL/tune-layernorm-report.txt
cat $REAL/table.txt $REAL/points-table.txt $REAL/ln7.txt $REAL/clocks.txt
