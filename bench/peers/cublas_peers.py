#!/usr/bin/env python3
"""cublas_peers.py: the GEMM peer, torch.matmul (cuBLAS) of two N x N row-major matrices in f16
and bf16, timed with triton.testing.do_bench (median, 100 ms warm-up, 500 ms of repetitions) in
the same call as Kiln's GEMMs (scripts/gpu-tma.sh, scripts/gpu-floors.sh).

    python3 bench/peers/cublas_peers.py [--rounds R] N ...     # R (default 1) timings each

Prints one line per size, type and round:

    cublas N DTYPE ROUND US        # DTYPE: f16 or bf16; US: microseconds, median"""
import argparse

import torch

from peer_timing import bench_ms

DTYPES = (("f16", torch.float16), ("bf16", torch.bfloat16))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("sizes", type=int, nargs="+")
    args = parser.parse_args()
    for n in args.sizes:
        for name, dtype in DTYPES:
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            for round_ in range(1, args.rounds + 1):
                ms = bench_ms(lambda: a @ b, warmup=100, rep=500)
                print(f"cublas {n} {name} {round_} {ms * 1000:.1f}", flush=True)


if __name__ == "__main__":
    main()
