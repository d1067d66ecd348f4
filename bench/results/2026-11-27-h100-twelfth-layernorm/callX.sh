# callX: SASS of Kiln's layer norm (base) and of torch.compile's Triton layer norm: instruction
# histograms and the full listings (for reading the differences).
which cuobjdump nvdisasm; ls /usr/local/cuda*/bin 2>/dev/null | head -3
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind
python3 - <<'PY'
import torch, torch.nn.functional as F
n = 8192
x = torch.randn(n, n, dtype=torch.float16, device="cuda")
g = torch.ones(n, dtype=torch.float16, device="cuda"); b = torch.zeros_like(g)
torch.compile(lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5))(x, g, b)
torch.cuda.synchronize()
PY
find /tmp/ind -name "*.cubin" -o -name "*.ptx" -o -name "*.py" | grep -v __pycache__ | head -20
mkdir -p $OUT/tri
for f in $(find /tmp/ind -name "*.cubin" -o -name "*.ptx" -o -name "*.ttgir"); do cp $f $OUT/tri/; done
for f in $(grep -rl "def triton" /tmp/ind --include=*.py | head -3); do cp $f $OUT/tri/; done
D=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
[ -z "$D" ] && D=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/cuobjdump'))")
echo "cuobjdump: $D"
$D -sass .ab/v12/base.cubin > $OUT/base.sass
for f in $OUT/tri/*.cubin; do $D -sass $f > $OUT/tri.sass; done
for s in $OUT/base.sass $OUT/tri.sass; do echo "== $s $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $s)"; grep -E '^\s+/\*[0-9a-f]{4}\*/' $s | awk '{i=$2; if (i ~ /^@/) i=$3; sub(/\..*/,"",i); sub(/;/,"",i); print i}' | sort | uniq -c | sort -rn | head -25; done
