# hoist.py: variants of .ab/x/ln.ptx with gamma and beta's loads (and their address arithmetic)
# moved before the first or the second barrier, for the first K chunks; with and without
# .minnctapersm.
import re, subprocess

src = open(".ab/x/ln.ptx").read().split("\n")

def blocks(lines):
    """(start, end) of each gamma/beta load with the address arithmetic right before it."""
    out = []
    for i, l in enumerate(lines):
        if "ld.global.L1::evict_last" in l:
            j = i
            while re.match(r"\s+(mul\.lo|add)\.s64 %rd\d+,", lines[j - 1]):
                j -= 1
            out.append((j, i + 1))
    return out

def hoist(lines, chunks, barrier):
    bs = blocks(lines)[: 2 * chunks]
    moved = [l for a, b in bs for l in lines[a:b]]
    drop = {k for a, b in bs for k in range(a, b)}
    rest = [l for k, l in enumerate(lines) if k not in drop]
    at = [k for k, l in enumerate(rest) if l.strip() == "bar.sync 0;"][barrier]
    return rest[:at] + moved + rest[at:]

variants = {}
for barrier, tag in ((0, "A"), (1, "B")):
    for chunks in (1, 2, 4):
        variants[f"gb{tag}{chunks}"] = hoist(src, chunks, barrier)
for name in list(variants):
    variants[name + "m0"] = [l for l in variants[name] if not l.startswith(".minnctapersm")]
variants["m0"] = [l for l in src if not l.startswith(".minnctapersm")]
for name, lines in variants.items():
    open(f".ab/v12/{name}.ptx", "w").write("\n".join(lines))
    r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f".ab/v12/{name}.ptx", "-o", f".ab/v12/{name}.cubin"],
                       capture_output=True, text=True)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    print(name, r.returncode, regs.group(1) if regs else r.stderr[-300:], "spill", spill.group(1) if spill else "?")
