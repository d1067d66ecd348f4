#!/usr/bin/env python3
"""The exported C ABI called from Python (label gpu): kiln export --shared-library builds
libNAME.so for two f16 GEMM schedule points (three on sm_90a: also one whose tiles the copy
engine loads, TMA=1), ctypes loads it, NAME_launch runs on torch CUDA
tensors, and D is compared with torch.matmul (cuBLAS) within 1e-2 relative, at square, odd and
tiny sizes, on the default stream and on a stream of its own. Prints each comparison; exits 1 on
a mismatch, 77 (skipped) without torch or a CUDA device unless KILN_REQUIRE_GPU=1.

    export-capi-torch.py KILN OUT_DIR      (run in the source tree)
"""
import ctypes
import json
import os
import subprocess
import sys

TOLERANCE = 1e-2
# The f16 winner at sm_90a, and a small point; neither assumes anything of the sizes.
POINTS = {
    "gemm_f16_winner": "MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4",
    "gemm_f16_small": "MMA=1,MT_M=64,MT_N=32,MT_K=16,WT_M=32",
}
SIZES = [(4096, 4096, 4096), (1000, 999, 777), (1, 1, 1), (129, 257, 65)]  # M, N, K
# On sm_90a also the winner with its tiles loaded by the copy engine (TMA=1), whose tensor maps
# NAME_launch makes from the pointers and sizes: the rows of A (K halves) and B (N halves) must
# be multiples of 16 bytes apart, so its odd sizes keep N and K multiples of 8, and K = 777 is
# refused with the reason.
TMA_POINT = "MMA=1,MT_M=128,MT_N=256,MT_K=64,WT_M=16,WT_N=0,STAGES=4,TMA=1"
TMA_SIZES = [(4096, 4096, 4096), (1000, 1000, 776), (1, 8, 8), (129, 264, 72)]
# And the persistent kernel with a producer warpgroup (PERSISTENT=1), which NAME_launch launches
# on as many workgroups as the device's multiprocessors hold, each looping over tiles.
PERSISTENT_POINT = TMA_POINT + ",WARP_SPECIALIZE=1,GROUP_M=8,PERSISTENT=1"


def skip(why):
    if os.environ.get("KILN_REQUIRE_GPU") == "1":
        print(f"FAILED: {why}, and KILN_REQUIRE_GPU=1 asks for the GPU test to run")
        sys.exit(1)
    print(f"skipped: {why}")
    sys.exit(77)


try:
    import torch
except ImportError:
    skip("no torch")
if not torch.cuda.is_available():
    skip("torch sees no CUDA device")

kiln, out = sys.argv[1], sys.argv[2]
major, minor = torch.cuda.get_device_capability()
target = f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


def export(name, point):
    """Exports the point as a shared library and loads it with ctypes."""
    folder = os.path.join(out, name)
    subprocess.run([kiln, "export", "examples/gemm-f16.json", "--pipeline",
                    "rules/gemm.pipeline.json", "--target", target, "--params", point,
                    "--name", name, "--shared-library", "-o", folder], check=True)
    with open(os.path.join(folder, f"{name}.manifest.json")) as f:
        manifest = json.load(f)
    if "assumes" in manifest:
        print(f"FAILED: {name} assumes {manifest['assumes']}; the test needs every size")
        sys.exit(1)
    library = ctypes.CDLL(os.path.join(folder, f"lib{name}.so"))
    launch = getattr(library, f"{name}_launch")
    # int NAME_launch(void* stream, const void* A, const void* B, void* D, int64_t M, K, N):
    # the manifest's order of parameters, K before N.
    launch.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 3
    launch.restype = ctypes.c_int
    error = getattr(library, f"{name}_error")
    error.restype = ctypes.c_char_p
    return launch, error


def compare(name, launch, error, m, n, k, stream):
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(k, n, dtype=torch.float16, device="cuda")
    d = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
    stream.wait_stream(torch.cuda.current_stream())  # the tensors are made on the current one
    with torch.cuda.stream(stream):
        code = launch(stream.cuda_stream, a.data_ptr(), b.data_ptr(), d.data_ptr(), m, k, n)
    if code != 0:
        print(f"FAILED: {name}_launch returned {code}: {error().decode()}")
        return False
    stream.synchronize()
    expected = torch.matmul(a, b).float()
    difference = (d.float() - expected).abs().max().item()
    relative = difference / max(expected.abs().max().item(), 1e-30)
    ok = relative <= TOLERANCE  # NaN (D left unwritten) compares false
    where = "the default stream" if stream.cuda_stream == 0 else "a stream of its own"
    print(f"{name} M={m} N={n} K={k} on {where}: max |D - torch.matmul| = {difference:.4g}, "
          f"relative {relative:.3g} (tolerance {TOLERANCE}): {'ok' if ok else 'MISMATCH'}")
    return ok


def throughput(name, launch, size):
    """TFLOP/s of the exported kernel and of torch.matmul at size^3 (informational)."""
    a = torch.randn(size, size, dtype=torch.float16, device="cuda")
    b = torch.randn(size, size, dtype=torch.float16, device="cuda")
    d = torch.empty(size, size, dtype=torch.float16, device="cuda")
    runs = {"C ABI": lambda: launch(0, a.data_ptr(), b.data_ptr(), d.data_ptr(), size, size, size),
            "torch.matmul": lambda: torch.matmul(a, b, out=d)}
    figures = []
    for what, run in runs.items():
        for _ in range(3):
            run()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            run()
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / 20
        figures.append(f"{what} {2 * size ** 3 / seconds / 1e12:.0f} TFLOP/s")
    print(f"{name} at {size}^3 on {torch.cuda.get_device_name()}: {', '.join(figures)}")


failures = 0
points = {name: (point, SIZES) for name, point in POINTS.items()}
if target == "sm_90a":
    points["gemm_f16_tma"] = (TMA_POINT, TMA_SIZES)
    points["gemm_f16_persistent"] = (PERSISTENT_POINT, TMA_SIZES)
for name, (point, sizes) in points.items():
    launch, error = export(name, point)
    for m, n, k in sizes:
        for stream in (torch.cuda.default_stream(), torch.cuda.Stream()):
            failures += not compare(name, launch, error, m, n, k, stream)
    code = launch(None, None, None, None, 16, -1, 16)
    message = error().decode()
    print(f"{name}_launch with K = -1: {code}: {message}")
    failures += code != 1 or "size K is -1" not in message
    if name == "gemm_f16_tma":
        a = torch.randn(64, 777, dtype=torch.float16, device="cuda")
        b = torch.randn(777, 64, dtype=torch.float16, device="cuda")
        d = torch.empty(64, 64, dtype=torch.float16, device="cuda")
        code = launch(None, a.data_ptr(), b.data_ptr(), d.data_ptr(), 64, 777, 64)
        message = error().decode()
        print(f"{name}_launch with K = 777: {code}: {message}")
        failures += code != 1 or "multiples of 16 bytes" not in message
    if name in ("gemm_f16_winner", "gemm_f16_tma", "gemm_f16_persistent"):
        throughput(name, launch, 4096)

if failures:
    print(f"FAILED: {failures} comparisons")
    sys.exit(1)
print("the exported C ABI agrees with torch.matmul (cuBLAS)")
