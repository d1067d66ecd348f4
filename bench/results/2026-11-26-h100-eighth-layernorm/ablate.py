import re, sys
sys.path.insert(0, ".ab")
from variants import *
src = open("/tmp/ex/unroll.ptx").read()

def no_gb(p):
    lines, ro, out = p.split("\n"), set(), []
    for l in lines:
        m = re.match(r"\s*add\.s64 (%rd\d+), %rd[35], ", l)
        if m: ro.add(m.group(1))
        m = re.match(r"(\s*)ld\.global\.v4\.b32 (\{[^}]*\}), \[(%rd\d+)\];", l)
        if m and m.group(3) in ro:
            out += [f"{m.group(1)}mov.b32 {r}, 0x3c003c00;" for r in m.group(2)[1:-1].split(", ")]
            continue
        out.append(l)
    return "\n".join(out)

def no_exchange(p):
    # shuffles and shared memory of the exchanges dropped: each workitem's own partials
    out = []
    for l in p.split("\n"):
        t = l.strip()
        if t.startswith(("shfl.sync", "bar.sync", "st.shared", "ld.shared")):
            m = re.match(r"(shfl\.sync\.bfly\.b32|ld\.shared\.b64) (%\w+), (%?\w+|\[%\w+\])", t)
            if m and t.startswith("shfl"):
                out.append(f"    mov.b32 {m.group(2)}, 0;"); continue
            if m and t.startswith("ld.shared"):
                out.append(f"    mov.f64 {m.group(2)}, 0d0000000000000000;"); continue
            continue
        out.append(l)
    return "\n".join(out)

def policies(p, first="L1::evict_last", second="L1::evict_first", gb="L1::evict_last"):
    head, tail = p.split("bar.sync 0;", 1)
    head = re.sub(r"createpolicy[^\n]*\n", "", head)
    head = re.sub(r"ld\.global\.L2::cache_hint\.v4\.b32 (\{[^}]*\}), \[([^\]]*)\], %rd\d+;", rf"ld.global.{first}.v4.b32 \1, [\2];", head)
    lines, ro, out = tail.split("\n"), set(), []
    for l in lines:
        m = re.match(r"\s*add\.s64 (%rd\d+), %rd[35], ", l)
        if m: ro.add(m.group(1))
        m = re.match(r"(\s*)ld\.global\.v4\.b32 (\{[^}]*\}), \[(%rd\d+)\];", l)
        if m:
            q = gb if m.group(3) in ro else second
            l = f"{m.group(1)}ld.global.{q}.v4.b32 {m.group(2)}, [{m.group(3)}];" if q else l
        out.append(l)
    return head + "bar.sync 0;" + "\n".join(out)

if False: v = {"nogb": no_gb(src), "noxchg": no_exchange(src), "nohint": policies(src, "", "", ""),
     "pol": policies(src), "polna": policies(src, "L1::evict_last", "L1::no_allocate", "L1::evict_last"),
     "gbonly": policies(src, "", "", "L1::evict_last")}
if False:
  for k, p in v.items():
    open(f"/tmp/ex/{k}.ptx", "w").write(p.replace("ld.global..v4", "ld.global.v4"))

def l2(p, first="L1::evict_last", second="L1::no_allocate", gb="L1::evict_last", second_l2=None):
    head, tail = p.split("bar.sync 0;", 1)
    head = re.sub(r"ld\.global\.L2::cache_hint\.v", f"ld.global.{first}.L2::cache_hint.v", head)
    lines, ro, out = tail.split("\n"), set(), []
    for l in lines:
        m = re.match(r"\s*add\.s64 (%rd\d+), %rd[35], ", l)
        if m: ro.add(m.group(1))
        m = re.match(r"(\s*)ld\.global\.(v\d)\.b32 (\{[^}]*\}), \[(%rd\d+)\];", l)
        if m:
            if m.group(4) in ro:
                l = f"{m.group(1)}ld.global.{gb}.{m.group(2)}.b32 {m.group(3)}, [{m.group(4)}];"
            elif second_l2:
                l = (f"{m.group(1)}createpolicy.fractional.L2::{second_l2}.b64 %rd999, 1.0;\n"
                     f"{m.group(1)}ld.global.{second}.L2::cache_hint.{m.group(2)}.b32 {m.group(3)}, [{m.group(4)}], %rd999;")
            else:
                l = f"{m.group(1)}ld.global.{second}.{m.group(2)}.b32 {m.group(3)}, [{m.group(4)}];"
        out.append(l)
    return head + "bar.sync 0;" + "\n".join(out)

if __name__ == "__main__":
    for k, p in {"polnaL2": l2(src), "polnaL2f": l2(src, second_l2="evict_first"),
                 "polefL2": l2(src, second="L1::evict_first"),
                 "polnaL2n": l2(src, second_l2="evict_normal"),
                 "polnaL2base": l2(literal_sizes(open("/tmp/ln/kiln_layernorm.ptx").read()))}.items():
        open(f"/tmp/ex/{k}.ptx", "w").write(p)
