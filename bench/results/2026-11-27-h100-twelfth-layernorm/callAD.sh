# callAD: the HOLD=0 layer norms (rows read again) with torch.compile's Triton cache hints
# (tri.py: t1 Triton's, t2 without gamma and beta's L2 policy, t3 L2 policies only; t0 as
# emitted) at three geometries (a: 512 lanes x 4, b: 256 x 8 x 2, c: 512 x 8), beside the
# held-row kernel (base) and torch.compile, 7 rounds.
python3 .ab/v12/time.py base ha_t0 ha_t1 ha_t2 ha_t3 hb_t0 hb_t1 hb_t2 hb_t3 hc_t0 hc_t1 hc_t2 hc_t3 2>&1 | tee $OUT/ad.log | grep -v "^round"
