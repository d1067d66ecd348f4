# callAE: Triton's cache hints in code generation (what is read again .L1::evict_last with an L2
# evict_last policy, a row's last read .L1::evict_first with an L2 evict_first policy): the
# normalization GPU tests in a fresh build, then four exported layer norms (held winner; HOLD=0 at
# 256 x 8 x 2 and 512 x 8; a kernel for any size, made on the CPU machine: NAME_new) each beside
# the same PTX with the former hints (.L1::evict_last, .L1::no_allocate, no policy: NAME_old) and
# torch.compile, 7 alternating rounds.
REAL=$OUT; mkdir -p /tmp/o
export BUILD=/tmp/kb OUT=/tmp/o/ae
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_build
step "normalization + cooperative GPU tests"
(cd $BUILD && KILN_REQUIRE_GPU=1 ctest -L gpu -R "Normalization|Cooperative" -j 4 --timeout 200 --output-on-failure) > $REAL/ctest.log 2>&1
grep -E "tests passed|\(Failed\)|Failure" $REAL/ctest.log | head
step "timing"
python3 .ab/v12/time.py held_old held_new hb_old hb_new hc_old hc_new any_old any_new 2>&1 | tee $REAL/ae.log | grep -v "^round"
