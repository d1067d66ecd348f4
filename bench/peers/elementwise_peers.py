#!/usr/bin/env python3
"""elementwise_peers.py: what a user would run instead of Kiln's fused f16 bias + tanh-GELU chain
(examples/fused-elementwise.json), timed on the GPU in one process beside the device copy:
torch eager (one kernel per operation) and torch.compile (one fused kernel).

    python3 bench/peers/elementwise_peers.py [M] [N]     # default 8192 x 8192

Prints one line per peer: median time of 50 launches after warm-up (CUDA events), the tensor
traffic it implies (X and Bias read, Y written: 6 bytes an element) and its ratio to the copy's
bandwidth (a 1 GiB device-to-device copy, read + write counted)."""
import sys

import torch

from peer_timing import median_ms, print_device, time_copy

M = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
SCALE = 0.75


def chain(x, b):
    h = x.float() * SCALE + b.float()
    return (0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))).half()


def main():
    print_device()
    source = torch.empty(1 << 29, dtype=torch.float16, device="cuda")  # 1 GiB
    copy_ms, copy_gbps = time_copy(source)
    print(f"copy: 1 GiB in {copy_ms * 1e3:.1f} us, {copy_gbps:.1f} GB/s")
    del source

    x = torch.randn(M, N, dtype=torch.float16, device="cuda")
    b = torch.randn(M, N, dtype=torch.float16, device="cuda")
    traffic = 6 * M * N
    compiled = torch.compile(chain)
    eager_y, compiled_y = chain(x, b), compiled(x, b)
    worst = ((eager_y.float() - compiled_y.float()).abs().max()).item()
    for name, fn in (("torch eager", lambda: chain(x, b)), ("torch.compile", lambda: compiled(x, b))):
        ms = median_ms(fn)
        gbps = traffic / ms / 1e6
        print(f"{name}: {M}x{N} in {ms * 1e3:.1f} us, {gbps:.1f} GB/s of tensor traffic, "
              f"{gbps / copy_gbps:.2f}x the copy")
    print(f"torch eager and torch.compile differ by at most {worst:.3g}")


if __name__ == "__main__":
    main()
