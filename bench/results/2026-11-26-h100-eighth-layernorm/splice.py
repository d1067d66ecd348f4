# splice.py CAPI_C CUBIN OUT_C: the exported C ABI with another cubin in place of its own.
import re, sys
c = open(sys.argv[1]).read()
data = open(sys.argv[2], "rb").read() + b"\0"
body = ",\n".join(", ".join(f"0x{b:02x}" for b in data[i:i + 16]) for i in range(0, len(data), 16))
start = c.index("static const unsigned char kiln_code[] = {")
end = c.index("};", start)
c = c[:start] + "static const unsigned char kiln_code[] = {\n" + body + "\n" + c[end:]
open(sys.argv[3], "w").write(c)
if len(sys.argv) > 4:  # a block of another size: its threads and scratch
    threads = int(sys.argv[4])
    c = open(sys.argv[3]).read()
    c = c.replace("kiln_block[3] = {256u, 1u, 1u}", f"kiln_block[3] = {{{threads}u, 1u, 1u}}")
    c = c.replace("kiln_shared_bytes = 2048u", f"kiln_shared_bytes = {threads * 8}u")
    open(sys.argv[3], "w").write(c)
if len(sys.argv) > 5:  # a preferred shared memory carveout, in percent
    c = open(sys.argv[3]).read()
    anchor = "    kiln_loaded[slot].context = context;"
    c = c.replace(anchor, f"    kiln_cuda.cuFuncSetAttribute(*function, 9, {int(sys.argv[5])});\n" + anchor, 1)
    open(sys.argv[3], "w").write(c)
