# ln3.py [--ncu] NAME...: layer norm of torch.compile and each .ab/lib/NAME.so after each of
# several ways to clear L2; with --ncu, 2 launches each (order printed), else median times.
import ctypes, sys
sys.path.insert(0, "bench/peers")
import torch, torch.nn.functional as F
from peer_timing import host_ahead

m = n = 8192
x = torch.randn(m, n, dtype=torch.float16, device="cuda") * 2 + 0.5
g = (1 + 0.1 * torch.randn(n, device="cuda")).half()
b = (0.1 * torch.randn(n, device="cuda")).half()
fn = lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5)
compiled = torch.compile(fn)
compiled(x, g, b)
fns = {"compile": lambda: compiled(x, g, b)}
names = [a for a in sys.argv[1:] if not a.startswith("--")]
for name in names:
    lib = ctypes.CDLL(f".ab/lib/{name}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    y = torch.empty_like(x)
    fns[name] = lambda lib=lib, y=y: lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), 1e-5, m, n)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
z2 = torch.zeros(2 * l2 // 4, device="cuda")
z8 = torch.zeros(8 * l2 // 4, device="cuda")
r2 = torch.rand(2 * l2 // 4, device="cuda")
w2 = torch.empty(2 * l2 // 4, device="cuda")
flushes = {
    
    "amax8": lambda: z8.amax(),
    
    
    
}
if "--ncu" in sys.argv:
    for fl, flush in flushes.items():
        for k, f in fns.items():
            for _ in range(2):
                flush(); torch.cuda.synchronize(); f(); torch.cuda.synchronize()
                print(f"launch {fl} {k}")
    sys.exit(0)

def timed(f, flush, runs=100):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for s, e in ev:
        flush(); host_ahead()
        s.record(); f(); e.record()
        e.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in ev)
    return t[len(t) // 2] * 1e3

for fl, flush in flushes.items():
    for rnd in range(3):
        print(f"{fl:>12} " + " ".join(f"{k} {timed(f, flush):7.2f}" for k, f in fns.items()))
