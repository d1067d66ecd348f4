mkdir -p /tmp/o; REAL=$OUT; trap 'tar -czf $REAL/logs.tgz -C /tmp o' EXIT
bash .ab/mk.sh p5 > /tmp/o/mk.log 2>&1 || { cat /tmp/o/mk.log; exit 1; }
timeout 200 python3 .ab/ln3.py p5 2>&1 | grep -v Warn | tee /tmp/o/ln3.txt
NCU="ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
timeout 250 $NCU -k regex:"kiln_layernorm|triton" python3 .ab/ln3.py --ncu p5 > /tmp/o/ncu3.txt 2>&1
grep "^launch" /tmp/o/ncu3.txt > /tmp/o/order.txt
grep -E "^  [a-z_]+.*Context|duration|bytes_read" /tmp/o/ncu3.txt | sed -n '/bytes_read/{N;s/\n/ /;p}' | awk '{print $3, $6}' > /tmp/o/m.txt
tail -20 /tmp/o/m.txt | paste - <(tail -20 /tmp/o/order.txt)
