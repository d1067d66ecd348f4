# callAF: ncu of torch.compile's layer norm, Kiln's Triton-shaped HOLD=0 kernel (ha_t1: 512 lanes,
# VEC=4, four chunks, Triton's hints) and Kiln's held winner (base): the kernels' last launch
# each, flushed caches, sections SpeedOfLight, Occupancy, LaunchStats, WarpStateStats,
# SchedulerStats, MemoryWorkloadAnalysis.
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for k in compile:triton_red ha_t1:kiln_layernorm base:kiln_layernorm; do
  name=${k%%:*}; kern=${k#*:}
  timeout 150 ncu --clock-control none --cache-control all $S -k regex:$kern --launch-skip 4 -c 1 python3 .ab/v12/one.py $name > $OUT/ncu-$name.txt 2>&1
  echo "== $name"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Executed Ipc A|Block Limit Reg|Block Limit Shared|Dynamic Shared|Shared Memory Configuration Size" $OUT/ncu-$name.txt | head -30
done
