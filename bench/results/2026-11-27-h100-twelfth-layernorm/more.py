# more.py: X loaded .L1::evict_first / .L1::evict_unchanged; gamma and beta kept in L2 by an
# evict_last policy; from .ab/v12/base.ptx.
import re, subprocess
src = open(".ab/v12/base.ptx").read()
XL = re.compile(r"    ld\.global\.v4\.b32 (\{[^}]*\}), (\[%rd\d+\]);")
def x(hint):
    return lambda p: XL.sub(lambda m: f"    ld.global.L1::{hint}.v4.b32 {m.group(1)}, {m.group(2)};", p)
def gbl2(p):
    p = p.replace("    mov.s64 %rd10, 8192;", "    .reg .b64 %gpol;\n    createpolicy.fractional.L2::evict_last.b64 %gpol, 1.0;\n    mov.s64 %rd10, 8192;", 1)
    return re.sub(r"ld\.global\.L1::evict_last\.v4\.b32 (\{[^}]*\}), (\[%rd\d+\]);",
                  r"ld.global.L1::evict_last.L2::cache_hint.v4.b32 \1, \2, %gpol;", p)
vs = {"xef1": x("evict_first"), "xeu": x("evict_unchanged"), "gbl2": gbl2,
      "xef1gbl2": lambda p: gbl2(x("evict_first")(p))}
for name, f in vs.items():
    p = f(src)
    assert p != src
    open(f".ab/v12/{name}.ptx", "w").write(p)
    r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f".ab/v12/{name}.ptx", "-o", f".ab/v12/{name}.cubin"], capture_output=True, text=True)
    print(name, r.returncode, re.search(r"Used (\d+) registers", r.stderr).group(1) if r.returncode == 0 else r.stderr[-300:])
