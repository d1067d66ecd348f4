# h2.py: the layer norm's epilogue in f16x2: each pair of outputs (d * rstd) packed to f16x2 and
# fma.rn.f16x2 with gamma's and beta's words as loaded, instead of six f32 conversions and four
# f32 products a pair. Reads .ab/v12/NAME.ptx, writes NAMEh2.ptx and .cubin.
import re, subprocess, sys

def rewrite(p):
    lines = p.split("\n")
    defs = {}
    for i, l in enumerate(lines):
        m = re.match(r"\s+(\S+) (%\w+), (.*);$", l)
        if m:
            defs[m.group(2)] = (m.group(1), [o.strip() for o in m.group(3).split(",")])
        m = re.match(r"\s+mov\.b32 \{(%h\d+), (%h\d+)\}, (%b\d+);", l)
        if m:
            defs[m.group(1)] = ("half", [m.group(3), "0"])
            defs[m.group(2)] = ("half", [m.group(3), "1"])

    def through_moves(r):
        while r in defs and defs[r][0] == "mov.f32":
            r = defs[r][1][0]
        return r

    def half_of(f):  # an f32 converted from a half of a loaded word: (word, index)
        f = through_moves(f)
        op, args = defs[f]
        assert op == "cvt.f32.f16", (f, op)
        return tuple(defs[args[0]][1])

    def element(h):  # cvt.rn.f16.f32 h, out: out = (d * rstd) * g + b
        op, args = defs[h]
        assert op == "cvt.rn.f16.f32"
        op, (prod, beta) = defs[through_moves(args[0])]
        assert op == "add.f32"
        op, (scaled, gamma) = defs[through_moves(prod)]
        assert op == "mul.f32"
        return through_moves(scaled), half_of(gamma), half_of(beta)

    out, n = [], 0
    for l in lines:
        m = re.match(r"(\s+)mov\.b32 (%b\d+), \{(%h\d+), (%h\d+)\};", l)
        if m:
            lo, hi = element(m.group(3)), element(m.group(4))
            assert lo[1][0] == hi[1][0] and lo[1][1] == "0" and hi[1][1] == "1"
            assert lo[2][0] == hi[2][0] and lo[2][1] == "0" and hi[2][1] == "1"
            out += [f"{m.group(1)}cvt.rn.f16x2.f32 %pk{n}, {hi[0]}, {lo[0]};",
                    f"{m.group(1)}fma.rn.f16x2 {m.group(2)}, %pk{n}, {lo[1][0]}, {lo[2][0]};"]
            n += 1
        else:
            out.append(l)
    text = "\n".join(out)
    i = text.index("    mov.s64 %rd10, 8192;")
    return text[:i] + f"    .reg .b32 %pk<{n}>;\n" + text[i:], n

for name in sys.argv[1:]:
    p, n = rewrite(open(f".ab/v12/{name}.ptx").read())
    open(f".ab/v12/{name}h2.ptx", "w").write(p)
    r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f".ab/v12/{name}h2.ptx", "-o", f".ab/v12/{name}h2.cubin"],
                       capture_output=True, text=True)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    print(name + "h2", n, "pairs", r.returncode, regs.group(1) if regs else r.stderr[-400:])
