# callAC: X loaded .L1::evict_first or evict_unchanged, gamma and beta with an L2 evict_last
# policy (more.py), beside the emitted kernel and torch.compile, 7 rounds.
python3 .ab/v12/time.py base xef1 xeu gbl2 xef1gbl2 2>&1 | tee $OUT/ac.log | grep -v "^round"
