# mk.sh NAME[:THREADS[:CARVEOUT[:LIB]]]...: .ab/lib/LIB.so from .ab/cubin/NAME.cubin spliced into .ab/ln_capi.c
set -e
mkdir -p .ab/lib .ab/c
for spec in "$@"; do
  IFS=: read -r v t c lib <<<"$spec"
  t=${t:-256}; lib=${lib:-$v}
  python3 .ab/splice.py .ab/ln_capi.c .ab/cubin/$v.cubin .ab/c/$lib.c $t $c
  cc -O1 -shared -fPIC -I.ab -o .ab/lib/$lib.so .ab/c/$lib.c -ldl
done
