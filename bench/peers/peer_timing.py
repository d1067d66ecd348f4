"""peer_timing.py: how every bench/peers script times its baselines, in one place, so that Kiln's
figures and the peers' are measured the same way in every gpu-*.sh run.

- median_ms: the median of CUDA-event timings after a warm-up (one launch at a time), each
  launch after a read through L2 (read_l2_through), as Kiln's DeviceRun times its kernels
  (`kiln run`, `kiln tune`): L2 then holds no dirty lines of the last launch, whose write-back
  a kernel would pay (a write before each launch cost a 100 us row sum 4-5 us on the H100;
  bench/results/2026-11-26-h100-rowsum-timing.md), and none of its input. Then a wait on the GPU
  (host_ahead) that lets the host queue the launch before the start event is reached, so that
  what is timed is the GPU's work alone and not the host's time to launch it (a torch.compile'd
  function spends tens of microseconds in its guards before its kernel is queued: its layer
  norm, 86 us on the GPU by ncu, measured 95-143 us in one session without the wait);
- bench_ms: triton.testing.do_bench's median (Triton imported only here, when asked for, so that
  a caller can set TRITON_CACHE_DIR first and the torch-only peers run without it);
- time_copy: the device-to-device copy of a tensor's bytes, read + write counted: "the copy
  bandwidth" the issues hold Kiln's memory-bound kernels to;
- shapes: the MxN arguments of a script;
- print_device, print_peer: the lines the scripts' tables read ("device: ..." and
  "peer FIELD ...", one space between fields)."""
import torch


_l2_buffer = None


def read_l2_through():
    """Reads eight times the L2's bytes (zeros, written once) before each launch, as DeviceRun
    reads twice with its own kernel. After an amax of twice, a Kiln kernel called from here
    still found about 10 MB of its 128 MB input in L2 (ncu; its layer norm 85.0 us), torch.
    compile's none; after eight times Kiln's took 87.5-87.8 us, and torch.compile's the same as
    after twice, 87.5-87.8 (bench/results/2026-11-27-h100-tenth-layernorm.md)."""
    global _l2_buffer
    if _l2_buffer is None:
        l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        _l2_buffer = torch.zeros(max(8 * l2 // 4, 1), dtype=torch.float32, device="cuda")
        _l2_buffer.amax()
    _l2_buffer.amax()


def host_ahead(microseconds=200):
    """Queues a kernel that spins for about `microseconds` (at up to 2 GHz) on the current stream:
    the host queues what follows while it runs, so that an event recorded after it and the
    launches after that start back to back on the GPU, however long the host takes to launch
    them. Kiln's DeviceRun launches from C++ in a few microseconds, well within the read of
    2 x L2 before it; a Python peer may take longer."""
    torch.cuda._sleep(int(microseconds * 2000))


def median_ms(fn, runs=50, warmup=5):
    """The median time of fn in ms over `runs` launches, each timed with CUDA events after a read
    of twice the L2's bytes and host_ahead()."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        read_l2_through()
        host_ahead()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def bench_ms(fn, **options):
    """triton.testing.do_bench's median time of fn in ms (options: warmup, rep, in ms)."""
    import triton.testing

    return triton.testing.do_bench(fn, return_mode="median", **options)


def time_copy(source):
    """The device copy of `source` into a new tensor: (median ms, GB/s with read + write)."""
    target = torch.empty_like(source)
    ms = median_ms(lambda: target.copy_(source))
    del target
    return ms, 2 * source.numel() * source.element_size() / ms / 1e6


def shapes(args, default):
    """(M, N) for each "MxN" of args, or of default where args is empty."""
    for a in args or default:
        m, n = a.lower().split("x")
        yield int(m), int(n)


def print_device(*details):
    print(" ".join([f"device: {torch.cuda.get_device_name()}", *details]))


def print_peer(*fields):
    """One row of a peer table: "peer" and the fields; the caller formats the numbers."""
    print("peer", *fields)
