# callY: the layer norm's epilogue in f16x2 (h2.py) beside the emitted kernel and torch.compile.
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
python3 .ab/v12/time.py base baseh2 m0 m0h2 nogb 2>&1 | tee $OUT/y.log | grep -v "^round"
