# ln7.py NAME...: layer norm of torch.compile and each .ab/lib/NAME.so, timed by the old
# peer_timing protocol (a wait after each sample) and the new one (peer_timing.median_ms: DeviceRun's).
import ctypes, sys, time
sys.path.insert(0, "bench/peers")
import torch, torch.nn.functional as F
from peer_timing import host_ahead, median_ms, read_l2_through

m = n = 8192
x = torch.randn(m, n, dtype=torch.float16, device="cuda") * 2 + 0.5
g = (1 + 0.1 * torch.randn(n, device="cuda")).half()
b = (0.1 * torch.randn(n, device="cuda")).half()
fn = lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5)
compiled = torch.compile(fn)
ref = compiled(x, g, b)
fns = {"compile": lambda: compiled(x, g, b)}
for name in sys.argv[1:]:
    lib = ctypes.CDLL(f".ab/lib/{name}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    y = torch.empty_like(x)
    fns[name] = lambda lib=lib, y=y: lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), 1e-5, m, n)
    fns[name](); torch.cuda.synchronize()
    print(f"{name}: max |y - compile| = {(y.float() - ref.float()).abs().max().item():.4f}")

def old(f, runs=50):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    t = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        read_l2_through(); host_ahead()
        s.record(); f(); e.record(); e.synchronize()
        t.append(s.elapsed_time(e))
    t.sort()
    return t[len(t) // 2]

for label, timer in (("old", old), ("new", median_ms), ("new100", lambda f: median_ms(f, runs=100))):
    for rnd in range(3):
        print(f"{time.time():.1f} {label:>6} " + " ".join(f"{k} {timer(f) * 1e3:7.2f}" for k, f in fns.items()), flush=True)
