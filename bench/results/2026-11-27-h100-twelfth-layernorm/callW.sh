# callW: gamma and beta's loads hoisted before the first (A) or second (B) barrier for the first
# 1, 2 or 4 chunks, with (.minnctapersm 4) and without (m0); beside torch.compile, 7 rounds.
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
python3 .ab/v12/time.py base m0 gbA1 gbA2 gbB1 gbB2 gbA1m0 gbA2m0 gbB1m0 gbB2m0 gbA4m0 gbB4m0 nogb 2>&1 | tee $OUT/w.log | grep -v "^round"
