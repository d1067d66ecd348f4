# time.py NAME...: torch.compile's layer norm and each .ab/v12/lib/NAME.so (8192^2 f16), in ROUNDS
# alternating rounds of peer_timing.median_ms (the peers' protocol: 8 x L2 read, 200 us spin).
import ctypes, statistics, sys
sys.path.insert(0, "bench/peers")
import torch, torch.nn.functional as F
from peer_timing import median_ms

m = n = 8192
x = torch.randn(m, n, dtype=torch.float16, device="cuda") * 2 + 0.5
g = (1 + 0.1 * torch.randn(n, device="cuda")).half()
b = (0.1 * torch.randn(n, device="cuda")).half()
fn = lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5)
compiled = torch.compile(fn)
ref = compiled(x, g, b)
fns = {"compile": lambda: compiled(x, g, b)}
for name in sys.argv[1:]:
    lib = ctypes.CDLL(f".ab/v12/lib/{name}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    y = torch.empty_like(x)
    fns[name] = lambda lib=lib, y=y: lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), 1e-5, m, n)
    assert fns[name]() == 0
    torch.cuda.synchronize()
    print(f"{name}: max |y - compile| = {(y.float() - ref.float()).abs().max().item():.4f}", flush=True)
times = {k: [] for k in fns}
for rnd in range(int(__import__("os").environ.get("ROUNDS", 7))):
    for k, f in fns.items():
        times[k].append(median_ms(f) * 1e3)
    print("round", rnd, " ".join(f"{k} {v[-1]:.2f}" for k, v in times.items()), flush=True)
c = statistics.median(times["compile"])
for k, v in times.items():
    med = statistics.median(v)
    print(f"{k:14s} {med:7.2f} us  compile/this {c / med:.4f}  rounds {','.join(f'{t:.2f}' for t in v)}")
