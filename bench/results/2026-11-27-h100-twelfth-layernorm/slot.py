# slot.py: the held winner (.ab/v12/base.ptx) with an exchange scratch of one slot a warp (lanes
# 0 and 1 of each warp store its pair; 8 bytes a warp, 64 a workgroup) instead of one a
# workitem (2048 bytes). Writes .ab/v12/slot.ptx/.cubin and lib/slot.so (64 bytes of scratch).
import re, subprocess
p = open(".ab/v12/base.ptx").read()
old_store = """    mul.lo.s64 %rd44, %rd13, 8;
    mov.u32 %b19, kiln_shared;
    cvt.u32.u64 %b20, %rd44;
    add.u32 %b21, %b19, %b20;
    st.shared.b32 [%b21], %f361;"""
new_store = """    mul.lo.s64 %rd44, %rd13, 8;
    .reg .b64 %sc<5>;
    .reg .pred %psc;
    shr.u64 %sc0, %rd13, 5;
    mul.lo.s64 %sc1, %sc0, 8;
    and.b64 %sc2, %rd13, 1;
    mul.lo.s64 %sc3, %sc2, 4;
    add.s64 %sc4, %sc1, %sc3;
    setp.lt.u64 %psc, %rd43, 2;
    mov.u32 %b19, kiln_shared;
    cvt.u32.u64 %b20, %sc4;
    add.u32 %b21, %b19, %b20;
    @%psc st.shared.b32 [%b21], %f361;"""
assert old_store in p
p = p.replace(old_store, new_store)
old_reads = ["    mul.lo.s64 %rd47, %rd46, 8;", "    mul.lo.s64 %rd49, %rd48, 8;"]
new_reads = ["    mul.lo.s64 %rd47, %rd45, 8;", "    mul.lo.s64 %rd49, %rd45, 8;\n    add.s64 %rd49, %rd49, 4;"]
for a, b in zip(old_reads, new_reads):
    assert p.count(a) == 1, a
    p = p.replace(a, b)
open(".ab/v12/slot.ptx", "w").write(p)
r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", ".ab/v12/slot.ptx", "-o", ".ab/v12/slot.cubin"], capture_output=True, text=True)
print(r.returncode, re.search(r"Used (\d+) registers", r.stderr).group(1) if r.returncode == 0 else r.stderr[-500:])
import os
env = dict(os.environ, KILN_SHARED="64")
subprocess.run(["python3", ".ab/splice.py", ".ab/x/ln_capi.c", ".ab/v12/slot.cubin", ".ab/v12/slot.c"], check=True, env=env)
assert "kiln_shared_bytes = 64u" in open(".ab/v12/slot.c").read()
subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-I.ab/x", "-o", ".ab/v12/lib/slot.so", ".ab/v12/slot.c", "-ldl", "-pthread"], check=True)
