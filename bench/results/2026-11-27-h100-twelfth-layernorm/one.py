# one.py NAME: launches .ab/v12/lib/NAME.so's layer norm (or torch.compile's, NAME=compile) on
# 8192^2 f16 five times, for ncu.
import ctypes, sys
import torch, torch.nn.functional as F
m = n = 8192
x = torch.randn(m, n, dtype=torch.float16, device="cuda")
g = torch.ones(n, dtype=torch.float16, device="cuda"); b = torch.zeros_like(g)
y = torch.empty_like(x)
if sys.argv[1] == "compile":
    f = torch.compile(lambda x, g, b: F.layer_norm(x, (n,), g, b, 1e-5))
    run = lambda: f(x, g, b)
else:
    lib = ctypes.CDLL(f".ab/v12/lib/{sys.argv[1]}.so")
    lib.ln_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_float, ctypes.c_int64, ctypes.c_int64]
    run = lambda: lib.ln_launch(torch.cuda.current_stream().cuda_stream, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), 1e-5, m, n)
for _ in range(5):
    run()
torch.cuda.synchronize()
