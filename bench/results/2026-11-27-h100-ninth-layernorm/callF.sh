mkdir -p /tmp/o; REAL=$OUT; trap 'tar -czf $REAL/logs.tgz -C /tmp o' EXIT
V="p5 w:128  p5pf100 p5pf165 p5pf220 p5pf264 p5pf330 p5pf400 wpf165:128 wpf330:128 wpf462:128"
bash .ab/mk.sh $V > /tmp/o/mk.log 2>&1 || { cat /tmp/o/mk.log; exit 1; }
N=$(for v in $V; do echo -n "${v%%:*} "; done)
timeout 300 python3 .ab/ln4.py $N 2>&1 | grep -v Warn | tee /tmp/o/ln4.txt
