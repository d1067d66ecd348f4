# tri.py: the HOLD=0 layer norms (.ab/hA/ln.ptx: rows read again in each pass) with torch.compile's
# Triton cache hints: the first pass's X .L1::evict_last with an L2 evict_last policy, the
# store pass's X .L1::evict_first with an L2 evict_first policy, gamma and beta .L1::evict_last
# with an L2 evict_last policy ("t1"); "t2" the same without the L2 policy on gamma and beta;
# "t3" without any L1 hint on X (only the L2 policies). Libraries in .ab/v12/lib/hA_t1.so etc.
import re, subprocess, sys, os

def variant(p, tag):
    pol = ("    .reg .b64 %pl, %pf;\n    createpolicy.fractional.L2::evict_last.b64 %pl, 1.0;\n"
           "    createpolicy.fractional.L2::evict_first.b64 %pf, 1.0;\n")
    p = p.replace("    mov.s64 %rd10, 8192;", pol + "    mov.s64 %rd10, 8192;", 1)
    first = re.compile(r"ld\.global\.L1::evict_last\.(v\d\.b32) (\{[^}]*\}), (\[[^\]]*\]);")
    second = re.compile(r"ld\.global\.L1::no_allocate\.(v\d\.b32) (\{[^}]*\}), (\[[^\]]*\]);")
    bar = p.index("bar.sync 0;")
    head, tail = p[:bar], p[bar:]
    x1 = "L1::evict_last." if tag != "t3" else ""
    x2 = "L1::evict_first." if tag != "t3" else ""
    head = first.sub(lambda m: f"ld.global.{x1}L2::cache_hint.{m.group(1)} {m.group(2)}, {m.group(3)}, %pl;", head)
    tail = second.sub(lambda m: f"ld.global.{x2}L2::cache_hint.{m.group(1)} {m.group(2)}, {m.group(3)}, %pf;", tail)
    if tag != "t2":  # gamma and beta, after the barriers
        tail = first.sub(lambda m: f"ld.global.L1::evict_last.L2::cache_hint.{m.group(1)} {m.group(2)}, {m.group(3)}, %pl;", tail)
    return head + tail

for geom in sys.argv[1:]:
    src = open(f".ab/h{geom}/ln.ptx").read()
    for tag in ("t0", "t1", "t2", "t3"):
        p = src if tag == "t0" else variant(src, tag)
        name = f"h{geom}_{tag}"
        open(f".ab/v12/{name}.ptx", "w").write(p)
        r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f".ab/v12/{name}.ptx", "-o", f".ab/v12/{name}.cubin"], capture_output=True, text=True)
        print(name, r.returncode, re.search(r"Used (\d+) registers", r.stderr).group(1) if r.returncode == 0 else r.stderr[-400:],
              p.count("cache_hint"), p.count("no_allocate"))
        subprocess.run(["python3", ".ab/splice.py", f".ab/h{geom}/ln_capi.c", f".ab/v12/{name}.cubin", f".ab/v12/{name}.c"], check=True)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", f"-I.ab/h{geom}", "-o", f".ab/v12/lib/{name}.so", f".ab/v12/{name}.c", "-ldl", "-pthread"], check=True)
