# callAH: the held winner with an exchange scratch of one slot a warp (slot.py: 64 bytes a
# workgroup, lanes 0 and 1 of a warp store) against one a workitem (base: 2048), beside
# torch.compile, 7 rounds; ncu's shared memory configuration of each.
python3 .ab/v12/time.py base slot 2>&1 | tee $OUT/ah.log | grep -v "^round"
for k in base slot; do
  timeout 100 ncu --clock-control none --cache-control all --section SpeedOfLight --section LaunchStats -k regex:kiln_layernorm --launch-skip 4 -c 1 python3 .ab/v12/one.py $k > $OUT/ncu-$k.txt 2>&1
  echo "== $k"; grep -E "Duration|Shared Memory Configuration Size|L1/TEX Cache Throughput" $OUT/ncu-$k.txt
done
