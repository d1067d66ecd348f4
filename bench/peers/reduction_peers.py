#!/usr/bin/env python3
"""reduction_peers.py: what a user would run instead of Kiln's row sums (examples/row-sum-rowmajor.json,
examples/row-reduction.json), timed on the GPU in one process beside the device copy of the
same bytes: torch's sum over the rows of an M x N f32 matrix, row-major (the reduced axis
contiguous) and column-major (a transposed view: strides 1, M).

    python3 bench/peers/reduction_peers.py [MxN ...]     # default 8192x8192 65536x1024 1024x65536

For each shape and layout it prints one line, median of 50 launches after warm-up (CUDA events):

    peer LAYOUT M N COPY_GBPS TORCH_GBPS TORCH_US

COPY_GBPS: a device-to-device copy of the matrix's M x N x 4 bytes, read + written counted (what
"the copy bandwidth" means in issue 19); TORCH_GBPS: the bytes torch's sum must move (the
matrix read, the M sums written) over its time. torch's result is checked against an f64 sum."""
import sys

import torch

from peer_timing import median_ms, print_device, print_peer, shapes, time_copy

SHAPES = ["8192x8192", "65536x1024", "1024x65536"]


def main():
    print_device()
    for m, n in shapes(sys.argv[1:], SHAPES):
        source = torch.randn(m * n, dtype=torch.float32, device="cuda")
        _, copy_gbps = time_copy(source)
        for layout in ("row-major", "column-major"):
            # Row-major: element (i, j) at i * N + j; column-major: at i + j * M.
            x = source.view(m, n) if layout == "row-major" else source.view(n, m).t()
            out = torch.empty(m, dtype=torch.float32, device="cuda")
            ms = median_ms(lambda: torch.sum(x, dim=1, out=out))
            exact = x.double().sum(dim=1)
            error = ((out.double() - exact).abs() / exact.abs().clamp_min(1.0)).max().item()
            if error > 1e-4:
                print(f"error: torch's {layout} sum differs from the f64 sum by {error:.3g}")
            gbps = (m * n * 4 + m * 4) / ms / 1e6
            print_peer(layout, m, n, f"{copy_gbps:.1f}", f"{gbps:.1f}", f"{ms * 1e3:.2f}")
        del source


if __name__ == "__main__":
    main()
