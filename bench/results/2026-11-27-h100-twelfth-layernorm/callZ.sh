# callZ (twelfth session): the whole GPU suite at HEAD in a fresh Release build, 4 at a time.
REAL=$OUT; mkdir -p /tmp/o
export BUILD=/tmp/kb OUT=/tmp/o/z
mkdir -p $OUT
. scripts/lib/gpu-common.sh
gpu_device
gpu_build
step "ctest -L gpu -j 4"
(cd $BUILD && KILN_REQUIRE_GPU=1 timeout 420 ctest -L gpu -j 4 --timeout 300 --output-on-failure) > $REAL/ctest-gpu.log 2>&1
grep -E "tests passed|\(Failed\)|Failure|Timeout|Total Test" $REAL/ctest-gpu.log | head -30
step done
