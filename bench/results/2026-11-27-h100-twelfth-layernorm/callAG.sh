# callAG: the preferred shared memory carveout (percent of 228 KB) of the Triton-shaped HOLD=0
# kernel (ha_t1, 4 KB of scratch a workgroup: the driver chose 64 KB, Triton's 16 KB) and of the
# held winner (base, 2 KB: 32 KB), beside torch.compile, 7 rounds; then ncu's configuration.
python3 .ab/v12/time.py base base_c7 base_c14 ha_t1 ha_t1_c14 ha_t1_c25 2>&1 | tee $OUT/ag.log | grep -v "^round"
for k in base_c7 ha_t1_c14; do
  timeout 100 ncu --clock-control none --cache-control all --section SpeedOfLight --section LaunchStats -k regex:kiln_layernorm --launch-skip 4 -c 1 python3 .ab/v12/one.py $k > $OUT/ncu-$k.txt 2>&1
  echo "== $k"; grep -E "Duration|Shared Memory Configuration Size|L1/TEX Cache Throughput" $OUT/ncu-$k.txt
done
