#!/usr/bin/env python3
"""norm_peers.py: what a user would run instead of Kiln's softmax, layer norm and RMS norm
(examples/softmax-f16.json, layernorm-f16.json, rmsnorm-f16.json): torch's eager operations and
torch.compile of the same functions, over the rows of an M x N f16 matrix stored row-major (f32
math inside, an f16 result), timed on the GPU in one process beside the device copy of the
matrix.

    python3 bench/peers/norm_peers.py [MxN ...]     # default 8192x8192

For each shape and operation it prints one line, median of 50 launches after warm-up (CUDA
events):

    peer OP M N COPY_GBPS TORCH_US COMPILE_US TORCH_GBPS COMPILE_GBPS

COPY_GBPS: a device-to-device copy of the matrix's M x N x 2 bytes, read + written counted;
*_GBPS: the bytes the operation must move (the matrix read and written, gamma and beta read
once) over its time. Each result is checked against the f64 formula (as Kiln's Command writes
it) within f16's tolerance, 1e-2.

KILN_EXPORTS="OP:MxN=DIR/libNAME.so ..." (scripts/gpu-norms.sh sets it): Kiln's kernels as an
application gets them (`kiln export --specialize --shared-library` of a sweep's winner, its C
ABI called through ctypes, its arguments in the order of DIR/NAME.manifest.json), checked the
same way and timed by the same median_ms in the same process, in ROUNDS (7) rounds that alternate
with torch.compile's, one line each (the medians of the rounds, then each round's figures):

    export OP M N KILN_US COMPILE_US KILN_ROUNDS COMPILE_ROUNDS   # rounds: comma-separated"""
import ctypes
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

from peer_timing import median_ms, print_device, print_peer, shapes, time_copy

EPS_LAYER, EPS_RMS = 1e-5, 1e-6
ROUNDS = 7


# The operations as a PyTorch user writes them (f16 in and out, the library's own f32 math).
def softmax(x, gamma, beta):
    return torch.softmax(x, dim=-1)


def layernorm(x, gamma, beta):
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS_LAYER)


def rmsnorm(x, gamma, beta):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), gamma, EPS_RMS)
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS_RMS) * gamma.float()).half()


# The f64 formulas of the Commands.
def exact(op, x, gamma, beta):
    xd, g, b = x.double(), gamma.double(), beta.double()
    if op == "softmax":
        e = torch.exp(xd - xd.max(-1, keepdim=True).values)
        return e / e.sum(-1, keepdim=True)
    if op == "layernorm":
        d = xd - xd.mean(-1, keepdim=True)
        return d * torch.rsqrt(d.pow(2).mean(-1, keepdim=True) + EPS_LAYER) * g + b
    return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + EPS_RMS) * g


OPS = {"softmax": (softmax, 0), "layernorm": (layernorm, 2), "rmsnorm": (rmsnorm, 1)}


def exported():
    """{(op, m, n): the path of its library} from KILN_EXPORTS."""
    found = {}
    for item in os.environ.get("KILN_EXPORTS", "").split():
        key, path = item.split("=", 1)
        op, shape = key.split(":")
        m, n = shape.lower().split("x")
        found[op, int(m), int(n)] = path
    return found


def exported_function(path, tensors, scalars):
    """A function that launches the exported kernel of `path` on the current stream with the
    tensors and scalars named as its manifest's parameters, and raises on a failed launch."""
    library = ctypes.CDLL(path)
    name = os.path.basename(path)[len("lib"):-len(".so")]
    with open(os.path.join(os.path.dirname(path), name + ".manifest.json")) as f:
        manifest = json.load(f)
    types = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "f32": ctypes.c_float}
    argtypes, values = [ctypes.c_void_p], [None]
    for p in manifest["parameters"]:
        if p["kind"] == "pointer":
            argtypes.append(ctypes.c_void_p)
            values.append(tensors[p["name"]].data_ptr())
        else:
            argtypes.append(types[p["type"]])
            values.append(scalars[p["name"]])
    launch = getattr(library, name + "_launch")
    launch.argtypes = argtypes
    error = getattr(library, name + "_error")
    error.restype = ctypes.c_char_p

    def run():
        values[0] = torch.cuda.current_stream().cuda_stream
        if launch(*values) != 0:
            raise RuntimeError(error().decode())

    return run


def main():
    print_device(f"torch {torch.__version__}")
    exports = exported()
    for m, n in shapes(sys.argv[1:], ["8192x8192"]):
        x = torch.randn(m, n, dtype=torch.float16, device="cuda")
        gamma = (1 + 0.1 * torch.randn(n, device="cuda")).half()
        beta = (0.1 * torch.randn(n, device="cuda")).half()
        _, copy_gbps = time_copy(x)
        for name, (fn, vectors) in OPS.items():
            compiled = torch.compile(fn)
            reference = exact(name, x, gamma, beta)
            for label, f in (("torch", fn), ("torch.compile", compiled)):
                y = f(x, gamma, beta)
                error = ((y.double() - reference).abs() / reference.abs().clamp_min(1.0)).max().item()
                if error > 1e-2:
                    print(f"error: {label} {name} differs from the f64 formula by {error:.3g}")
            eager_ms = median_ms(lambda: fn(x, gamma, beta))
            compiled_ms = median_ms(lambda: compiled(x, gamma, beta))
            moved = 2 * m * n * 2 + vectors * n * 2
            print_peer(name, m, n, f"{copy_gbps:.1f}", f"{eager_ms * 1e3:.2f}",
                       f"{compiled_ms * 1e3:.2f}", f"{moved / eager_ms / 1e6:.1f}",
                       f"{moved / compiled_ms / 1e6:.1f}")
            if (name, m, n) in exports:
                y = torch.empty_like(x)
                eps = EPS_LAYER if name == "layernorm" else EPS_RMS
                kiln = exported_function(exports[name, m, n],
                                         {"X": x, "G": gamma, "B": beta, "Y": y},
                                         {"eps": eps, "M": m, "N": n})
                kiln()
                torch.cuda.synchronize()
                error = ((y.double() - reference).abs() / reference.abs().clamp_min(1.0)).max().item()
                if error > 1e-2:
                    print(f"error: Kiln's exported {name} differs from the f64 formula by {error:.3g}")
                # Alternating rounds, so that a drift of the clocks or of the memory's
                # temperature in the run falls on both sides alike.
                rounds = {"kiln": [], "compile": []}
                for _ in range(ROUNDS):
                    rounds["kiln"].append(median_ms(kiln) * 1e3)
                    rounds["compile"].append(median_ms(lambda: compiled(x, gamma, beta)) * 1e3)
                print("export", name, m, n,
                      *(f"{statistics.median(rounds[side]):.2f}" for side in ("kiln", "compile")),
                      *(",".join(f"{us:.2f}" for us in rounds[side]) for side in ("kiln", "compile")))
        del x


if __name__ == "__main__":
    main()
