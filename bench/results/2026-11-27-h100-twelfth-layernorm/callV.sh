# callV: hand-edited variants of the layer norm finalist (LANES=256,VEC=8,UNROLL=1,ONLINE=2,
# PREFETCH=256,HOLD=1,MIN_BLOCKS=4) beside torch.compile, 7 alternating rounds (.ab/v12/time.py).
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
python3 .ab/v12/time.py base xna xef ycs yef xef_yef gbpf nogb xna_ycs_gbpf 2>&1 | tee $OUT/v.log | grep -v "^round"
