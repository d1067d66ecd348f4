"""The peer of a measured Kiln sweep: Triton compiling and timing GEMM configs.

A user who tunes an f16 GEMM with Triton writes the tutorial's matmul kernel with a list of
configs and lets Triton compile and benchmark each. This script does that from an empty Triton
cache at M = N = K = SIZE and prints how many configs per second it got through, so that Kiln's
candidates per second can be stated against it in the same run (scripts/gpu-sweep.sh); and
torch.matmul (cuBLAS) at the same size, the baseline of the winners' speed.

    python3 bench/peers/triton_sweep.py 4096
"""
import itertools
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="triton-cache-"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from peer_timing import bench_ms  # noqa: E402


@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = pid // (GROUP * tiles_n)
    first = group * GROUP
    rows = min(tiles_m - first, GROUP)
    pm = first + (pid % (GROUP * tiles_n)) % rows
    pn = (pid % (GROUP * tiles_n)) // rows
    om = (pm * BM + tl.arange(0, BM)) % M
    on = (pn * BN + tl.arange(0, BN)) % N
    ok = tl.arange(0, BK)
    pa = a + om[:, None] * sam + ok[None, :] * sak
    pb = b + ok[:, None] * sbk + on[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(pa, mask=ok[None, :] < K - k * BK, other=0.0)
        y = tl.load(pb, mask=ok[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        pa += BK * sak
        pb += BK * sbk
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.float16),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    configs = [dict(BM=bm, BN=bn, BK=bk, GROUP=8, num_stages=s, num_warps=w)
               for (bm, bn), bk, s, w in itertools.product(
                   [(128, 256), (128, 128), (256, 128), (64, 256)], [64], [3, 4], [4, 8])]
    reference = (a.float() @ b.float()).half()
    start = time.perf_counter()
    best = None
    for cfg in configs:
        meta = {k: v for k, v in cfg.items() if k in ("BM", "BN", "BK", "GROUP")}
        grid = (triton.cdiv(size, cfg["BM"]) * triton.cdiv(size, cfg["BN"]),)

        def run(meta=meta, grid=grid, cfg=cfg):
            matmul[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0),
                         b.stride(1), c.stride(0), c.stride(1), **meta,
                         num_stages=cfg["num_stages"], num_warps=cfg["num_warps"])
        try:
            run()
            torch.cuda.synchronize()
            error = ((c.float() - reference.float()).abs().max() /
                     reference.float().abs().max()).item()
            ms = bench_ms(run)
        except Exception as e:  # a config that does not fit (shared memory) is skipped
            print(f"config {cfg}: {type(e).__name__}")
            continue
        if best is None or ms < best[0]:
            best = (ms, cfg, error)
    seconds = time.perf_counter() - start
    cublas = bench_ms(lambda: torch.matmul(a, b, out=c))
    print(f"torch.matmul (cuBLAS): {cublas * 1000:.1f} us ({2 * size ** 3 / cublas / 1e9:.0f} "
          f"TFLOP/s)")
    print(f"triton: {len(configs)} configs in {seconds:.1f} s, "
          f"{len(configs) / seconds:.2f} configs/s; best {best[0] * 1000:.1f} us "
          f"({2 * size ** 3 / best[0] / 1e9:.0f} TFLOP/s) at {best[1]}, max error {best[2]:.2g}")


if __name__ == "__main__":
    main()
