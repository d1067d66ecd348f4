# ln.py NAME...: each .ab/lib/NAME.so's layer norm (ln_launch) on an f16 8192^2, checked against
# torch in f32, timed interleaved with torch.compile's (median_ms of bench/peers/peer_timing.py).
import ctypes, sys
sys.path.insert(0, "bench/peers")
import torch, torch.nn.functional as F
from peer_timing import median_ms

m = n = 8192
x = torch.randn(m, n, dtype=torch.float16, device="cuda") * 2 + 0.5
g = (1 + 0.1 * torch.randn(n, device="cuda")).half()
b = (0.1 * torch.randn(n, device="cuda")).half()
ref = F.layer_norm(x.float(), (n,), g.float(), b.float(), 1e-5)
fn = lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5)
compiled = torch.compile(fn)
compiled(x, g, b)
libs = {}
for name in [(a.split(":") + ["", "", ""])[3] or a.split(":")[0] for a in sys.argv[1:] if a != "--once"]:
    lib = ctypes.CDLL(f".ab/lib/{name}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    lib.ln_error.restype = ctypes.c_char_p
    y = torch.empty_like(x)
    def run(lib=lib, y=y):
        r = lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(),
                          b.data_ptr(), y.data_ptr(), 1e-5, m, n)
        if r != 0:
            raise RuntimeError(lib.ln_error())
    run()
    torch.cuda.synchronize()
    err = ((y.float() - ref).abs() / ref.abs().clamp_min(1)).max().item()
    print(f"{name}: max error {err:.3g}", "OK" if err < 1e-2 else "WRONG")
    libs[name] = run
if "--once" in sys.argv:
    for f in [lambda: compiled(x, g, b), *libs.values()]:
        f(); f()
    torch.cuda.synchronize()
    sys.exit(0)
res = {k: [] for k in ["compile", *libs]}
for rnd in range(3):
    res["compile"].append(median_ms(lambda: compiled(x, g, b), runs=100) * 1e3)
    for k, f in libs.items():
        res[k].append(median_ms(f, runs=100) * 1e3)
for k, v in res.items():
    print(f"{k:>10} " + " ".join(f"{t:7.2f}" for t in v) + f"   compile/this {min(res['compile'])/min(v):.3f}")
