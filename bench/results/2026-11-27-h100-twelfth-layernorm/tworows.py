# tworows.py: a hand-made layer norm of two rows a workgroup from .ab/v12/SRC.ptx (one row a
# workgroup): each workitem takes the same columns of rows 2w and 2w + 1, both rows' loads
# issued before either exchange, one barrier pair for both (the second row's scratch 2048 bytes
# on), and gamma and beta loaded once for both rows. Writes .ab/v12/NAME.ptx/.cubin and
# .ab/v12/NAME.c (the export's C ABI: M / 2 workgroups, 4096 bytes of shared memory).
import re, subprocess, sys

src, name, minblocks = sys.argv[1], sys.argv[2], sys.argv[3]
share = len(sys.argv) < 5 or sys.argv[4] != "own"
text = open(f".ab/v12/{src}.ptx").read()
head, body = text.split("{\n", 1)
decl = re.findall(r"    \.reg \.(\w+) %(\w+)<(\d+)>;\n", body)
counts = {prefix: int(n) for _, prefix, n in decl}
body = re.sub(r"    \.reg [^\n]*\n", "", body)
body = body.rsplit("    ret;", 1)[0]
lines = body.strip("\n").split("\n")
cut = next(i for i, l in enumerate(lines) if l.strip() == "cvt.u64.u32 %rd14, %b2;") + 1
prologue, rest = lines[:cut], lines[cut:]
bars = [i for i, l in enumerate(rest) if l.strip() == "bar.sync 0;"]
s0, s1, s2 = rest[:bars[0]], rest[bars[0] + 1:bars[1]], rest[bars[1] + 1:]

REG = re.compile(r"%(rd|b|h|f|p)(\d+)\b")
defined = set()
for l in prologue:
    m = re.match(r"\s+(?:@!?%p\d+ )?[\w.:]+ (%\w+)", l)
    if m:
        defined.add(m.group(1))
defined.discard("%rd12")  # the row: the second row's own register

def renamed(l):
    return REG.sub(lambda m: m.group(0) if m.group(0) in defined
                   else f"%{m.group(1)}{int(m.group(2)) + counts[m.group(1)]}", l)

def second(seg):
    out = []
    for l in seg:
        r = renamed(l)
        out.append(r)
        m = re.match(r"\s+mov\.u32 (%b\d+), kiln_shared;", r)
        if m:
            out.append(f"    add.u32 {m.group(1)}, {m.group(1)}, 2048;")
    return out

def chunks(seg):
    out, cur = [], []
    for l in seg:
        cur.append(l)
        if l.strip().startswith("st.global"):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out

GB = re.compile(r"(\s+)ld\.global\.L1::evict_last\.v4\.b32 \{([^}]*)\}, \[[^\]]*\];")
def shared_gamma_beta(seg_b):
    out = []
    for l in seg_b:
        m = GB.match(l)
        if m:
            for r in [x.strip() for x in m.group(2).split(",")]:
                t, n = REG.match(r).groups()
                out.append(f"{m.group(1)}mov.b32 {r}, %{t}{int(n) - counts[t]};")
        else:
            out.append(l)
    return out

row = [i for i, l in enumerate(prologue) if l.strip() == "cvt.u64.u32 %rd12, %b0;"][0]
extra = counts["rd"] * 2
prologue[row:row + 1] = [f"    cvt.u64.u32 %rd{extra}, %b0;", f"    shl.b64 %rd12, %rd{extra}, 1;",
                         f"    add.s64 %rd{12 + counts['rd']}, %rd12, 1;"]
out = prologue + s0 + second(s0) + ["    bar.sync 0;"] + s1 + second(s1) + ["    bar.sync 0;"]
ca, cb = chunks(s2), chunks(s2)
for a, b in zip(ca, cb):
    out += a + (shared_gamma_beta(second(b)) if share else second(b))
decls = [f"    .reg .{t} %{p}<{int(n) * 2 + (1 if p == 'rd' else 0)}>;" for t, p, n in decl]
head = re.sub(r"\.minnctapersm \d+\n", f".minnctapersm {minblocks}\n" if minblocks != "0" else "", head)
ptx = head + "{\n" + "\n".join(decls) + "\n" + "\n".join(out) + "\n    ret;\n}\n"
open(f".ab/v12/{name}.ptx", "w").write(ptx)
r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f".ab/v12/{name}.ptx", "-o", f".ab/v12/{name}.cubin"],
                   capture_output=True, text=True)
regs = re.search(r"Used (\d+) registers", r.stderr)
spill = re.search(r"(\d+) bytes spill stores", r.stderr)
print(name, r.returncode, regs.group(1) if regs else r.stderr[-600:], "spill", spill.group(1) if spill else "?")
