# Hand-edited variants of the layer norm winner's PTX, for timing on the GPU.
import re, sys

REG = re.compile(r"%(rd|fd|f|b|h|p)(\d+)")


def literal_sizes(p):
    p = p.replace("ld.param.s64 %rd8, [param_M];", "mov.s64 %rd8, 8192;")
    return p.replace("ld.param.s64 %rd9, [param_N];", "mov.s64 %rd9, 8192;")


def dests(line):
    t = line.strip()
    if not t or t.endswith(":") or t.startswith(("st.", "bra", "bar", "trap", "ret", "@")) and not t.startswith("@!") and t.split()[1:2] and t.split()[1].startswith("st"):
        return []
    if t.startswith("@"):
        t = t.split(None, 1)[1]
    if t.startswith(("st.", "bra", "bar", "trap", "ret", "shfl") ) and not t.startswith("shfl"):
        return []
    ops = t.split(None, 1)
    if len(ops) < 2:
        return []
    first = ops[1]
    if first.startswith("{"):
        return REG.findall(first[: first.index("}")])
    m = REG.match(first)
    return [m.groups()] if m else []


def renamed(body, offset):
    # registers whose first appearance in body is a definition get fresh numbers
    seen, fresh = set(), set()
    for line in body.split("\n"):
        d = [f"{a}{n}" for a, n in dests(line)]
        uses = [f"{a}{n}" for a, n in REG.findall(line)]
        for u in uses:
            if u in d and u not in seen:
                fresh.add(u)
            seen.add(u)
    return REG.sub(lambda m: f"%{m.group(1)}{int(m.group(2)) + offset}" if m.group(1) + m.group(2) in fresh else m.group(0), body)


def unrolled(p, times=2):
    for k in [int(k) for k in re.findall(r"^\$loop_(\d+):", p, re.M)]:
        start = p.index(f"$loop_{k}:\n")
        end = p.index(f"$done_{k + 1}:\n")
        lines = p[start + len(f"$loop_{k}:\n"):end].split("\n")
        cut = next(i for i, l in enumerate(lines) if f"bra $done_{k + 1}" in l)
        core = "\n".join(l for l in lines[cut + 1:] if f"bra.uni $loop_{k}" not in l)
        copies = "".join(renamed(core, 1000 * i) if i else core for i in range(times))
        p = p[:start] + copies + p[end + len(f"$done_{k + 1}:\n"):]
    p = re.sub(r"(\.reg \.\w+ %\w+)<(\d+)>", lambda m: f"{m.group(1)}<{int(m.group(2)) + 1000 * times}>", p)
    return p


def stores_last(p, marker="$loop_4:", end="$done_5:"):
    # in the region after marker (the store pass), every store after all of its loads
    head, body = p.split(marker, 1)
    body, tail = body.split(end, 1) if end else (body, "")
    lines = body.split("\n")
    stores = [l for l in lines if "st.global" in l]
    rest = [l for l in lines if "st.global" not in l]
    last = max(i for i, l in enumerate(rest) if "cvt.rn.f16.f32" in l or ("mov.b32 %b" in l and "{" in l))
    rest = rest[: last + 1] + stores + rest[last + 1:]
    return head + marker + "\n".join(rest) + (end + tail if end else "")


def stores_last_unrolled(p):
    # the unrolled store pass follows the last bar.sync
    i = p.rindex("bar.sync 0;")
    return p[:i] + stores_last(p[i:], marker="bar.sync 0;", end="")


if __name__ == "__main__":
    src = open(sys.argv[1]).read()
    out = sys.argv[2]
    lit = literal_sizes(src)
    v = {"base": src, "lit": lit, "late": stores_last(src), "litlate": stores_last(lit),
         "unroll": unrolled(lit), "unrolllate": stores_last_unrolled(unrolled(lit))}
    for k, p in v.items():
        open(f"{out}/{k}.ptx", "w").write(p)


def nc(p):
    # gamma's and beta's loads (addresses from %rd3, %rd5) read-only: ld.global.nc
    lines = p.split("\n")
    ro = set()
    for i, l in enumerate(lines):
        m = re.match(r"\s*add\.s64 (%rd\d+), %rd[35], ", l)
        if m:
            ro.add(m.group(1))
        m = re.match(r"(\s*)ld\.global\.v4\.b32 (\{[^}]*\}), \[(%rd\d+)\];", l)
        if m and m.group(3) in ro:
            lines[i] = f"{m.group(1)}ld.global.nc.v4.b32 {m.group(2)}, [{m.group(3)}];"
    return "\n".join(lines)


if __name__ == "__main__":
    lit = literal_sizes(open(sys.argv[1]).read())
    v = {"unrollchunk": unrolled(stores_last(lit)), "unrollnc": nc(unrolled(lit)), "litnc": nc(lit)}
    for k, p in v.items():
        open(f"{sys.argv[2]}/{k}.ptx", "w").write(p)
