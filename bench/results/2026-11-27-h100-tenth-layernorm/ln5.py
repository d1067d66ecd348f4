# ln5.py NAME...: layer norm of torch.compile and each .ab/lib/NAME.so under four timing protocols:
# an amax of 2 or 8 x L2 before each launch, each either followed by a 200 us spin and waited for
# one by one (peer_timing.median_ms) or queued back to back without a spin (as DeviceRun does).
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
ref = compiled(x, g, b)
fns = {"compile": lambda: compiled(x, g, b)}
for name in sys.argv[1:]:
    lib = ctypes.CDLL(f".ab/lib/{name}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    y = torch.empty_like(x)
    fns[name] = lambda lib=lib, y=y: lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), 1e-5, m, n)
    fns[name](); torch.cuda.synchronize()
    print(f"{name}: max |y - compile| = {(y.float() - ref.float()).abs().max().item():.4f}")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
z2 = torch.zeros(2 * l2 // 4, device="cuda"); z2.amax()
z8 = torch.zeros(8 * l2 // 4, device="cuda"); z8.amax()
flushes = {"amax2": lambda: z2.amax(), "amax8": lambda: z8.amax()}

def timed(f, flush, queued, runs=100):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    if queued:
        host_ahead(5000)
    for s, e in ev:
        flush()
        if not queued:
            host_ahead()
        s.record(); f(); e.record()
        if not queued:
            e.synchronize()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in ev)
    return t[len(t) // 2] * 1e3

for queued in (False, True):
    for fl, flush in flushes.items():
        for rnd in range(3):
            label = f"{fl}{'-queued' if queued else '-spin'}"
            print(f"{label:>13} " + " ".join(f"{k} {timed(f, flush, queued):7.2f}" for k, f in fns.items()), flush=True)
