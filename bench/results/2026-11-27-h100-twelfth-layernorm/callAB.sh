# callAB: a hand-made layer norm of two rows a workgroup (tworows.py: the same columns of rows 2w
# and 2w + 1 a workitem, one barrier pair for both, gamma and beta loaded once for both, or
# each row its own: "own"), beside the emitted one-row kernel and torch.compile, 7 rounds.
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
python3 .ab/v12/time.py base two0 two3 two2 two0own nogb 2>&1 | tee $OUT/ab.log | grep -v "^round"
