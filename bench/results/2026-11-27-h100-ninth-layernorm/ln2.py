# ln2.py NAME...: each .ab/lib/NAME.so's layer norm and torch.compile's, timed four ways.
import ctypes, sys
sys.path.insert(0, "bench/peers")
import torch, torch.nn.functional as F
from peer_timing import read_l2_through, host_ahead

m = n = 8192
x = torch.randn(m, n, dtype=torch.float16, device="cuda") * 2 + 0.5
g = (1 + 0.1 * torch.randn(n, device="cuda")).half()
b = (0.1 * torch.randn(n, device="cuda")).half()
fn = lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5)
compiled = torch.compile(fn)
compiled(x, g, b)
fns = {"compile": lambda: compiled(x, g, b)}
for name in sys.argv[1:]:
    lib = ctypes.CDLL(f".ab/lib/{name}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    y = torch.empty_like(x)
    fns[name] = lambda lib=lib, y=y: lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), 1e-5, m, n)

def timed(f, flush, sleep, bulk, runs=100):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    if bulk:
        host_ahead(2000)
    for s, e in ev:
        if flush:
            read_l2_through()
        if sleep:
            host_ahead()
        s.record(); f(); e.record()
        if not bulk:
            e.synchronize()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in ev)
    return t[len(t) // 2] * 1e3

modes = {"median_ms": (1, 1, 0), "flush,bulk": (1, 0, 1), "flush,sleep,bulk": (1, 1, 1), "flush,each": (1, 0, 0), "noflush,bulk": (0, 0, 1)}
for mode, (fl, sl, bu) in modes.items():
    for rnd in range(2):
        print(f"{mode:>18} " + " ".join(f"{k} {timed(f, fl, sl, bu):7.2f}" for k, f in fns.items()))
